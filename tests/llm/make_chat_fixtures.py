#!/usr/bin/env python3
"""Renders conversations with the real chat templates of chat_templates/ through transformers' own
Jinja renderer (what apply_chat_template runs) and writes OUT/expected.json: for each template and
conversation, the text crucible's renderer (core/llm/chat_template.h) must produce.
tests/llm/test_chat_templates.cpp compares.

usage: make_chat_fixtures.py OUT_DIR
"""
import json
import pathlib
import sys

from transformers.utils.chat_template_utils import render_jinja_template

HERE = pathlib.Path(__file__).parent
CONVERSATIONS = [
    [{"role": "user", "content": "Write a Triton add kernel."}],
    [{"role": "system", "content": "  Be brief. "}, {"role": "user", "content": "hi\n"}],
    [{"role": "user", "content": "  Write a Triton kernel.  "}, {"role": "assistant", "content": "Sure."},
     {"role": "user", "content": "Now fuse it."}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "<think>\nplan\n</think>\n\nanswer"},
     {"role": "user", "content": "b"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "<think>\n\nplan\n</think>\n\n\nans"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "no reasoning here"}],
    [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"},
     {"role": "assistant", "content": "x<think>y</think>z</think>\nw"}, {"role": "user", "content": "u2"}],
]


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for path in sorted((HERE / "chat_templates").glob("*.jinja")):
        template = path.read_text(encoding="utf-8")
        for messages in CONVERSATIONS:
            # A conversation that ends with the assistant is a continuation: no generation prompt.
            generation = messages[-1]["role"] != "assistant"
            for thinking in (None, False):
                extra = {} if thinking is None else {"enable_thinking": thinking}
                rendered, _ = render_jinja_template(
                    conversations=[messages], chat_template=template, add_generation_prompt=generation,
                    bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", **extra)
                cases.append({"template": path.name, "messages": messages, "add_generation_prompt": generation,
                              "enable_thinking": thinking is None, "text": rendered[0]})
    (out / "expected.json").write_text(json.dumps({"templates": {p.name: p.read_text(encoding="utf-8")
                                                                 for p in (HERE / "chat_templates").glob("*.jinja")},
                                                   "cases": cases}, ensure_ascii=False, indent=1))
    print(f"{len(cases)} chat template cases in {out}")


if __name__ == "__main__":
    main()
