"""The reference stage on small KernelBench-style references written to tmp_path."""
import json
import os
import textwrap

import pytest
import torch

from crucible_worker import loader, reference_stage, timing, value_pack

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(REPO, "core", "worker", "worker.py")

FAST_TIMING = {"warmup": 1, "reps": 3, "min_time_s": 0.0, "compile_baseline": False}

LINEAR_REFERENCE = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, scale=1.0):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.scale = scale

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale, x.sum(dim=1)


{batch_line}
dim = 32


def get_inputs():
    return [torch.randn({batch_name}, dim)]


def get_init_inputs():
    return [dim]
"""


class RecordingChannel:
    def __init__(self):
        self.phases = []

    def phase(self, name, **details):
        self.phases.append(name)


def write_reference(tmp_path, source, name="reference.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def linear_reference(tmp_path, batch_name="batch_size", value=8):
    return write_reference(tmp_path, LINEAR_REFERENCE.format(
        batch_line=f"{batch_name} = {value}", batch_name=batch_name))


def make_job(tmp_path, reference, seed=42, trials=3, label="run", input_seed=None, **extra):
    job = {
        "reference_path": str(reference),
        "out_dir": str(tmp_path / label / "ref"),
        "inputs_dir": str(tmp_path / label / "inputs"),
        "backend": "interpret",
        "device": "cpu",
        "seed": seed,
        "input_seed": seed if input_seed is None else input_seed,
        "trials": trials,
        "timing": dict(FAST_TIMING),
        "alt_batch": True,
    }
    job.update(extra)
    return job


def run_stage(job):
    channel = RecordingChannel()
    facts = reference_stage.run(job, channel)
    json.dumps(facts, allow_nan=False)  # the facts must be plain JSON for the channel
    return facts, channel


def pack(job, key, name):
    return value_pack.load(os.path.join(job[key], name))


# --- files and facts ----------------------------------------------------------------------------


def test_writes_inputs_and_expected_outputs(tmp_path):
    job = make_job(tmp_path, linear_reference(tmp_path))
    facts, channel = run_stage(job)
    assert facts["error"] is None
    assert sorted(os.listdir(job["inputs_dir"])) == [
        "init.ctp", "inputs_0.ctp", "inputs_1.ctp", "inputs_2.ctp", "inputs_alt.ctp",
        "timing_0.ctp", "timing_1.ctp", "timing_2.ctp"]
    assert sorted(os.listdir(job["out_dir"])) == [
        "expected_0.ctp", "expected_1.ctp", "expected_2.ctp", "expected_alt.ctp",
        "expected_timing_0.ctp", "expected_timing_1.ctp", "expected_timing_2.ctp"]
    assert facts["trials"] == 3 and facts["seeds"] == [43, 44, 45]
    assert facts["timing_sets"] == 3
    assert facts["outputs"] == [{"dtype": "float32", "shape": [8, 32]},
                                {"dtype": "float32", "shape": [8]}]
    assert pack(job, "inputs_dir", "init.ctp") == [32]
    assert channel.phases[0] == "device-peak" and "reference-trials" in channel.phases


def test_expected_outputs_are_what_a_model_built_the_same_way_computes(tmp_path):
    """The candidate stage rebuilds from init.ctp under the same seed: that must reproduce them."""
    job = make_job(tmp_path, linear_reference(tmp_path))
    run_stage(job)
    module = loader.import_file(job["reference_path"], "crucible_reference_check")
    model = loader.build_model(module.Model, pack(job, "inputs_dir", "init.ctp"), 42, "cpu")
    for k in range(3):
        inputs = pack(job, "inputs_dir", f"inputs_{k}.ctp")
        expected = pack(job, "out_dir", f"expected_{k}.ctp")
        with torch.no_grad():
            actual = model(*inputs)
        assert isinstance(expected, tuple) and len(expected) == 2
        assert all(torch.equal(a, e) for a, e in zip(actual, expected))


def test_inputs_follow_the_seed(tmp_path):
    reference = linear_reference(tmp_path)
    first = make_job(tmp_path, reference, seed=7, label="a")
    again = make_job(tmp_path, reference, seed=7, label="b")
    other = make_job(tmp_path, reference, seed=8, label="c")
    for job in (first, again, other):
        run_stage(job)
    for k in range(3):
        name = f"inputs_{k}.ctp"
        assert torch.equal(pack(first, "inputs_dir", name)[0], pack(again, "inputs_dir", name)[0])
        assert not torch.equal(pack(first, "inputs_dir", name)[0],
                               pack(other, "inputs_dir", name)[0])
    # Trial K is drawn under seed + 1 + K, so trial 1 of seed 7 is trial 0 of seed 8.
    assert torch.equal(pack(first, "inputs_dir", "inputs_1.ctp")[0],
                       pack(other, "inputs_dir", "inputs_0.ctp")[0])
    assert not torch.equal(pack(first, "inputs_dir", "inputs_0.ctp")[0],
                           pack(first, "inputs_dir", "inputs_1.ctp")[0])


def test_inputs_follow_the_secret_input_seed_and_the_model_the_public_seed(tmp_path):
    """The public seed builds the model; the inputs come from the job's input_seed, and a job
    without one draws a random one: no candidate can regenerate its inputs from the seed."""
    reference = linear_reference(tmp_path)
    a = make_job(tmp_path, reference, seed=42, input_seed=1000, label="a")
    b = make_job(tmp_path, reference, seed=42, input_seed=2000, label="b")
    c = make_job(tmp_path, reference, seed=42, label="c")
    del c["input_seed"]
    facts = [run_stage(job)[0] for job in (a, b, c)]
    assert facts[0]["seeds"] == [1001, 1002, 1003]
    assert facts[2]["input_seed"] not in (42, 1000, 2000)
    first = pack(a, "inputs_dir", "inputs_0.ctp")[0]
    assert not torch.equal(first, pack(b, "inputs_dir", "inputs_0.ctp")[0])
    assert not torch.equal(first, pack(c, "inputs_dir", "inputs_0.ctp")[0])
    loader.seed_all(43)  # what the documented seed + 1 would give
    assert not torch.equal(first, torch.randn(first.shape))
    # the same public seed: the same model (the scale-1 linear part of output 1 is x.sum)
    module = loader.import_file(a["reference_path"], "crucible_reference_seeds")
    model = loader.build_model(module.Model, [32], 42, "cpu")
    with torch.no_grad():
        expected = model(pack(b, "inputs_dir", "inputs_0.ctp")[0])
    assert torch.equal(expected[0], pack(b, "out_dir", "expected_0.ctp")[0])


def test_timing_sets_are_fresh_inputs_with_expected_outputs(tmp_path):
    job = make_job(tmp_path, linear_reference(tmp_path), timing_sets=2)
    facts, channel = run_stage(job)
    assert facts["timing_sets"] == 2 and "reference-timing-sets" in channel.phases
    trials = [pack(job, "inputs_dir", f"inputs_{k}.ctp")[0] for k in range(3)]
    module = loader.import_file(job["reference_path"], "crucible_reference_timing")
    model = loader.build_model(module.Model, [32], 42, "cpu")
    for j in range(2):
        x = pack(job, "inputs_dir", f"timing_{j}.ctp")[0]
        assert not any(torch.equal(x, t) for t in trials)
        with torch.no_grad():
            assert torch.equal(model(x)[0], pack(job, "out_dir", f"expected_timing_{j}.ctp")[0])


def test_model_parameters_follow_the_seed(tmp_path):
    """Inputs that depend on the parameters show that the model, too, is built under the seed."""
    job_a = make_job(tmp_path, linear_reference(tmp_path), seed=3, label="a")
    job_b = make_job(tmp_path, linear_reference(tmp_path), seed=3, label="b")
    run_stage(job_a)
    run_stage(job_b)
    assert torch.equal(pack(job_a, "out_dir", "expected_0.ctp")[0],
                       pack(job_b, "out_dir", "expected_0.ctp")[0])


def test_kernelbook_init_inputs_are_args_and_kwargs(tmp_path):
    source = LINEAR_REFERENCE.format(batch_line="batch_size = 4", batch_name="batch_size")
    source = source.replace("return [dim]", "return [[dim], {'scale': 0.0}]")
    job = make_job(tmp_path, write_reference(tmp_path, source))
    facts, _ = run_stage(job)
    assert facts["error"] is None
    assert pack(job, "inputs_dir", "init.ctp") == [[32], {"scale": 0.0}]
    assert not pack(job, "out_dir", "expected_0.ctp")[0].any()  # scale 0 reached the model


# --- alternative batch size ---------------------------------------------------------------------


def test_alt_batch_is_accepted_when_the_batch_constant_drives_the_outputs(tmp_path):
    job = make_job(tmp_path, linear_reference(tmp_path, value=8))
    facts, _ = run_stage(job)
    assert facts["alt_batch"] == {"name": "batch_size", "value": 8, "alt": 9, "accepted": True,
                                  "reason": None}
    assert pack(job, "inputs_dir", "inputs_alt.ctp")[0].shape == (9, 32)
    out, sums = pack(job, "out_dir", "expected_alt.ctp")
    assert out.shape == (9, 32) and sums.shape == (9,)


@pytest.mark.parametrize("name", ["batch", "B"])
def test_alt_batch_falls_back_to_batch_and_b(tmp_path, name):
    facts, _ = run_stage(make_job(tmp_path, linear_reference(tmp_path, batch_name=name, value=5)))
    assert facts["alt_batch"]["name"] == name and facts["alt_batch"]["accepted"]
    assert facts["alt_batch"]["alt"] == 6


def test_alt_batch_of_one_becomes_three(tmp_path):
    facts, _ = run_stage(make_job(tmp_path, linear_reference(tmp_path, value=1)))
    assert facts["alt_batch"]["alt"] == 3 and facts["alt_batch"]["accepted"]


def test_alt_batch_is_not_accepted_without_a_batch_constant(tmp_path):
    source = LINEAR_REFERENCE.format(batch_line="rows = 8", batch_name="rows")
    job = make_job(tmp_path, write_reference(tmp_path, source))
    facts, _ = run_stage(job)
    assert facts["error"] is None
    alt = facts["alt_batch"]
    assert not alt["accepted"] and alt["name"] is None and "batch_size" in alt["reason"]
    assert not os.path.exists(os.path.join(job["inputs_dir"], "inputs_alt.ctp"))
    assert not os.path.exists(os.path.join(job["out_dir"], "expected_alt.ctp"))


def test_alt_batch_is_not_accepted_when_an_output_keeps_its_leading_dimension(tmp_path):
    source = LINEAR_REFERENCE.format(batch_line="batch_size = 8", batch_name="batch_size")
    source = source.replace("x.sum(dim=1)", "x.sum(dim=0)")
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    alt = facts["alt_batch"]
    assert not alt["accepted"] and alt["alt"] == 9
    assert alt["reason"] == "output 1's leading dimension stayed 32"


def test_alt_batch_failure_is_a_reason_not_an_error(tmp_path):
    source = LINEAR_REFERENCE.format(batch_line="batch_size = 8", batch_name="batch_size")
    source = source.replace("        return torch.relu",
                            "        assert x.shape[0] == 8, 'fixed batch'\n"
                            "        return torch.relu")
    job = make_job(tmp_path, write_reference(tmp_path, source))
    facts, _ = run_stage(job)
    assert facts["error"] is None
    assert not facts["alt_batch"]["accepted"]
    assert "AssertionError: fixed batch" in facts["alt_batch"]["reason"]
    assert "(line 12)" in facts["alt_batch"]["reason"]


def test_alt_batch_not_requested(tmp_path):
    facts, _ = run_stage(make_job(tmp_path, linear_reference(tmp_path), alt_batch=False))
    assert facts["alt_batch"]["accepted"] is False
    assert facts["alt_batch"]["reason"] == "not requested"


# --- errors in the reference --------------------------------------------------------------------


RAISING_REFERENCE = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.matmul(y, torch.ones(3, 3))


def get_inputs():
    return [torch.randn(4, 5)]


def get_init_inputs():
    return []
"""


