"""The `reference` stage: run the PyTorch reference and write the inputs both sides use and the
expected outputs (docs/WORKER_PROTOCOL.md, "reference"). The reference is timed by the
`baseline` stage, in turns with the candidate.

Problems in the reference file become `facts["error"]` with the line in that file; only a
failure of the harness itself escapes `run` (main.py reports that as infrastructure).
"""
import contextlib
import os

import torch
from torch.utils import flop_counter
from torch.utils.flop_counter import FlopCounterMode

from . import device_lock, loader, timing, torch_lazy, value_pack
from .loader import UserCodeError

# The counter's dispatch mode would import dynamo (seconds) on its first op (torch_lazy.py).
if hasattr(flop_counter, "_FlopCounterMode"):
    torch_lazy.dispatch_mode_without_dynamo(flop_counter._FlopCounterMode)

STAGE = "reference"
MODULE_NAME = "crucible_reference"
REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
BATCH_NAMES = ("batch_size", "batch", "B")
ALT_SEED_OFFSET = 1000
TIMING_SEED_OFFSET = 2000
DEFAULT_TIMING_SETS = 3
TIMING_SET_BYTES = 256 << 20  # inputs and expected outputs of the timing sets, together


def run(job, channel):
    device = stage_device(job)
    timing.use_threads(job)
    if job.get("backend") == "interpret":
        # Read by triton when it is imported; a reference that uses triton gets the same
        # interpreter the candidate does.
        os.environ.setdefault("TRITON_INTERPRET", "1")
    trials = int(job["trials"])
    input_seed = job_input_seed(job)
    facts = {
        "env": timing.env_facts(device),
        "trials": trials,
        "input_seed": input_seed,
        "seeds": [_derived_seed(input_seed, 1 + k) for k in range(trials)],
        "timing_sets": 0,
        "outputs": [],
        "alt_batch": None,
        "cost": None,
        "device": None,
        "error": None,
        "device_lock": {},
    }
    lock = device_lock.DeviceLock(job.get("device_lock"))
    # Before user code runs: the peaks describe the machine, not what the reference left behind.
    channel.phase("device-peak")
    with lock.exclusive(facts["device_lock"]):
        facts["device"] = timing.device_peak(device)
    try:
        _run_reference(job, device, channel, facts, lock)
    except UserCodeError as exc:
        facts["error"] = exc.to_fact()
    finally:
        lock.close()
    return facts


def job_input_seed(job):
    """The seed every input is drawn from: the job's secret `input_seed`, which the parent draws
    afresh for each reference run and never gives the candidate; a job without one gets a random
    one here. The public `seed` only builds the model, so both sides start from the same
    parameters while no candidate can draw the inputs ahead of the call."""
    value = job.get("input_seed")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value % 2**63
    return int.from_bytes(os.urandom(8), "little") % 2**63


def _derived_seed(input_seed, offset):
    return (input_seed + offset) % 2**63


def stage_device(job):
    """cuda for the cuda backend; the CPU for interpret and opencl, whatever else the job says."""
    if job.get("backend") == "cuda" or (job.get("backend") is None and job.get("device") == "cuda"):
        return torch.device("cuda")
    return torch.device("cpu")


def _run_reference(job, device, channel, facts, lock):
    path = job["reference_path"]
    seed = int(job["seed"])
    inputs_dir, out_dir = job["inputs_dir"], job["out_dir"]
    os.makedirs(inputs_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)

    channel.phase("reference-import")
    with _user_code(path):
        module = loader.import_file(path, MODULE_NAME)
    _check_names(module)
    with _user_code(path):
        loader.seed_all(seed, device)
        init = module.get_init_inputs()
    _save_user_value(os.path.join(inputs_dir, "init.ctp"), init, "get_init_inputs()")
    with _user_code(path):
        model = loader.build_model(module.Model, init, seed, device)

    with lock.shared(facts["device_lock"]):
        _trials(job, module, model, path, device, channel, facts)


