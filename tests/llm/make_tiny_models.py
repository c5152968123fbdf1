#!/usr/bin/env python3
"""Makes tiny random-weight Hugging Face model folders at test time (nothing is committed).

One folder per architecture and flag set, each with config.json, safetensors weights,
tokenizer.json (a small BPE of the family, from make_tokenizers.py), tokenizer_config.json with
a chat template of the family, and generation_config.json:

  llama3      LlamaForCausalLM, Llama-3.1 rope scaling, GQA 4/2, untied head, Llama-3 template
  qwen2       Qwen2ForCausalLM, q/k/v bias, tied embeddings, ChatML with Qwen2.5's default system
  qwen3       Qwen3ForCausalLM, q/k norms, head_dim 32 != hidden/heads, ChatML with enable_thinking
  qwen3-bf16  the qwen3 weights stored as BF16 and sharded (model.safetensors.index.json)

usage: make_tiny_models.py OUT_DIR
"""
import json
import pathlib
import sys

import torch
import transformers

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import make_tokenizers  # noqa: E402

QWEN25_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if (message.role == 'user') or (message.role == 'system' and not loop.first) or (message.role == 'assistant') %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")
QWEN3_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}")
LLAMA3_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
    "{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}")

COMMON = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=4096, initializer_range=0.15)

MODELS = {
    "llama3": dict(family="llama3", cls="LlamaConfig", template=LLAMA3_TEMPLATE, eos="<|eot_id|>",
                   bos="<|begin_of_text|>",
                   extra=dict(rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                              rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                            "original_max_position_embeddings": 64})),
    "qwen2": dict(family="qwen2", cls="Qwen2Config", template=QWEN25_TEMPLATE, eos="<|im_end|>",
                  bos=None, extra=dict(rope_theta=1000000.0, tie_word_embeddings=True)),
    "qwen3": dict(family="qwen2", cls="Qwen3Config", template=QWEN3_TEMPLATE, eos="<|im_end|>",
                  bos=None, extra=dict(head_dim=32, rope_theta=1000000.0, tie_word_embeddings=False)),
}


def make(out, name, spec, dtype=torch.float32, shard=None, folder_name=None):
    folder = out / (folder_name or name)
    folder.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizers.build(make_tokenizers.FAMILIES[spec["family"]])
    tok.save(str(folder / "tokenizer.json"))
    vocab = (tok.get_vocab_size() + 63) // 64 * 64
    eos = tok.token_to_id(spec["eos"])
    config = getattr(transformers, spec["cls"])(vocab_size=vocab, eos_token_id=eos,
                                                **{**COMMON, **spec["extra"]})
    torch.manual_seed(1234)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with torch.no_grad():  # norms and biases start at 1 and 0; randomise them so they matter
        for pname, p in model.named_parameters():
            if "norm" in pname or pname.endswith("bias"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p) if "norm" in pname else 0.3 * torch.randn_like(p))
    model = model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True, max_shard_size=shard or "10GB")
    tok_config = {"chat_template": spec["template"], "eos_token": spec["eos"],
                  "tokenizer_class": "PreTrainedTokenizerFast"}
    if spec["bos"]:
        tok_config["bos_token"] = spec["bos"]
    (folder / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=1))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [eos]}))
    return folder


def main():
    out = pathlib.Path(sys.argv[1])
    for name, spec in MODELS.items():
        make(out, name, spec)
    make(out, "qwen3", MODELS["qwen3"], dtype=torch.bfloat16, shard="100KB", folder_name="qwen3-bf16")
    print(f"tiny models in {out}")


if __name__ == "__main__":
    main()
