#!/usr/bin/env python3
"""Makes the tiny models the embedded generator's tests use (tests/llm/embedded_*.cpp,
tests/ui/test_embedded_generation.cpp), at test time with transformers (nothing is committed):

  qwen2          the tiny random-weight Qwen2 of make_tiny_models.py (ChatML template): its
                 answers are garbage, which the pipeline must still handle
  qwen2-endless  the same weights without stop ids, so that it generates until max_tokens or the
                 context length: what cancel and crash tests need to catch it mid-generation

usage: make_embedded_fixtures.py OUT_DIR
"""
import json
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import make_tiny_models  # noqa: E402


def main():
    out = pathlib.Path(sys.argv[1])
    folder = make_tiny_models.make(out, "qwen2", make_tiny_models.MODELS["qwen2"])
    endless = out / "qwen2-endless"
    shutil.rmtree(endless, ignore_errors=True)
    shutil.copytree(folder, endless)
    for name, drop in (("config.json", "eos_token_id"), ("tokenizer_config.json", "eos_token")):
        data = json.loads((endless / name).read_text())
        data.pop(drop, None)
        (endless / name).write_text(json.dumps(data, indent=1))
    (endless / "generation_config.json").write_text(json.dumps({"eos_token_id": []}))
    print(f"embedded fixtures in {out}")


if __name__ == "__main__":
    main()
