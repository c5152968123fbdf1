"""Inductor's settings for a stage whose torch.compile caches outlive the job (the baseline's).

Two of inductor's per-process costs on the CPU defeat a warm cache, and both are spared here:
* Precompiled headers live under the temporary folder, which is the job's own and dies with it,
  so each run rebuilt one (a hundred megabytes of g++ output) even when every kernel was cached.
  A cached kernel needs no header; a cold one compiles a little slower without it.
* Before its first CPU kernel, inductor checks which vector instructions work by starting a
  second Python that imports torch and loads a probe library. The answer only changes with
  torch or the processor, so it is kept beside the cache under a key of both, and later runs
  take it from there.
"""
import hashlib
import json
import os
import platform

import torch

MARKER = "crucible-vec-isa.json"


def configure(cache_dir):
    """Sets inductor up for `cache_dir` (TORCHINDUCTOR_CACHE_DIR); None leaves it as it is."""
    if not cache_dir:
        return
    import torch._inductor.config as config
    config.cpp_cache_precompile_headers = False
    known = _known_vec_isa(cache_dir)
    if known is not None and config.cpp.vec_isa_ok is None:
        config.cpp.vec_isa_ok = known


def remember(cache_dir):
    """After a compile: keeps inductor's answer on the vector instructions for later runs."""
    if not cache_dir:
        return
    try:
        from torch._inductor import cpu_vec_isa
        if cpu_vec_isa.valid_vec_isa_list.cache_info().currsize == 0:
            return  # no CPU kernel was compiled: asking now would run the check for nothing
        ok = bool(cpu_vec_isa.pick_vec_isa())
        path = os.path.join(cache_dir, MARKER)
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"key": _machine_key(), "ok": ok}, f)
        os.replace(tmp, path)
    except (OSError, ImportError, AttributeError):
        pass  # the check only runs again next time


def _known_vec_isa(cache_dir):
    try:
        with open(os.path.join(cache_dir, MARKER)) as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != _machine_key():
        return None
    return bool(kept.get("ok"))


def _machine_key():
    """torch's version, the machine and the processor's flags: what the check depends on."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features", "features")):
                    flags = line.split(":", 1)[-1].strip()
                    break
    except OSError:
        pass
    text = "\n".join([torch.__version__, platform.machine(), flags])
    return hashlib.sha256(text.encode()).hexdigest()