def _trials(job, module, model, path, device, channel, facts):
    """Every trial's inputs and expected outputs, the alternative batch, the cost and the
    timing sets."""
    input_seed, inputs_dir, out_dir = facts["input_seed"], job["inputs_dir"], job["out_dir"]
    channel.phase("reference-trials")
    input_sets, first_outputs = [], None
    for k in range(int(job["trials"])):
        inputs = _get_inputs(module, path, _derived_seed(input_seed, 1 + k), device)
        _save_user_value(os.path.join(inputs_dir, f"inputs_{k}.ctp"), inputs, "get_inputs()")
        args = loader.move_to(inputs, device)
        input_sets.append(args)
        # On a copy: the reference may change its inputs, and the timing reuses them.
        with _exact_fp32():
            outputs = _call(model, loader.clone_value(args), path)
        _save_user_value(os.path.join(out_dir, f"expected_{k}.ctp"), outputs, "the output")
        if k == 0:
            first_outputs = outputs
            facts["outputs"] = [{"dtype": value_pack.dtype_name(t.dtype), "shape": list(t.shape)}
                                for t in value_pack.tensors_in(outputs)]

    channel.phase("reference-alt-batch")
    with _exact_fp32():
        facts["alt_batch"] = _alt_batch(job, module, model, path, device, first_outputs,
                                        input_seed)
    if input_sets:
        channel.phase("reference-cost")
        facts["cost"] = _cost(model, input_sets[0], first_outputs)
        channel.phase("reference-timing-sets")
        input_sets = _timing_sets(job, module, model, path, device, input_seed)
        facts["timing_sets"] = len(input_sets)
    return input_sets


