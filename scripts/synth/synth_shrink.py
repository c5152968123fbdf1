"""Writes a copy of a KernelBench-style task with its module-level size constants capped (batch 3,
height/width 12, channels 8, groups 4, other sizes 48), so a CPU backend runs it in seconds.
The model and the rest of the file are unchanged. Usage: python3 synth_shrink.py TASK.py OUT.py"""
import re
import sys

CAPS = {"batch_size": 3, "height": 12, "width": 12, "channels": 8, "in_channels": 8,
        "num_groups": 4, "out_channels": 8}
SIZE_NAMES = {"dim", "dim1", "dim2", "features", "in_features", "out_features", "seq_len",
              "length", "m", "n", "k", "head_dim", "num_classes", "reduce_size"}


def cap(match):
    name, value = match.group(1), int(match.group(2))
    limit = CAPS.get(name, 48 if name in SIZE_NAMES else None)
    return f"{name} = {value if limit is None else min(value, limit)}"


def main(task, out):
    with open(task, encoding="utf-8") as f:
        source = f.read()
    with open(out, "w", encoding="utf-8") as f:
        f.write(re.sub(r"^([a-z_0-9]+) = (\d+)$", cap, source, flags=re.M))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