def test_an_exception_in_forward_reports_its_line(tmp_path):
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, RAISING_REFERENCE)))
    error = facts["error"]
    assert error["stage"] == "reference" and error["line"] == 8
    assert error["message"].startswith("RuntimeError: ")
    assert "reference.py" in error["traceback"] and len(error["traceback"]) <= 4100
    assert facts["env"]["torch"].startswith("2.11.0") and facts["device"]["kind"] == "cpu"


def test_an_exception_at_import_reports_its_line(tmp_path):
    source = "import torch\n\nSIZE = 4\nraise ValueError('no config')\n"
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    assert facts["error"]["line"] == 4
    assert facts["error"]["message"] == "ValueError: no config"


def test_a_syntax_error_reports_its_line(tmp_path):
    source = "import torch\n\n\ndef get_inputs(:\n    pass\n"
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    assert facts["error"]["line"] == 4 and facts["error"]["message"].startswith("SyntaxError")


def test_missing_get_inputs_is_named(tmp_path):
    source = RAISING_REFERENCE.replace("def get_inputs", "def make_inputs")
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    error = facts["error"]
    assert error["line"] is None and error["stage"] == "reference"
    assert error["message"] == "the reference does not define get_inputs"


def test_get_inputs_must_return_a_list(tmp_path):
    source = RAISING_REFERENCE.replace("return [torch.randn(4, 5)]", "return torch.randn(4, 5)")
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    assert "get_inputs() must return a list" in facts["error"]["message"]


