"""Writes a copy of a KernelBench-style task with its module-level size constants capped (batch 3,
height/width 12, channels 8, groups 4, other sizes 48), so a CPU backend runs it in seconds.
The model and the rest of the file are unchanged. Usage: python3 synth_shrink.py TASK.py OUT.py"""
import re
import sys

CAPS = {"batch_size": 3, "height": 12, "width": 12, "channels": 8, "in_channels": 8,
        "num_groups": 4, "out_channels": 8}
SIZE_NAMES = {"dim", "dim1", "dim2", "features", "in_features", "out_features", "seq_len",
              "length", "m", "n", "k", "head_dim", "num_classes", "reduce_size"}


CHANNELS = {"channels", "in_channels", "out_channels"}


def capper(source):
    """The substitution for one file: channel counts stay multiples of a `groups` constant (which
    is capped with them), so a grouped convolution still divides its channels."""
    found = re.search(r"^groups = (\d+)$", source, flags=re.M)
    groups = min(int(found.group(1)), CAPS["channels"]) if found else 1

    def cap(match):
        name, value = match.group(1), int(match.group(2))
        if name == "groups":
            return f"groups = {groups}"
        limit = CAPS.get(name, 48 if name in SIZE_NAMES else None)
        if name in CHANNELS:
            limit = max(groups, limit // groups * groups)
        return f"{name} = {value if limit is None else min(value, limit)}"
    return cap


def main(task, out):
    with open(task, encoding="utf-8") as f:
        source = f.read()
    with open(out, "w", encoding="utf-8") as f:
        f.write(re.sub(r"^([a-z_0-9]+) = (\d+)$", capper(source), source, flags=re.M))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
