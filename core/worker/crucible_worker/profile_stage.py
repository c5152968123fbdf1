"""The `profile` stage: the candidate's launches in one forward call on the reference's inputs,
timed or counted (docs/WORKER_PROTOCOL.md, "profile"; docs/PROFILE.md).

Two modes, one process each, so that each runs the Triton it needs:

* `time` (on the job's backend): `warmup` untimed forward calls, then `calls` timed ones; each
  outermost launch timed on its own (CUDA events around it on cuda; on opencl and interpret the
  host clock around the launch, which returns only once the kernel has finished: the opencl
  runtime waits for its queue with clFinish, the interpreter runs it in the caller) and each
  whole forward call timed as the verifier times it (timing.Timer).
* `count` (always on Triton's interpreter, on the CPU): one forward call with every launch's
  loads, stores and arithmetic counted (profile_counter.py).

The candidate runs here as in the candidate stage: the kernel's walls went up in main.py before
torch, new processes are refused before it is imported, and it never sees the reference. The
stage reports facts; the C++ side (core/inspect/kernel_profile) pairs the two modes' launches,
adds the device's peaks from the reference stage and works out the roofline.
"""
import os

STAGE = "profile"
MODULE_NAME = "crucible_candidate"
DEFAULT_CALLS = 10
DEFAULT_WARMUP = 2
DEFAULT_COUNT_CAP_S = 60.0
MAX_LAUNCHES = 4096  # per forward call; more is reported as an error, not kept


def run(job, channel):
    from . import candidate_stage
    mode = job.get("mode", "time")
    if mode == "count":
        # The interpreter counts, whatever backend the candidate is timed on.
        job = dict(job, backend="interpret")
    candidate_stage.configure_environment(job)
    return _Profile(job, channel, mode).run()