def test_sys_exit_in_the_reference_is_an_error_fact(tmp_path):
    source = RAISING_REFERENCE.replace("        y = x * 2", "        import sys; sys.exit(3)")
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    assert facts["error"]["message"] == "SystemExit: 3" and facts["error"]["line"] == 7


def test_an_output_a_pack_cannot_hold_is_an_error(tmp_path):
    source = RAISING_REFERENCE.replace("return torch.matmul(y, torch.ones(3, 3))",
                                       "return y.to(torch.complex64)")
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, source)))
    assert "cannot be stored" in facts["error"]["message"]
    assert "complex64" in facts["error"]["message"]


# --- cost, devices ---------------------------------------------------------------------------


MATMUL_REFERENCE = """\
import torch
import torch.nn as nn

M, K, N = 16, 24, 8


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
"""


def test_cost_counts_matmul_flops_and_bytes(tmp_path):
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, MATMUL_REFERENCE)))
    assert facts["cost"]["flops"] == 2 * 16 * 24 * 8
    assert facts["cost"]["bytes"] == 4 * (16 * 24 + 24 * 8 + 16 * 8)


def test_measure_rotates_over_fresh_copies_of_the_input_sets():
    sets = [[torch.full((4,), float(k))] for k in range(3)]
    seen, addresses = [], []

    def fn(x):
        addresses.append(x.data_ptr())
        x.add_(100)  # a call that changes its input must not change the next call's input
        return x.sum().item()

    samples = timing.measure(timing.Timer("cpu"), fn, sets, warmup=2, reps=5, min_time_s=0.0,
                             on_result=lambda slot, result: seen.append((slot, result)))
    assert len(samples) == 5 and all(ms >= 0 for ms in samples)
    assert seen == [(0, 400.0), (1, 404.0), (2, 408.0), (0, 400.0), (1, 404.0)]
    assert all(a != b for a, b in zip(addresses, addresses[1:]))
    assert all(torch.equal(s[0], torch.full((4,), float(k))) for k, s in enumerate(sets))
    assert timing.median([3.0, 1.0, 2.0]) == 2.0 and timing.median([1.0, 4.0]) == 2.5


def test_device_and_environment(tmp_path):
    facts, _ = run_stage(make_job(tmp_path, write_reference(tmp_path, MATMUL_REFERENCE)))
    env, device = facts["env"], facts["device"]
    assert env["cuda"] is None and env["device_name"].startswith("cpu: ")
    assert env["triton"] == "3.6.0" and env["numpy"] == "2.3.5"
    assert device["kind"] == "cpu"
    assert device["bandwidth_gbs"] > 0 and device["peak_gflops"] > 0


@pytest.mark.parametrize("backend, device, expected", [
    ("interpret", "cpu", "cpu"), ("opencl", "cpu", "cpu"), ("opencl", "cuda", "cpu"),
    ("cuda", "cuda", "cuda"),
])
def test_backend_decides_the_device(backend, device, expected):
    assert reference_stage.stage_device({"backend": backend, "device": device}).type == expected


def test_threads_are_set_only_when_asked(tmp_path):
    before = torch.get_num_threads()
    try:
        run_stage(make_job(tmp_path, write_reference(tmp_path, MATMUL_REFERENCE), label="a"))
        assert torch.get_num_threads() == before
        run_stage(make_job(tmp_path, write_reference(tmp_path, MATMUL_REFERENCE), label="b",
                           threads=1))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
