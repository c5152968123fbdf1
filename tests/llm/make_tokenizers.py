#!/usr/bin/env python3
"""Makes the tokenizer test fixtures at test time (nothing is committed or downloaded).

For each byte-level BPE family (llama3, qwen2, gpt2 as in SmolLM2) it trains a small BPE with
Hugging Face `tokenizers` in that family's configuration (split pattern, ignore_merges,
normalizer, added tokens, post-processor), saves OUT/<family>/tokenizer.json, and writes
OUT/<family>/expected.jsonl: for each text of a hard corpus, the ids `tokenizers` gives with and
without special tokens, and the text after the family's normalizer (NFC for qwen2). tests/llm/test_tokenizer.cpp checks crucible's tokenizer against them.

usage: make_tokenizers.py OUT_DIR
"""
import json
import re
import pathlib
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from tokenizers import processors, trainers

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")

TRAINING = [
    "def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
    "    pid = tl.program_id(axis=0)\n    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
    "    mask = offsets < n_elements\n    tl.store(out_ptr + offsets, x + y, mask=mask)\n",
    "class ModelNew(nn.Module):\n    def forward(self, a, b):\n        return a + b\n",
    "The quick brown fox jumps over the lazy dog. It's 2024; we'll see 12345 items!",
    "Ünïcödé façade naïve café — «quotes» and “curly” ones… 日本語のテキスト、中文文本。",
    "Русский текст и ελληνικά γράμματα, עברית, العربية, हिन्दी, ខ្មែរ, 한국어 문장.",
    "emoji 👩‍💻 🚀🔥 and math ∑∫√π ≈ 3.14159, ½ ¾ Ⅻ ²³",
    "\t\ttabs\n\n\nnewlines\r\n\r\nwindows   spaces    and\u00a0nbsp\u3000ideographic",
    "I'M YOU'RE THEY'VE WE'LL HE'D SHE'S IT'T don't can't won't",
] * 20

CORPUS = [
    "", " ", "  ", "\n", "\r\n", "\t", "a", "Hello world", " Hello  world ", "Hello\n\nworld\n",
    "   leading and trailing   ", "x\n  \n  y", "line1\r\nline2\r\n\r\n  line3", "\t\tdef f():\n\t\treturn 1",
    "1 12 123 1234 12345 123456789 3.14159 1e-5 0x1F",
    "I'm you're they've we'll he'd she's IT'S I'M YOU'RE THEY'VE WE'LL HE'D 'tis",
    "'s 't 're 've 'm 'll 'd 'x ''s '", "don't!!! ...??? ---> <=> != == ** //",
    "def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n"
    "    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float('inf'))\n"
    "    x = x - tl.max(x, axis=0)\n    num = tl.exp(x)\n    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0))\n",
    "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n\n    def forward(self, x):  # fused\n        return x",
    "if (a&&b||!c) { x[i] = y[j] >> 2; } // done\n/* block */",
    "Ünïcödé façade naïve café — «quotes» “curly” ‘single’…",
    "日本語のテキスト、中文文本。한국어 문장. ខ្មែរ ภาษาไทย हिन्दी العربية עברית",
    "emoji 👩‍💻👨‍👩‍👧‍👦 🚀🔥 flags 🇫🇷🇯🇵 skin 👍🏽",
    "math ∑∫√π ≈ 3.14159, ½ ¾ Ⅻ ²³ ١٢٣ ۴۵۶ ०१२",
    "nbsp\u00a0here\u00a0\u00a0twice, ideographic\u3000space, en\u2002space, zwsp\u200bhere",
    "mixed \t \n \t\n  \n\n\t  end", "trailing newline spaces  \n   ", "!!!\n\n\nabc",
    "ſ 'ſ 'ſſ Kelvin K 'K", "\u00e9 precomposed", "e\u0301 decomposed cafe\u0301 A\u030a \u212b",
    "q\u0307\u0323 a\u0328\u0301 \u1e0b\u0323 \u0f73 \u1100\u1161\u11a8 \uac00\u11a8 \u0b47\u0b3e",
    "Hangul \u1112\u1161\u11ab\u1100\u1173\u11af and compatibility \ufb01 \u2460 stay", "\x00\x01\x7f control \x1b[0m",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "text<|endoftext|>more<|end_of_text|>and <|eot_id|> spaced <|im_end|>x",
    "<|im_start|><|im_start|>nested <|im_start|", "almost <|eot_id| and <|begin_of_text|>",
    "a <mask> b<mask>c   <mask>   d",
    "longwordwithoutspacesthatgoesonandonforeverandeveraaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    " " * 40 + "x" + "\n" * 10 + "y" + "\t" * 7,
]

SPECIAL_RE = "(<\\|[a-z_]+\\|>)"

FAMILIES = {
    "llama3": dict(pattern=LLAMA3, ignore_merges=True, nfc=False,
                   special=["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                            "<|end_header_id|>", "<|eot_id|>"], bos="<|begin_of_text|>"),
    "qwen2": dict(pattern=QWEN2, ignore_merges=False, nfc=True,
                  special=["<|endoftext|>", "<|im_start|>", "<|im_end|>"], bos=None),
    "gpt2": dict(pattern=None, ignore_merges=False, nfc=False,
                 special=["<|endoftext|>", "<|im_start|>", "<|im_end|>"], bos=None),
}


def build(cfg):
    tok = Tokenizer(models.BPE(ignore_merges=cfg["ignore_merges"]))
    if cfg["nfc"]:
        tok.normalizer = normalizers.NFC()
    if cfg["pattern"]:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(cfg["pattern"]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    else:  # SmolLM2: digits one by one, then GPT-2's own regex inside ByteLevel
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1200, special_tokens=cfg["special"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(TRAINING, trainer)
    if cfg["pattern"] is None:
        tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    if cfg["bos"]:
        bos_id = tok.token_to_id(cfg["bos"])
        tok.post_processor = processors.TemplateProcessing(
            single=f"{cfg['bos']} $A", special_tokens=[(cfg["bos"], bos_id)])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    # Training may reset model options; re-read the JSON with the family's ignore_merges.
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = cfg["ignore_merges"]
    return Tokenizer.from_str(json.dumps(data))


def normalized(tok, text):
    """The text as the normalizer leaves it, special tokens untouched (they are not normalized)."""
    if tok.normalizer is None:
        return text
    return "".join(tok.normalizer.normalize_str(piece) if i % 2 == 0 else piece
                   for i, piece in enumerate(re.split(SPECIAL_RE, text)))


def main():
    out = pathlib.Path(sys.argv[1])
    for family, cfg in FAMILIES.items():
        folder = out / family
        folder.mkdir(parents=True, exist_ok=True)
        tok = build(cfg)
        tok.save(str(folder / "tokenizer.json"))
        with open(folder / "expected.jsonl", "w", encoding="utf-8") as f:
            for text in CORPUS:
                row = {"text": text, "ids": tok.encode(text).ids,
                       "ids_plain": tok.encode(text, add_special_tokens=False).ids,
                       "normalized": normalized(tok, text)}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"tokenizer fixtures in {out}")


if __name__ == "__main__":
    main()
