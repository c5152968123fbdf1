"""crucible-model loading GGUF files: tiny random-weight models (make_tiny_models.py) converted at
test time (convert_to_gguf.py, llama.cpp's conversion with the `gguf` package) to F32, F16 and
Q8_0, against transformers.

The reference for a GGUF is the Hugging Face model of the same folder with the weights that
transformers' own GGUF loader reads from the file (its dequantiser and its reverse of llama.cpp's
q/k permutation, independent of ours). So every type is held to the folder tests' 1e-4: what
differs from the float32 folder is only the quantisation, which is the file's, not the engine's.
F32 files must also equal the folder itself."""
import pathlib
import sys

import pytest
import torch
import transformers
from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import convert_to_gguf  # noqa: E402
import make_tiny_models  # noqa: E402
import make_tokenizers  # noqa: E402
from engine_client import TOLERANCE, load  # noqa: E402

ARCHS = ["llama3", "qwen2", "qwen3"]
TYPES = ["F32", "F16", "Q8_0"]
# tokenizer.ggml.pre as llama.cpp's converter names these tokenizers.
PRE = {"llama3": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2"}
PROMPT = "def add_kernel(x_ptr, y_ptr):\n    pid = tl.program_id(0)  # café 日本"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("gguf")
    made = {}
    for arch in ARCHS:
        folder = make_tiny_models.make(out, arch, make_tiny_models.MODELS[arch])
        for kind in TYPES + ["Q4_1"]:
            made[arch, kind] = (folder, convert_to_gguf.convert(folder, out / f"{arch}-{kind}.gguf",
                                                                kind, PRE[arch]))
    return made


def hf(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def reference(folder, gguf_file):
    """The folder's model with the weights transformers reads from the GGUF file."""
    model = hf(folder)
    tensors = load_gguf_checkpoint(str(gguf_file), return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict({k: torch.as_tensor(v) for k, v in tensors.items()},
                                                strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    return model


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("arch", ARCHS)
def test_logits_match_the_dequantised_weights(models, engine, arch, kind):
    folder, gguf_file = models[arch, kind]
    info = load(engine, gguf_file)
    assert info["format"] == "gguf"
    config = transformers.AutoConfig.from_pretrained(folder)
    ours = info["config"]
    assert ours["architecture"] == config.architectures[0]
    assert (ours["layers"], ours["heads"], ours["kv_heads"], ours["head_dim"], ours["context_length"]) == (
        config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads,
        getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads,
        config.max_position_embeddings)
    assert ours["rope_theta"] == config.rope_theta
    assert ours["rms_eps"] == pytest.approx(config.rms_norm_eps, rel=1e-6)  # stored as float32
    assert ours["tie_word_embeddings"] == config.tie_word_embeddings
    assert info["parameters"] == sum(p.numel() for p in hf(folder).parameters())
    ids = engine.request("tokenize", text=PROMPT)["ids"]
    assert ids == transformers.AutoTokenizer.from_pretrained(folder)(PROMPT)["input_ids"]
    logits = torch.tensor(engine.request("logits", ids=ids)["logits"])
    with torch.no_grad():
        expected = reference(folder, gguf_file)(torch.tensor([ids])).logits[0]
        original = hf(folder)(torch.tensor([ids])).logits[0]
    assert (logits - expected).abs().max().item() < TOLERANCE
    if kind == "F32":
        assert (logits - original).abs().max().item() < TOLERANCE
    else:
        # The quantisation moved the logits (these random weights amplify it: measured 0.007 for
        # F16 and 0.2-0.3 for Q8_0 of logits up to 6), but not beyond a tenth of their range.
        assert 0 < (logits - original).abs().max().item() < 0.1 * original.abs().max().item()


@pytest.mark.parametrize("arch", ARCHS)
def test_tokenizer_template_and_greedy_text_equal_the_folder(models, engine, arch):
    folder, gguf_file = models[arch, "F32"]
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    info = load(engine, gguf_file)
    assert info["chat_format"] == ("llama3" if arch == "llama3" else "chatml")
    assert tok.convert_tokens_to_ids(make_tiny_models.MODELS[arch]["eos"]) in info["stop_ids"]
    for text in make_tokenizers.CORPUS:
        for special in (True, False):
            ids = engine.request("tokenize", text=text, add_special_tokens=special)["ids"]
            assert ids == tok(text, add_special_tokens=special)["input_ids"], (text, special)
    messages = [{"role": "user", "content": "  Write a Triton kernel.  "},
                {"role": "assistant", "content": "Sure."}, {"role": "user", "content": "Now fuse it."}]
    rendered = engine.request("render", messages=messages)
    assert rendered["text"] == tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    _, from_gguf = engine.stream("generate", prompt=PROMPT, max_tokens=16)
    load(engine, folder)
    _, from_folder = engine.stream("generate", prompt=PROMPT, max_tokens=16)
    assert from_gguf["candidates"][0]["tokens"] == from_folder["candidates"][0]["tokens"]


# A quantised file loads with weight-only quantised linears by default on the CPU: int4 for 4-bit
# blocks, which int4's groups of 32 hold exactly up to the bf16 rounding of scale and zero, int8
# for 8-bit ones (requantised per output channel). Against the same file in float32 (measured on
# these models: relative error 2.2-3.1%, the same argmax at 92-100% of the positions).
@pytest.mark.parametrize("kind,dtype", [("Q4_1", "int4"), ("Q8_0", "int8"), ("F16", "float32")])
@pytest.mark.parametrize("arch", ARCHS)
def test_quantised_files_load_weight_only_quantised_by_default(models, engine, arch, kind, dtype):
    gguf_file = models[arch, kind][1]
    load(engine, gguf_file)
    ids = engine.request("tokenize", text=PROMPT)["ids"]
    exact = torch.tensor(engine.request("logits", ids=ids)["logits"])
    info = engine.request("load", path=str(gguf_file))
    assert info["ev"] == "loaded" and info["decoder"]["dtype"] == dtype, info
    ours = torch.tensor(engine.request("logits", ids=ids)["logits"])
    rel = ((ours - exact).norm() / exact.norm()).item()
    agree = (ours.argmax(-1) == exact.argmax(-1)).float().mean().item()
    assert rel < 0.06 and agree >= 0.8, (rel, agree)


def test_unsupported_or_broken_files_are_errors_naming_them(models, engine, tmp_path):
    import gguf

    foreign = tmp_path / "gemma.gguf"
    writer = gguf.GGUFWriter(str(foreign), "gemma2")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", torch.zeros(8, 4).numpy())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    event = engine.request("load", path=str(foreign))
    assert event["ev"] == "error" and "gemma.gguf" in event["message"] and "gemma2" in event["message"]
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(models["qwen2", "Q8_0"][1].read_bytes()[:5000])
    event = engine.request("load", path=str(cut))
    assert event["ev"] == "error" and "cut.gguf" in event["message"]
    assert engine.request("load", path=str(tmp_path / "absent.gguf"))["ev"] == "error"
    load(engine, models["qwen3", "Q8_0"][1])  # still serving
