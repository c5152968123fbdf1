"""The `synthcheck` stage: run synthesized reference tasks and save their outputs.

Used by `crucible tasks synth` to reject tasks that do not run or whose outputs are NaN/Inf or
degenerate. Like every stage it reports facts only: for each task, whether it ran (an error
with the line otherwise), its outputs' dtypes and shapes, and the eager time of one forward;
each output of each trial is saved as its own value pack (`out_dir/out{j}_{k}.ctp`) so the
C++ side judges them with the verifier's own degeneracy gates.

Job: {"tasks": [{"path": ..., "out_dir": ...}], "seed": S, "trials": K, "threads": T}
"""
import os
import time

import torch

from . import loader, value_pack
from .loader import UserCodeError

STAGE = "synthcheck"


def run(job, channel):
    if "threads" in job:
        torch.set_num_threads(int(job["threads"]))
    seed, trials = int(job["seed"]), int(job["trials"])
    results = []
    for index, task in enumerate(job["tasks"]):
        channel.phase(f"task-{index}")
        results.append(_check(task["path"], task["out_dir"], seed, trials, index))
    return {"tasks": results}


def _check(path, out_dir, seed, trials, index):
    fact = {"path": path, "error": None, "outputs": [], "ms": None}
    os.makedirs(out_dir, exist_ok=True)
    try:
        module = loader.import_file(path, f"crucible_synth_{index}")
        model = loader.build_model(module.Model, module.get_init_inputs(), seed, "cpu")
        for k in range(trials):
            loader.seed_all(seed + 1 + k)
            inputs = module.get_inputs()
            start = time.perf_counter()
            with torch.no_grad():
                outputs = model(*inputs)
            elapsed = (time.perf_counter() - start) * 1000
            tensors = value_pack.tensors_in(outputs)
            if k == 0:
                fact["ms"] = elapsed
                fact["outputs"] = [{"dtype": value_pack.dtype_name(t.dtype),
                                    "shape": list(t.shape)} for t in tensors]
            for j, tensor in enumerate(tensors):
                value_pack.save(os.path.join(out_dir, f"out{j}_{k}.ctp"), tensor)
    except UserCodeError as exc:
        fact["error"] = exc.to_fact()
    except Exception as exc:  # the task's own failure, with its line
        fact["error"] = loader.user_error(exc, path, STAGE)
    return fact