class _Profile:
    def __init__(self, job, channel, mode):
        import torch
        from . import loader, timing, torch_lazy, value_pack
        torch_lazy.settle_manual_seed(torch)
        self.torch, self.loader, self.timing, self.value_pack = torch, loader, timing, value_pack
        self.job, self.channel, self.mode = job, channel, mode
        self.path = job["candidate_path"]
        self.device = "cuda" if job.get("backend") == "cuda" else "cpu"
        from . import device_lock
        # Opened before any candidate code exists: shared while warming up and counting,
        # exclusive while timing, as the verifier's stages hold it (device_lock.py).
        self.lock = device_lock.DeviceLock(job.get("device_lock"))
        self.facts = {"mode": mode, "backend": job.get("backend"), "device": self.device,
                      "env": None, "timer": None, "calls": 0, "warmup": 0, "forward_ms": [],
                      "launches": [], "calls_matching": 0, "error": None, "device_lock": {}}

    def run(self):
        from . import candidate_stage
        self.timing.use_threads(self.job)
        self.facts["env"] = self.timing.env_facts(self.device)
        self.channel.phase("profile-inputs")
        init, inputs = self._load_inputs()
        log = self._launch_log()
        self.facts["os_sandbox"] = candidate_stage._forbid_new_processes(self.job.get("backend"))
        self.channel.phase("profile-import")
        model = self._model(init)
        if model is None:
            return self.facts
        args = self.loader.move_to(inputs, self.device)
        try:
            with self.torch.no_grad():
                if self.mode == "count":
                    with self.lock.shared(self.facts["device_lock"]):
                        self._count(model, args, log)
                else:
                    self._time(model, args, log)
        finally:
            self.lock.close()
        return self.facts

    # -- setup

    def _load_inputs(self):
        vp = self.value_pack
        folder = self.job["inputs_dir"]
        init_path = os.path.join(folder, "init.ctp")
        init = vp.load(init_path, "cpu") if os.path.exists(init_path) else []
        inputs = vp.load(os.path.join(folder, "inputs_0.ctp"), "cpu")
        if self.job.get("private_inputs"):
            for name in os.listdir(folder):
                try:
                    os.remove(os.path.join(folder, name))
                except OSError:
                    pass
        return init, inputs

    def _launch_log(self):
        """The record of launches, installed before the candidate exists."""
        from .profile_launches import LaunchClock, LaunchLog
        clock = None if self.mode == "count" else LaunchClock(self.device)
        log = LaunchLog(self.path, clock)
        log.install()
        if self.mode == "count":
            from .profile_counter import OpCounter
            counter = OpCounter(self.job.get("count_cap_s", DEFAULT_COUNT_CAP_S))
            counter.install()
            log.around = counter.count
            self.facts["timer"] = "none (counted on Triton's interpreter)"
        else:
            self.facts["timer"] = {
                "cuda-events": "CUDA events recorded around each launch",
                "host-clock": ("host clock around each launch; the opencl runtime returns once "
                               "the kernel has finished (clFinish)"
                               if self.job.get("backend") == "opencl" else
                               "host clock around each launch, run by Triton's interpreter"),
            }[clock.method]
        return log

    def _model(self, init):
        loader = self.loader
        try:
            module = loader.import_file(self.path, MODULE_NAME)
        except BaseException as exc:  # SystemExit too: a fact about the candidate
            self.facts["error"] = loader.user_error(exc, self.path, "load")
            return None
        model_class = module.__dict__.get("ModelNew")
        if not isinstance(model_class, type):
            self.facts["error"] = {"stage": "load", "line": None, "traceback": "",
                                   "message": "the candidate does not define class ModelNew"}
            return None
        self.channel.phase("profile-construct")
        try:
            with self.torch.no_grad():
                model = loader.build_model(model_class, init, int(self.job.get("seed", 42)),
                                           self.device)
            model.train()  # as the verifier calls it (KernelBench modules start in train mode)
        except BaseException as exc:
            self.facts["error"] = loader.user_error(exc, self.path, "construct")
            return None
        return model

    # -- the two modes

    def _forward(self, model, copy, log):
        """One forward call on `copy` (a fresh copy of the inputs, made by the caller outside
        any timing); the launches it made (None after an error, which is then in the facts)."""
        from .candidate_stage import _call
        log.records = []
        try:
            _call(model, copy)
        except BaseException as exc:
            self.facts["error"] = self.loader.user_error(exc, self.path, "run")
            return None
        if len(log.records) > MAX_LAUNCHES:
            self.facts["error"] = {"stage": "run", "line": None, "traceback": "",
                                   "message": f"one forward call launched {len(log.records)} "
                                              f"kernels; the profile keeps at most "
                                              f"{MAX_LAUNCHES}"}
            return None
        return log.records

    def _count(self, model, args, log):
        self.channel.phase("profile-count")
        records = self._forward(model, self.loader.clone_value(args), log)
        if records is None:
            return
        self.facts["calls"] = 1
        self.facts["calls_matching"] = 1
        self.facts["launches"] = [_count_fact(r) for r in records]

    def _time(self, model, args, log):
        calls = max(1, int(self.job.get("calls", DEFAULT_CALLS)))
        warmup = max(0, int(self.job.get("warmup", DEFAULT_WARMUP)))
        self.channel.phase("profile-warmup")
        with self.lock.shared(self.facts["device_lock"]):
            for _ in range(warmup):  # compiles and autotunes happen here, not in a timed call
                if self._forward(model, self.loader.clone_value(args), log) is None:
                    return
            self.timing.sync(self.device)
        timer = self.timing.Timer(self.device)
        self.channel.phase("profile-time")
        with self.lock.exclusive(self.facts["device_lock"]):
            self._timed_calls(model, args, log, timer, calls, warmup)

    def _timed_calls(self, model, args, log, timer, calls, warmup):
        first, samples, forward_ms, matching = None, [], [], 0
        for _ in range(calls):
            copy = self.loader.clone_value(args)
            self.timing.sync(self.device)  # the copy is not part of the timed call
            ms, records = timer.time_call(lambda copy=copy: self._forward(model, copy, log))
            if records is None:
                return
            names = [r["kernel"] for r in records]
            if first is None:
                first = records
                samples = [[] for _ in records]
            if names != [r["kernel"] for r in first]:
                continue  # a call that launched other kernels is no sample, whole or per launch
            matching += 1
            forward_ms.append(ms)
            for i, r in enumerate(records):
                samples[i].append(log.clock.ms(r.get("clock", 0.0)))
        self.facts.update(calls=calls, warmup=warmup, forward_ms=forward_ms,
                          calls_matching=matching)
        self.facts["launches"] = [dict(_place_fact(r), ms=s) for r, s in zip(first, samples)]


def _place_fact(record):
    return {"kernel": record["kernel"], "launch_line": record.get("launch_line"),
            "def_line": record.get("def_line"), "grid": record.get("grid")}


def _count_fact(record):
    fact = _place_fact(record)
    for key in ("counted", "reason", "bytes_read", "bytes_written", "flops", "programs",
                "count_seconds"):
        fact[key] = record.get(key)
    if fact["counted"] is None:
        fact["counted"] = False
        fact["reason"] = fact["reason"] or "the launch did not reach the interpreter"
    return fact
