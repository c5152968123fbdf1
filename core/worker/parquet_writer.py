"""Writes JSON lines as a parquet file (`crucible tasks export --format verl`).

Usage: parquet_writer.py ROWS.jsonl OUT.parquet
Each line is one row; nested lists and objects become parquet lists and structs, as verl's
dataset reader (pandas over pyarrow) expects them. Crucible's C++ side makes the rows; this only
encodes them (there is no parquet writer for C++ in Debian 12).
"""
import json
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    import pyarrow as pa
    import pyarrow.parquet as pq
    with open(argv[0], encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    pq.write_table(pa.Table.from_pylist(rows), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