def _timing_sets(job, module, model, path, device, input_seed):
    """Inputs of the timed calls, drawn apart from the trials' and written with their expected
    outputs: the candidate's timed calls run on inputs it has never seen, and every output it
    returns while timed is checked against these. The reference is timed on the same sets."""
    count = max(1, int(job.get("timing_sets", DEFAULT_TIMING_SETS)))
    budget = int(job.get("timing_set_bytes", TIMING_SET_BYTES))
    sets = []
    j = 0
    while j < count:
        inputs = _get_inputs(module, path, _derived_seed(input_seed, TIMING_SEED_OFFSET + j),
                             device)
        _save_user_value(os.path.join(job["inputs_dir"], f"timing_{j}.ctp"), inputs,
                         "get_inputs()")
        args = loader.move_to(inputs, device)
        sets.append(args)
        with _exact_fp32():
            outputs = _call(model, loader.clone_value(args), path)
        _save_user_value(os.path.join(job["out_dir"], f"expected_timing_{j}.ctp"), outputs,
                         "the output")
        if j == 0:  # as many sets as the budget holds, at least the default few
            size = sum(t.numel() * t.element_size() for t in
                       value_pack.tensors_in(inputs) + value_pack.tensors_in(outputs))
            count = min(count, max(DEFAULT_TIMING_SETS, budget // max(1, size)))
        j += 1
    return sets


# ---------------------------------------------------------------------------------------------
# Calling user code


@contextlib.contextmanager
def _exact_fp32():
    """Expected outputs in true fp32. cuDNN allows TF32 for convolutions by default, which puts
    a convolution's reference itself further from the exact result than the fp32 tolerance
    (docs/PERFORMANCE.md has the figures). Timing keeps torch's defaults, as users run it."""
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    saved = (cudnn.allow_tf32, matmul.allow_tf32)
    cudnn.allow_tf32 = matmul.allow_tf32 = False
    try:
        yield
    finally:
        cudnn.allow_tf32, matmul.allow_tf32 = saved


def _user_code(path):
    return loader.user_code(path, STAGE)


def _check_names(module):
    missing = [name for name in REQUIRED_NAMES if not callable(getattr(module, name, None))]
    if missing:
        raise UserCodeError(f"the reference does not define {', '.join(missing)}", STAGE)


def _get_inputs(module, path, seed, device):
    """`get_inputs()` under `seed`, as a list; the same seed gives the same inputs."""
    with _user_code(path):
        loader.seed_all(seed, device)
        inputs = module.get_inputs()
    if not isinstance(inputs, (list, tuple)):
        raise UserCodeError(f"get_inputs() must return a list, not {type(inputs).__qualname__}",
                            STAGE)
    return list(inputs)


def _call(model, args, path):
    with _user_code(path), torch.no_grad():
        return model(*args)


def _save_user_value(path, value, what):
    """Save a value user code produced; one a value pack cannot hold is the user's problem."""
    try:
        value_pack.save(path, value)
    except TypeError as exc:
        raise UserCodeError(f"{what} cannot be stored: {exc}", STAGE) from exc


# ---------------------------------------------------------------------------------------------
# Alternative batch size


def _alt_batch(job, module, model, path, device, first_outputs, input_seed):
    """Re-run with the module's batch constant changed, to catch candidates that hard-code it."""
    inputs_path = os.path.join(job["inputs_dir"], "inputs_alt.ctp")
    expected_path = os.path.join(job["out_dir"], "expected_alt.ctp")
    for stale in (inputs_path, expected_path):  # a previous run's files must not be reused
        with contextlib.suppress(FileNotFoundError):
            os.remove(stale)
    if not job.get("alt_batch", True):
        return _alt_fact(None, None, None, "not requested")
    name = next((n for n in BATCH_NAMES if _is_int(getattr(module, n, None))), None)
    if name is None:
        return _alt_fact(None, None, None, "no int constant " + ", ".join(BATCH_NAMES))
    value = getattr(module, name)
    if value <= 0:
        return _alt_fact(name, value, None, f"{name} = {value} is not positive")
    if first_outputs is None:
        return _alt_fact(name, value, None, "no trial ran to compare with")
    alt = 3 if value == 1 else value + 1
    setattr(module, name, alt)
    try:
        inputs = _get_inputs(module, path, _derived_seed(input_seed, ALT_SEED_OFFSET), device)
        outputs = _call(model, loader.move_to(inputs, device), path)
    except UserCodeError as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        return _alt_fact(name, value, alt, f"the reference failed with {name} = {alt}{where}: "
                                           f"{exc.message}")
    finally:
        setattr(module, name, value)
    reason = _leading_dims_reason(first_outputs, outputs)
    if reason is None:
        try:
            value_pack.save(inputs_path, inputs)
            value_pack.save(expected_path, outputs)
        except TypeError as exc:
            reason = f"cannot be stored: {exc}"
    return _alt_fact(name, value, alt, reason)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _alt_fact(name, value, alt, reason):
    return {"name": name, "value": value, "alt": alt, "accepted": reason is None,
            "reason": reason}


def _leading_dims_reason(original, changed):
    """None when every output tensor's leading dimension changed, else why not."""
    before, after = value_pack.tensors_in(original), value_pack.tensors_in(changed)
    if not before:
        return "the reference returns no tensors"
    if len(before) != len(after):
        return f"the reference returned {len(after)} tensors instead of {len(before)}"
    for i, (a, b) in enumerate(zip(before, after)):
        if a.dim() == 0 or b.dim() == 0:
            return f"output {i} is a scalar"
        if a.shape[0] == b.shape[0]:
            return f"output {i}'s leading dimension stayed {a.shape[0]}"
    return None


# ---------------------------------------------------------------------------------------------
# Cost


def _cost(model, inputs, outputs):
    """FLOPs counted by torch's FlopCounterMode on one call; bytes = inputs + outputs."""
    nbytes = sum(t.numel() * t.element_size()
                 for t in value_pack.tensors_in(inputs) + value_pack.tensors_in(outputs))
    cost = {"flops": None, "bytes": nbytes}
    try:
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*loader.clone_value(inputs))
        cost["flops"] = int(counter.get_total_flops())
    except Exception as exc:  # the call ran without the counter, so the counter is at fault
        cost["flops_error"] = f"{type(exc).__name__}: {exc}"[:2000]
    return cost
