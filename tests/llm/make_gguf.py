#!/usr/bin/env python3
"""Writes a small GGUF file with the `gguf` package (ggml's own Python writer) at test time:
metadata of every value type and one tensor per supported ggml type (F32, F16, BF16, Q4_0, Q4_1,
Q5_0, Q5_1 and Q8_0 from quantised random data, Q4_K and Q6_K from random blocks), plus expected.json with each tensor's
shape and the values `gguf`'s reference dequantiser gives. tests/llm/test_gguf.cpp compares.

usage: make_gguf.py OUT_DIR
"""
import json
import pathlib
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGUFWriter, quants


def random_blocks(rng, kind, rows):
    """Random K-quant super-blocks whose f16 scales are finite and modest."""
    size = {T.Q4_K: 144, T.Q6_K: 210}[kind]
    blocks = rng.integers(0, 256, size=(rows, size), dtype=np.uint8)
    scale = np.frombuffer(np.float16(0.01).tobytes(), dtype=np.uint8)
    for r in range(rows):
        if kind == T.Q4_K:  # d and dmin first
            blocks[r, 0:2] = scale
            blocks[r, 2:4] = np.frombuffer(np.float16(0.003).tobytes(), dtype=np.uint8)
        else:  # d last
            blocks[r, 208:210] = scale
    return blocks


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    writer = GGUFWriter(str(out / "tiny.gguf"), arch="llama")
    writer.add_uint32("test.u32", 4000000000)
    writer.add_int32("test.i32", -7)
    writer.add_float32("test.f32", 0.5)
    writer.add_bool("test.bool", True)
    writer.add_string("test.str", "héllo <|im_start|>")
    writer.add_uint64("test.u64", 2 ** 40)
    writer.add_array("test.tokens", ["a", "b c", "Ġd"])
    writer.add_array("test.scores", [0.25, -1.5])
    expected = {}

    def add(name, logical, kind, raw=None):
        if raw is None:
            raw = logical if kind in (T.F32, T.F16) else quants.quantize(logical, kind)
        if kind in (T.F32, T.F16):
            writer.add_tensor(name, raw)
            values = raw.astype(np.float32)
        else:
            writer.add_tensor(name, raw, raw_dtype=kind)
            values = quants.dequantize(raw, kind)
        expected[name] = {"shape": list(values.shape), "values": values.astype(np.float32).ravel().tolist()}

    add("f32", rng.standard_normal((3, 5)).astype(np.float32), T.F32)
    add("f16", rng.standard_normal((4, 8)).astype(np.float16), T.F16)
    add("bf16", rng.standard_normal((2, 16)).astype(np.float32), T.BF16)
    add("q8_0", rng.standard_normal((2, 64)).astype(np.float32), T.Q8_0)
    for kind in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1):
        add(kind.name.lower(), rng.standard_normal((3, 64)).astype(np.float32), kind)
    add("q4_k", None, T.Q4_K, raw=random_blocks(rng, T.Q4_K, 2))
    add("q6_k", None, T.Q6_K, raw=random_blocks(rng, T.Q6_K, 3))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    (out / "expected.json").write_text(json.dumps(expected))
    print(f"gguf fixture in {out}")


if __name__ == "__main__":
    main()
