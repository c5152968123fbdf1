"""The `candidate` stage: run the candidate inside the guards and report what it did
(docs/WORKER_PROTOCOL.md, "candidate"; the guards are in the guards package).

The stage never sees the reference or the expected outputs. It writes the candidate's outputs
as value packs (actual_K, actual_alt, actual_repeat, actual_noop, actual_eval, timed_K,
inputs_after_0) and returns facts; comparing them is the C++ side's business.

Nothing heavy is imported at module level: TRITON_INTERPRET must be in the environment before
torch or triton is imported, and `run` sets it first. For the opencl backend `run` puts
Crucible's `triton` shim (core/worker/triton_shim, docs/TCL.md) first on sys.path before
anything imports triton.
"""
import gc
import importlib
import os
import sys
import time

from . import timing_sets

# Bound before any candidate code exists (a candidate may replace time.perf_counter).
_perf_counter = time.perf_counter

STAGE = "candidate"
MODULE_NAME = "crucible_candidate"
DEFAULT_TIMING = {"warmup": 3, "reps": 20, "min_time_s": 0.2, "check_reps": 10}
MAX_OUTPUT_FACTS = 64  # output entries per trial


def run(job, channel):
    configure_environment(job)
    return CandidateStage(job, channel).run()


SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "triton_shim")


def configure_environment(job):
    """Environment Triton reads when it is imported (and later, through its knobs)."""
    if job.get("backend") == "interpret":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    out_dir = job.get("out_dir")
    if out_dir:
        cache = os.path.join(out_dir, "triton-cache")
        os.makedirs(cache, exist_ok=True)
        os.environ["TRITON_CACHE_DIR"] = cache
        if job.get("backend") == "opencl" and not os.environ.get("CRUCIBLE_TCL_CACHE_DIR"):
            tcl_cache = os.path.join(out_dir, "tcl-cache")
            os.makedirs(tcl_cache, exist_ok=True)
            os.environ["CRUCIBLE_TCL_CACHE_DIR"] = tcl_cache
    if job.get("backend") == "opencl":
        # PoCL's CPU device runs work-groups on its own threads: as many as PyTorch gets, so
        # that the reference and the candidate share the CPU alike (an explicit POCL_ setting
        # from the user's environment stands).
        threads = job.get("threads")
        if isinstance(threads, int) and threads > 0:
            os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(threads))
            os.environ.setdefault("POCL_CPU_MAX_CU_COUNT", str(threads))
        use_triton_shim()


def use_triton_shim():
    """Make `import triton` land on Crucible's shim (the opencl backend).

    torch caches whether it has a triton; it must see none at all, not the shim, which has none
    of the compiler modules it looks for. So torch is imported and asked with triton blocked,
    then the block is lifted and the shim goes first on sys.path. Real Triton is never
    imported. (torch._dynamo and inductor import triton's compiler directly: under this backend
    they are not available to candidate code, and the shim says so when they try.)"""
    from . import torch_lazy
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        del sys.modules[name]
    sys.modules["triton"] = None  # `import triton` raises ImportError while torch loads
    try:
        import torch  # noqa: F401
        torch_lazy.forget_triton()
    finally:
        if sys.modules.get("triton", 0) is None:
            del sys.modules["triton"]
    if sys.path[:1] != [SHIM_DIR]:
        sys.path.insert(0, SHIM_DIR)
    importlib.invalidate_caches()
    import triton
    if not getattr(triton, "CRUCIBLE_SHIM", False):  # pragma: no cover - a broken checkout
        raise RuntimeError(f"the triton shim was not found in {SHIM_DIR}: got {triton.__file__}")


def stage_device(job):
    """cuda for the cuda backend; the CPU for interpret and opencl (PoCL runs on CPU tensors)."""
    if job.get("backend") == "cuda" or (job.get("backend") is None and job.get("device") == "cuda"):
        return "cuda"
    return "cpu"


def _empty_facts(job, settings):
    return {
        "env": None,
        "sandboxed_view": None,
        "load": {"ok": False, "error": None},
        "construct": {"ok": False, "error": None},
        "trials": [],
        "alt": {"ran": False, "ok": False, "error": None},
        "repeat": {"ran": False, "ok": False, "error": None},
        "launches": {"forward_total": 0, "train": 0, "eval": 0, "by_kernel": {},
                     "timed": 0, "timed_calls": 0},
        "aten_ops": {"forward": {}, "eval": {}},
        "scalar_reads": 0,
        "foreign_calls": {},
        "outputs": [],
        "input_mutation": {"detected": False, "trials": []},
        "threads": {"before": 0, "after": 0, "started": []},
        "noop": {"ran": False, "error": None},
        "eval_mode": {"ran": False, "error": None},
        "timing": {"median_ms": None, "samples_ms": [], "fresh_ms": [], "reps": 0, "rounds": 0,
                   "warmup": int(settings["warmup"]), "check_reps": int(settings["check_reps"]),
                   "error": None},
        "tampering": [],
        "audit": [],
        "casts": {"downcasts": 0},
        "files": {},
        "device_lock": {},
        "aten_recorder": None,
    }


class _Run:
    """What one guarded forward call did."""

    def __init__(self):
        self.args = None
        self.output = None
        self.error = None
        self.launches = 0
        self.by_kernel = {}
        self.ms = None
        self.aten = None
        self.foreign = None


class CandidateStage:
    def __init__(self, job, channel):
        import torch  # noqa: F401 (after configure_environment)
        from . import torch_lazy
        # torch._dynamo's first import replaces torch.manual_seed: replaced now, without
        # dynamo's import cost, so the identity snapshot sees the final object.
        torch_lazy.settle_manual_seed(torch)
        from . import device_lock, guards, loader, timing, turns, value_pack
        self.torch = torch
        self.guards, self.loader, self.timing, self.value_pack = guards, loader, timing, value_pack
        self.job = job
        self.channel = channel
        self.path = job["candidate_path"]
        self.inputs_dir = job["inputs_dir"]
        self.out_dir = job["out_dir"]
        self.device = stage_device(job)
        self.seed = int(job.get("seed", 42))
        self.trials = int(job.get("trials", 5))
        self.settings = dict(DEFAULT_TIMING, **(job.get("timing") or {}))
        self.facts = _empty_facts(job, self.settings)
        # Opened before any candidate code exists (device_lock.py says why it is there at all).
        self.device_lock = device_lock.DeviceLock(job.get("device_lock"))
        # The timed rounds' turns with the reference's timer, taken before any candidate code.
        self.turns = turns.Turns.for_stage(channel, job)
        self.model = None
        self.inputs = []
        self.timing_inputs = []  # fresh sets for the timed calls, never seen by a trial
        self.alt_inputs = None
        self.init = None
        self._tampering = {}
        # value packs written into out_dir: name -> (sha256, identity and times just after)
        self._written = {}
        # totals over the train-mode forward calls (trials, alt, repeat) and the eval call
        self._forward_ops = {}
        self._eval_ops = {}
        # The candidate's lines where they happened, for the flags about them: line -> count.
        self._lines = {"forward": {}, "eval": {}, "scalar_reads": {}, "foreign_calls": {}}
        self._foreign = {}
        # opencl: the shim's bounds-checked switch and its report list, bound before any
        # candidate code runs (docs/TCL.md, "Bounds-checked mode")
        self._tcl = None
        if job.get("backend") == "opencl":
            from triton import runtime as tcl_runtime
            self._tcl = (tcl_runtime.set_bounds_checked, tcl_runtime.oob_events)

    # -----------------------------------------------------------------------------------------

    def run(self):
        torch = self.torch
        os.makedirs(self.out_dir, exist_ok=True)
        self.facts["timing"]["threads"] = self.timing.use_threads(self.job)
        self.facts["env"] = self.timing.env_facts(self.device)
        self.facts["sandboxed_view"] = {"cwd": os.getcwd(),
                                        "uid": os.getuid() if hasattr(os, "getuid") else None}
        # Inputs are read before any candidate code exists, so nothing it does can change them.
        self.channel.phase("candidate-inputs")
        self._load_inputs()
        # 1. guards, before the candidate is imported
        self.channel.phase("candidate-guards")
        self._install_guards()
        self.facts["os_sandbox"] = _forbid_new_processes(self.job.get("backend"))
        # 2. import
        self.channel.phase("candidate-import")
        module = self._import()
        # 3. construct
        if module is not None:
            self.channel.phase("candidate-construct")
            self._construct(module)
        self._check_identities("load")
        if self.model is not None:
            # Every forward call runs in the same state (the collector off, the same guards),
            # so a call cannot tell whether it is checked or timed: both are.
            with _no_gc():
                self.recorder.start()
                try:
                    with torch.no_grad(), self.device_lock.shared(self.facts["device_lock"]):
                        self._forward_steps()
                    self._check_identities("forward")
                    self._timing_steps()
                finally:
                    self.facts["aten_recorder"] = self.recorder.finish()
        # 11. guards re-checked
        self.channel.phase("candidate-finish")
        self._finish()
        self.device_lock.close()
        return self.facts

    # -- setup

    def _load_inputs(self):
        vp = self.value_pack
        init_path = os.path.join(self.inputs_dir, "init.ctp")
        self.init = vp.load(init_path, "cpu") if os.path.exists(init_path) else []
        for k in range(self.trials):
            self.inputs.append(vp.load(os.path.join(self.inputs_dir, f"inputs_{k}.ctp"), "cpu"))
        alt_path = os.path.join(self.inputs_dir, "inputs_alt.ctp")
        if self.job.get("alt") and os.path.exists(alt_path):
            self.alt_inputs = vp.load(alt_path, "cpu")
        from . import input_monitor
        monitor = input_monitor.client()
        if monitor is not None:  # the sets stay with the monitor until their calls
            self.timing_inputs = timing_sets.HandedOver(
                monitor, vp, lambda why: self._tampering.setdefault(f"input monitor: {why}",
                                                                    "timing"))
        else:
            for j in range(int(self.job.get("timing_sets", 0))):
                path = os.path.join(self.inputs_dir, f"timing_{j}.ctp")
                if os.path.exists(path):
                    self.timing_inputs.append(vp.load(path, "cpu"))
        if self.job.get("private_inputs"):
            _remove_files(self.inputs_dir)

    def _install_guards(self):
        g = self.guards
        self.code_map = g.CodeMap(self.path)
        roots = list(self.job.get("allowed_roots") or [self.out_dir, self.inputs_dir])
        inputs_root = os.path.realpath(self.inputs_dir)
        # The inputs folder is listed among the roots but is read-only for the candidate.
        write_roots = [r for r in roots if os.path.realpath(r) != inputs_root]
        read_roots = roots + [self.inputs_dir, os.path.dirname(os.path.abspath(self.path))]
        self.auditor = g.Auditor(self.code_map, write_roots=write_roots, read_roots=read_roots)
        self.launches = g.LaunchTracker()
        self.launches.code_map = self.code_map
        self.recorder = g.AtenRecorder()
        self.launches.recorder = self.recorder
        self.launches.install()
        self.threads = g.ThreadWatch(self.code_map, self.auditor)
        self.threads.install()
        _hide_channel(self.channel)
        self.channel_guard = g.ChannelGuard(self.code_map, self.auditor)
        fd = getattr(self.channel, "_fd", None)
        if isinstance(fd, int):
            self.channel_guard.install(fd)
        extra = dict(self.launches.entry_points)
        extra.update(self.threads.entry_points)
        extra.update(self.channel_guard.entry_points)
        self.snapshot = g.IdentitySnapshot(extra)
        self.auditor.install()

    def _import(self):
        loader = self.loader
        try:
            module = loader.import_file(self.path, MODULE_NAME)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt at import are facts too
            self.facts["load"] = {"ok": False, "error": loader.user_error(exc, self.path, "load")}
            return None
        try:  # a module-level __getattr__ is candidate code
            model_class = module.__dict__.get("ModelNew")
        except Exception:
            model_class = None
        if not isinstance(model_class, type):
            self.facts["load"] = {"ok": False, "error": {
                "stage": "load", "message": "the candidate does not define class ModelNew",
                "line": None, "traceback": ""}}
            return None
        self.facts["load"] = {"ok": True, "error": None}
        return module

    def _construct(self, module):
        loader = self.loader
        try:
            with self.torch.no_grad():
                self.model = loader.build_model(module.__dict__["ModelNew"], self.init,
                                                self.seed, self.device)
            self.model.train()
            self.facts["construct"] = {"ok": True, "error": None}
        except BaseException as exc:
            self.model = None
            self.facts["construct"] = {"ok": False,
                                       "error": loader.user_error(exc, self.path, "construct")}

    # -- steps 4 to 8: guarded forward calls

    def _forward_steps(self):
        facts = self.facts
        totals = {"launches": 0, "by_kernel": {}}
        self.channel.phase("candidate-trials")
        # 4. trials
        for k in range(self.trials):
            checked = k == 0 and self._tcl is not None
            if checked:  # the first opencl trial runs bounds-checked
                self._tcl[0](True)
            try:
                r = self._guarded(self.inputs[k], "run")
            finally:
                if checked:
                    self._tcl[0](False)
                    self._out_of_bounds()
            self._add_counts(r, totals, self._forward_ops)
            trial = {"index": k, "ok": r.error is None, "error": r.error,
                     "launches": r.launches, "ms": r.ms}
            if r.error is None:
                try:
                    facts["outputs"].extend(self._check_outputs(r.output, r.args, k))
                except Exception as exc:  # e.g. a list subclass whose iteration fails
                    facts["outputs"].append({"trial": k, "index": 0,
                                             "type": _type_name(r.output, self.torch),
                                             "plain": False, "problem":
                                             f"cannot be inspected: {type(exc).__name__}"})
                write_error = self._save(f"actual_{k}.ctp", r.output)
                if write_error is not None:
                    trial["ok"] = False
                    trial["error"] = write_error
            mutated = self._mutated_inputs(r.args, self.inputs[k])
            if mutated:
                facts["input_mutation"]["detected"] = True
                facts["input_mutation"]["trials"].append({"trial": k, "inputs": mutated})
            if k == 0:
                facts["launches"]["train"] = r.launches
                self._save("inputs_after_0.ctp", r.args)
            facts["trials"].append(trial)
            del r
        # 5. alternative batch size
        if self.alt_inputs is not None:
            self.channel.phase("candidate-alt")
            r = self._guarded(self.alt_inputs, "run")
            self._add_counts(r, totals, self._forward_ops)
            error = r.error if r.error is not None else self._save("actual_alt.ctp", r.output)
            facts["alt"] = {"ran": True, "ok": error is None, "error": error}
            del r
        if not self.inputs:
            return
        # 6. repeat of trial 0 (determinism)
        self.channel.phase("candidate-repeat")
        r = self._guarded(self.inputs[0], "run")
        self._add_counts(r, totals, self._forward_ops)
        error = r.error if r.error is not None else self._save("actual_repeat.ctp", r.output)
        facts["repeat"] = {"ran": True, "ok": error is None, "error": error}
        del r
        facts["launches"]["forward_total"] = totals["launches"]
        facts["launches"]["by_kernel"] = dict(sorted(totals["by_kernel"].items()))
        # 7. no-op launches
        self.channel.phase("candidate-noop")
        self.launches.noop = True
        try:
            r = self._guarded(self.inputs[0], "noop")
        finally:
            self.launches.noop = False
        error = r.error if r.error is not None else self._save("actual_noop.ctp", r.output)
        facts["noop"] = {"ran": True, "error": error}
        del r
        # 8. eval mode
        self.channel.phase("candidate-eval")
        try:
            self.model.eval()
            # eval() is the candidate's to override; what the forward sees is `training`.
            _set_training(self.model, False)
        except BaseException as exc:
            facts["eval_mode"] = {"ran": False,
                                  "error": self.loader.user_error(exc, self.path, "eval")}
        else:
            r = self._guarded(self.inputs[0], "eval")
            self._add_counts(r, {"launches": 0, "by_kernel": {}}, self._eval_ops)
            facts["launches"]["eval"] = r.launches
            error = r.error if r.error is not None else self._save("actual_eval.ctp", r.output)
            facts["eval_mode"] = {"ran": True, "error": error}
            del r
        try:
            self.model.train()
            _set_training(self.model, True)
        except BaseException as exc:
            if facts["eval_mode"]["error"] is None:
                facts["eval_mode"]["error"] = self.loader.user_error(exc, self.path, "eval")
        facts["aten_ops"] = {"forward": dict(sorted(self._forward_ops.items())),
                             "eval": dict(sorted(self._eval_ops.items()))}
        facts["foreign_calls"] = dict(sorted(self._foreign.items()))
        facts["lines"] = {kind: {str(line): n for line, n in sorted(counts.items())}
                          for kind, counts in self._lines.items()}

    def _guarded(self, value, stage, poison=True, timer=None, clone=True):
        """One forward call under every guard, on a fresh copy of `value` unless `clone` is off.

        Checked and timed calls go through here alike: launches counted, ATen work recorded
        below the dispatch mode (AtenRecorder), threads watched, outputs kept for checking.
        `timer` times the guarded call as a whole (what watching costs is the candidate's, in
        the samples and in the outside check alike). Timed calls (`stage` "timing") go without
        the Python-level watchers, the dispatch mode and the foreign-call profiler, whose
        callbacks cost more per call than a small kernel takes on a GPU; what they would see
        there is seen by the recorder (ATen work), the launch count, the output checks and the
        static stage (numpy). `poison` fills uninitialised allocations, which only the correctness
        trials need: a timed call that leaves elements unwritten returns stale values for fresh
        inputs, and its output is checked."""
        g, torch = self.guards, self.torch
        r = _Run()
        r.args = self.loader.clone_value(self.loader.move_to(value, self.device)) if clone \
            else value
        if stage == "timing":
            aten, profiler = _Unwatched(), _Unwatched()
        else:
            aten = g.AtenGuard(self.launches, poison=poison, code_map=self.code_map)
            profiler = g.ForeignCallProfiler(self.code_map, self.launches, self.auditor)
        before = self.launches.snapshot()
        self.threads.mark_baseline()
        self.launches.profiler = None if stage == "timing" else profiler
        model, args = self.model, r.args

        def call():
            return _guarded_forward(model, args, aten, profiler, torch, self.recorder, stage)

        start = _perf_counter()
        try:
            if timer is not None:
                r.ms, r.output = timer.time_call(call)
            else:
                r.output = call()
                self.timing.sync(self.device)
        except BaseException as exc:  # sys.exit() inside forward is an error fact, not an exit
            r.error = self.loader.user_error(exc, self.path, stage)
            r.output = None
        finally:
            self.launches.profiler = None
        if timer is None:
            r.ms = (_perf_counter() - start) * 1e3
        self.threads.after_forward()
        r.launches, r.by_kernel = self.launches.since(before)
        r.aten, r.foreign = aten, profiler.calls
        if stage != "noop":
            if stage != "timing":  # timed calls are in the recorder's facts
                self.facts["scalar_reads"] += aten.scalar_reads
                self.facts["casts"]["downcasts"] += aten.downcasts
                _add_lines(self._lines["eval" if stage == "eval" else "forward"],
                           aten.compute_lines)
                _add_lines(self._lines["scalar_reads"], aten.scalar_read_lines)
                _add_lines(self._lines["foreign_calls"], profiler.lines)
            for name, n in profiler.calls.items():
                self._foreign[name] = self._foreign.get(name, 0) + n
        return r

    @staticmethod
    def _add_counts(r, totals, ops):
        totals["launches"] += r.launches
        for name, n in r.by_kernel.items():
            totals["by_kernel"][name] = totals["by_kernel"].get(name, 0) + n
        for name, n in r.aten.compute.items():
            ops[name] = ops.get(name, 0) + n

    # -- outputs and inputs

    def _out_of_bounds(self):
        """Trial 0's out-of-bounds reports as facts; a line only when it is the candidate's."""
        events = []
        for e in list(self._tcl[1])[:16]:
            if not isinstance(e, dict):
                continue
            e = {k: e.get(k) for k in ("kernel", "file", "line", "access", "argument",
                                       "element_offset", "numel", "storage_elements")}
            e["kernel_line"] = e["line"]
            if e["file"] != os.path.basename(self.path):
                e["line"] = None
            events.append(e)
        del self._tcl[1][:]
        self.facts["out_of_bounds"] = {"checked_trial": 0, "events": events}

    def _check_outputs(self, output, args, trial):
        torch, vp = self.torch, self.value_pack
        items = list(output) if isinstance(output, (tuple, list)) else [output]
        others = {}
        for i, t in enumerate(vp.tensors_in(args)):
            ptr = _storage_ptr(t)
            if ptr:
                others.setdefault(ptr, f"input {i}")
        try:  # the candidate's module: its methods are its own code
            named = list(self.model.named_parameters()) + list(self.model.named_buffers())
        except Exception:
            named = []
        for name, t in named:
            ptr = _storage_ptr(t)
            if ptr:
                others.setdefault(ptr, f"parameter {name}")
        facts = []
        for index, item in enumerate(items[:MAX_OUTPUT_FACTS]):
            entry = {"trial": trial, "index": index, "type": _type_name(item, torch),
                     "plain": False, "problem": None}
            if not isinstance(item, torch.Tensor):
                entry["problem"] = "not a tensor"
            elif type(item) is not torch.Tensor:
                entry["problem"] = "subclass"  # its methods are its own code: not probed
            else:
                try:
                    entry["problem"] = _plain_tensor_problem(item, others, torch)
                except Exception as exc:
                    entry["problem"] = f"cannot be inspected: {type(exc).__name__}"
                entry["plain"] = entry["problem"] is None
            facts.append(entry)
        return facts

    def _mutated_inputs(self, args, pristine):
        vp = self.value_pack
        after, before = vp.tensors_in(args), vp.tensors_in(pristine)
        mutated = []
        for i, original in enumerate(before):
            try:
                if i >= len(after) or not _same_bits(after[i], original, self.torch):
                    mutated.append(i)
            except Exception:
                mutated.append(i)
        return mutated

    def _save(self, name, value):
        """Write a value pack into out_dir; the error fact when the value cannot be written.

        The file's digest goes to the facts (the parent checks the file against it); its
        identity and times are kept for step 11, which checks that nobody changed it since."""
        try:
            path = os.path.join(self.out_dir, name)
            digest = self.value_pack.save(path, value, digest=True)
            self._written[name] = (digest, _file_identity(path))
            return None
        except BaseException as exc:
            return {"stage": "output", "message": f"the output cannot be written ({name}): "
                    f"{type(exc).__name__}: {_safe_text(exc)}", "line": None, "traceback": ""}

    # -- steps 9 and 10: timing

    def _timing_steps(self):
        facts, timing, torch = self.facts, self.timing, self.torch
        result = facts["timing"]
        sets = self.timing_inputs or self.inputs
        if not sets:
            result["error"] = {"stage": "timing", "message": "no input sets", "line": None,
                               "traceback": ""}
            return
        warmup, reps = int(self.settings["warmup"]), int(self.settings["reps"])
        min_time_s = float(self.settings["min_time_s"])
        self.channel.phase("candidate-timing")
        # Each set is fetched (from the input monitor, where there is one) and placed on the
        # device only when its first timed call is about to run, into buffers reserved when its
        # round begins.
        input_sets = timing_sets.OnDevice(sets, self.loader, self.value_pack, self.device,
                               like=self.inputs[0] if self.timing_inputs and self.inputs else None)
        warmup_sets = [self.loader.move_to(v, self.device) for v in self.inputs] \
            if self.timing_inputs else input_sets
        calls = _TimedCalls(self, _KeptOutputs(_kept_output_budget(self.job)))
        # Rounds in turns with the reference's timer (turns.py): round k times the timing sets
        # the reference's round k times, and the whole measurement is shared out over them.
        rounds = timing.round_slots(len(input_sets), int(self.settings.get("rounds", 1)))
        round_reps = timing.per_round(reps, len(rounds))
        round_time_s = timing.per_round(min_time_s, len(rounds))
        round_max = timing.per_round(timing.MAX_REPS, len(rounds))
        try:
            timer = timing.Timer(self.device)
            for k, slots in enumerate(rounds):
                gc.collect()
                with self.turns.turn(k), torch.no_grad(), \
                        self.device_lock.exclusive(self.facts["device_lock"]):
                    # As the reference's timer: the full warm-up in every round (on the
                    # trials' inputs), so that no round's counted calls meet cold caches.
                    input_sets.reserve(slots)
                    calls.run(warmup_sets, input_sets, timer, warmup, round_reps, round_time_s,
                              round_max, slots)
                if calls.error is not None:
                    break
        except BaseException as exc:
            calls.error = calls.error or self.loader.user_error(exc, self.path, "timing")
        result["error"] = calls.error
        self._finish_timed_facts(calls)
        self.threads.after_forward()
        result["rounds"] = len(calls.rounds)
        fresh = calls.fresh
        if fresh:
            # Each timing set's first call counts: a set that comes round again could be
            # answered from a cache keyed by its content, so repeats are checked, not counted.
            result["median_ms"] = timing.median(fresh)
            result["samples_ms"] = calls.samples
            result["reps"] = len(result["samples_ms"])
            result["fresh_ms"] = fresh
            result["fresh_rounds_ms"] = calls.fresh_rounds
        checked = self._save_timed_outputs(calls.kept)
        result["checked"] = {"calls": calls.count, "kept": len(calls.kept.entries),
                             "files": checked}
        if result["error"] is None and calls.count and not calls.kept.entries:
            result["error"] = {"stage": "timing", "message": "no timed output could be kept "
                               "for checking", "line": None, "traceback": ""}
        calls.kept.clear()
        # 10. the cross-check the parent times from outside
        if result["error"] is None:
            gc.collect()
            with self.turns.turn(len(rounds)), \
                    self.device_lock.exclusive(self.facts["device_lock"]):
                self._check_calls(input_sets[0], int(self.settings["check_reps"]), result,
                                  calls)

    def _save_timed_outputs(self, kept):
        """Each slot's distinct kept outputs as `timed_<slot>_<n>.ctp`; {slot: files}."""
        files = {}
        for slot, outputs in sorted(kept.distinct(self.torch).items()):
            for n, output in enumerate(outputs):
                error = self._save(f"timed_{slot}_{n}.ctp", output)
                if error is not None:
                    if self.facts["timing"]["error"] is None:
                        self.facts["timing"]["error"] = error
                    break
                files[str(slot)] = n + 1
        return files

    def _check_calls(self, value, max_reps, result, calls):
        """Step 10: back-to-back calls whose interval the parent times from outside, enough of
        them for a few hundred milliseconds by the candidate's own timed median (a median
        forged low only makes the interval longer). They run under the same guards as every
        other call, one set for the whole run so that nothing but the calls lands between the
        two messages; their launches and ATen work count as timed calls', their last output is
        checked."""
        torch = self.torch
        median = result["median_ms"] or 0
        target_ms = float(self.settings.get("check_ms", 250))
        wanted = int(target_ms / median) + 1 if median > 0 else max_reps
        reps = max(1, min(max_reps, max(3, wanted)))
        # Distinct copies, made before the interval: no call gets the object (or the address)
        # the previous one got, so answering a repeated argument from a cache is not possible.
        copies = _distinct_copies(self.loader, torch, value, reps, _CHECK_COPY_BYTES)
        self.timing.sync(self.device)
        # One call first: the collection and the copy just before leave cold caches and
        # sleeping thread pools that would land in the first call of the interval.
        r = self._guarded(copies[-1], "timing", poison=False)
        calls.account(r)
        if r.error is not None:
            result["error"] = r.error
            return
        del r
        aten, profiler = _Unwatched(), _Unwatched()  # as in the timed calls
        before = self.launches.snapshot()
        self.threads.mark_baseline()
        output, done = None, 0
        self.channel.phase("timing-check-begin", reps=reps)
        try:
            for done in range(1, reps + 1):
                output = _guarded_forward(self.model, copies[done % len(copies)], aten,
                                          profiler, torch, self.recorder, "timing")
            self.timing.sync(self.device)
        except BaseException as exc:
            result["error"] = self.loader.user_error(exc, self.path, "timing")
        finally:
            self.channel.phase("timing-check-end")
        launches, _ = self.launches.since(before)
        calls.account_run(done, launches)
        if result["error"] is None and output is not None:
            error = self._save("timed_check.ctp", output)
            if error is not None:
                result["error"] = error
        result["check_reps"] = reps
        self._finish_timed_facts(calls)

    def _finish_timed_facts(self, calls):
        launches = self.facts["launches"]
        launches["timed"], launches["timed_calls"] = calls.launches, calls.count
        launches["timed_min_per_call"] = calls.min_launches

    # -- step 11

    def _check_identities(self, step):
        for label in self.snapshot.restore():
            self._tampering.setdefault(label, step)

    def _finish(self):
        facts = self.facts
        self._check_identities("end")
        self._check_written_files()
        audit = self.auditor.facts()
        facts["audit"] = audit
        facts["tampering"] = [{"what": _tampering_text(label),
                               "line": _setattr_line(label, audit), "when": step}
                              for label, step in self._tampering.items()]
        facts["threads"] = self.threads.facts()
        facts["turns"] = self.turns.facts()
        facts["files"] = {name: digest for name, (digest, _) in sorted(self._written.items())}

    def _check_written_files(self):
        """A result file that changed after the harness wrote it was not written by the
        harness: report it and remove it, so it cannot be read as the candidate's output.
        Changed means another inode, size, modification or status-change time: any write,
        replacement or `utime` moves the status-change time, which only the kernel sets."""
        for name, (_, identity) in list(self._written.items()):
            path = os.path.join(self.out_dir, name)
            try:
                current = _file_identity(path)
            except OSError:
                current = None
            if current != identity:
                self._tampering.setdefault(f"result file {name}", "end")
                del self._written[name]
                try:
                    os.remove(path)
                except OSError:
                    pass


# ---------------------------------------------------------------------------------------------
# helpers


def _add_lines(totals, counts):
    for line, n in counts.items():
        totals[line] = totals.get(line, 0) + n


class _Unwatched:
    """Stands in for the dispatch mode and the foreign-call profiler in the timed calls."""

    compute = {}
    calls = {}
    compute_lines = scalar_read_lines = lines = {}
    scalar_reads = 0
    downcasts = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def start(self):
        pass

    def stop(self):
        pass


class _TimedCalls:
    """The timed calls: warm-up and timed alike, each one guarded, on a fresh copy of one of the
    timing sets in turn, with its launches counted per call (its ATen work is in the recorder's
    "timing" stage)."""

    def __init__(self, stage, kept):
        self.stage = stage
        self.kept = kept
        self.rounds = []  # every timed call's sample, per round
        self.fresh_rounds = []  # each timing set's first call's, per round
        self.count = 0
        self.launches = 0
        self.min_launches = None
        self.error = None

    @property
    def samples(self):
        return [ms for r in self.rounds for ms in r]

    @property
    def fresh(self):
        return [ms for r in self.fresh_rounds for ms in r]

    def run(self, warmup_sets, input_sets, timer, warmup, reps, min_time_s, max_reps, slots):
        """One round: warm-up calls on `warmup_sets` (the trials' inputs, already seen), then
        timed calls on the input sets numbered in `slots`, in turn, so each set's first use is
        timed."""
        samples, fresh = [], []
        self.rounds.append(samples)
        self.fresh_rounds.append(fresh)
        previous = None  # alive while the next copy is made: no two calls share addresses
        for i in range(warmup + max_reps):
            timed = i >= warmup
            if timed and not self.stage.timing.wants_more(samples, reps, min_time_s, max_reps):
                break
            slot = slots[(i - warmup) % len(slots)] if timed else i % len(warmup_sets)
            sets = input_sets if timed else warmup_sets
            r = self.stage._guarded(sets[slot], "timing", poison=False, timer=timer)
            self.account(r)
            if r.error is not None:
                self.error = r.error
                return
            if timed:
                samples.append(r.ms)
                if i - warmup < len(slots):
                    fresh.append(r.ms)
                self.kept.offer(slot, r.output, self.stage.torch)
            previous = r.args
            del r
        del previous

    def account_run(self, count, launches):
        """`count` back-to-back calls: each must have launched."""
        if count <= 0:
            return
        self.count += count
        self.launches += launches
        fewest = 0 if launches < count else 1  # fewer launches than calls: one had none
        self.min_launches = fewest if self.min_launches is None else min(self.min_launches,
                                                                         fewest)

    def account(self, r):
        self.count += 1
        self.launches += r.launches
        self.min_launches = r.launches if self.min_launches is None \
            else min(self.min_launches, r.launches)


class _KeptOutputs:
    """Copies of timed calls' outputs, kept to be checked against their expected outputs.

    Every call's output while they fit in the budget, then a uniform sample (a reservoir) whose
    choice is drawn from os.urandom after each call returns: no call can know whether its output
    will be checked. Copies, so an output buffer the candidate reuses is checked as it was when
    its call returned."""

    def __init__(self, budget_bytes):
        self.budget = budget_bytes
        self.capacity = None
        self.entries = []  # (slot, output copy)
        self.seen = 0

    def offer(self, slot, output, torch):
        self.seen += 1
        tensors = _tensors(output, torch)
        if self.capacity is None:
            size = sum(t.numel() * t.element_size() for t in tensors)
            self.capacity = max(1, self.budget // max(1, size))
        if len(self.entries) < self.capacity:
            self.entries.append((slot, _copy(output, torch)))
            return
        j = int.from_bytes(os.urandom(8), "little") % self.seen
        if j < self.capacity:
            self.entries[j] = (slot, _copy(output, torch))

    def distinct(self, torch, limit=4):
        """{slot: up to `limit` bitwise-distinct outputs}."""
        by_slot = {}
        for slot, output in self.entries:
            found = by_slot.setdefault(slot, [])
            if len(found) < limit and not any(_same_value(output, o, torch) for o in found):
                found.append(output)
        return by_slot

    def clear(self):
        self.entries = []


# Room for the outside check's copies of its input set.
_CHECK_COPY_BYTES = 64 << 20


def _distinct_copies(loader, torch, value, count, budget):
    """Up to `count` copies of `value` within `budget` bytes (at least two)."""
    size = sum(t.numel() * t.element_size() for t in _tensors(value, torch)) or 1
    n = max(2, min(count, budget // size))
    return [loader.clone_value(value) for _ in range(n)]


def _kept_output_budget(job):
    budget = job.get("kept_output_bytes")
    return int(budget) if isinstance(budget, int) and budget > 0 else 256 << 20


def _tensors(value, torch):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item, torch)]
    return []


def _copy(value, torch):
    """A detached copy of a returned value (tensors anywhere in lists and tuples). What cannot
    be copied is kept as it is: saving it fails the same way it would have."""
    try:
        if type(value) is torch.Tensor:
            return value.detach().clone()
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            return type(value)(_copy(v, torch) for v in value)
    except Exception:
        pass
    return value


def _same_value(a, b, torch):
    """Bitwise equal tensors in the same places, compared where they are (on the device)."""
    ta, tb = _tensors(a, torch), _tensors(b, torch)
    if len(ta) != len(tb) or not ta:
        return False
    try:
        return all(_same_bits_here(x, y, torch) for x, y in zip(ta, tb))
    except Exception:
        return False


def _same_bits_here(a, b, torch):
    if type(a) is not torch.Tensor or type(b) is not torch.Tensor:
        return False
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.dtype.is_floating_point or a.dtype.is_complex:
        if not _BITS_BY_SIZE:
            _BITS_BY_SIZE.update({1: torch.int8, 2: torch.int16, 4: torch.int32,
                                  8: torch.int64})
        if a.dtype.is_complex:
            a, b = torch.view_as_real(a), torch.view_as_real(b)
        view = _BITS_BY_SIZE[a.element_size()]
        return torch.equal(a.contiguous().view(view), b.contiguous().view(view))
    return torch.equal(a, b)


def _remove_files(folder):
    """The candidate's private copy of its inputs, removed once read: nothing its code does
    later can open them."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        try:
            os.remove(os.path.join(folder, name))
        except OSError:
            pass


def _guarded_forward(model, args, aten, profiler, torch, recorder, stage):
    """One forward call inside the ATen guard, the foreign-call profiler and a range of the
    ATen recorder (named for its stage)."""
    with torch.no_grad(), recorder.forward(stage), aten:
        profiler.start()
        try:
            return _call(model, args)
        finally:
            profiler.stop()
            recorder.check_enabled()


def _call(model, value):
    if isinstance(value, (list, tuple)):
        return model(*value)
    if isinstance(value, dict):
        return model(**value)
    return model(value)


class _no_gc:
    """The cyclic garbage collector off (after a full collection) while calls are timed: a
    collection of torch's and Triton's heap takes hundreds of milliseconds on the CPU and
    would land in one sample or in the outside cross-check's mean. What is alive then is frozen
    (kept out of later collections), so the collection before each round looks only at what the
    calls made since, and costs microseconds instead of a pause between the turns."""

    def __enter__(self):
        import gc
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()
        gc.disable()
        return self

    def __exit__(self, *exc):
        import gc
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()
        return False


def _forbid_new_processes(backend):
    """No process the candidate could compute in unobserved. The interpreter needs none, so
    fork and exec are refused outright; the compilers of the other backends run programs (ptxas
    and a C compiler for CUDA, PoCL's linker for OpenCL), so there only those files may be
    executed, and a plain fork that would go on running Python is refused. Applied before the
    candidate is imported."""
    from . import os_sandbox
    if not os_sandbox.planned():
        return {"processes": {"applied": False, "reason": "no sandbox plan from the parent"}}
    facts = {}
    if backend == "cuda":
        _start_gpu_compiler()
    try:
        spawns = backend in ("cuda", "opencl")
        facts["processes"] = os_sandbox.forbid_processes(allow_spawn=spawns)
        if spawns:
            facts["executables"] = os_sandbox.restrict_execution(os_sandbox.toolchain_files())
    except OSError as exc:
        facts["processes"] = {"applied": False, "reason": str(exc)}
    return facts


def _start_gpu_compiler():
    """What Triton's CUDA driver runs once and caches: where libcuda is (it asks ldconfig) and
    its utility module (built with the C compiler). Done before the process rules, so that
    neither program needs to be executable while the candidate runs."""
    try:
        from triton.backends.nvidia.driver import libcuda_dirs
        libcuda_dirs()
        import triton
        triton.runtime.driver.active.get_current_device()
    except Exception:  # a failure here shows again, with its message, at the first launch
        pass


def _set_training(model, mode):
    """Set every submodule's `training` flag directly (not through overridable methods)."""
    for module in model.modules():
        if module.training != mode:
            object.__setattr__(module, "training", mode)


def _hide_channel(channel):
    """Move the result channel off fd 3 (close-on-exec, a high number): candidate code that
    writes to fd 3 then reaches nothing. The channel keeps working through its new fd."""
    fd = getattr(channel, "_fd", None)
    if not isinstance(fd, int):
        return
    try:
        import fcntl
        import random
        new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, random.randint(256, 900))
        os.close(fd)
        channel._fd = new
    except Exception:
        pass


def _storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:
        return 0


def _type_name(value, torch):
    cls = type(value)
    if cls is torch.Tensor:
        return "torch.Tensor"
    try:
        module = cls.__dict__.get("__module__") or getattr(cls, "__module__", None)
        name = type.__getattribute__(cls, "__qualname__")
        return f"{module}.{name}" if module and module != "builtins" else str(name)
    except Exception:
        return "<unknown type>"


def _plain_tensor_problem(tensor, others, torch):
    if tensor.layout != torch.strided:
        return "not strided"
    if tensor.numel() == 0:
        return None
    try:
        if tensor.untyped_storage().nbytes() == 0 or tensor.data_ptr() == 0:
            return "no storage"
    except Exception:
        return "no storage"
    name = others.get(_storage_ptr(tensor))
    if name is not None:
        return f"aliases {name}"
    return None


_BITS_BY_SIZE = {}


def _same_bits(a, b, torch):
    """Equal shape, dtype and bits (NaN payloads and -0.0 included)."""
    if type(a) is not torch.Tensor:
        a = a.as_subclass(torch.Tensor)
    a = a.detach()
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a = a.cpu()
    if a.dtype.is_floating_point or a.dtype.is_complex:
        if not _BITS_BY_SIZE:
            _BITS_BY_SIZE.update({1: torch.int8, 2: torch.int16, 4: torch.int32,
                                  8: torch.int64})
        size = a.element_size()
        if a.dtype.is_complex:
            a, b = torch.view_as_real(a), torch.view_as_real(b)
            size //= 2
        view = _BITS_BY_SIZE[size]
        return torch.equal(a.contiguous().view(view), b.contiguous().view(view))
    return torch.equal(a, b)


def _tampering_text(label):
    if label.startswith("input monitor: "):
        return label.partition(": ")[2]
    if label.startswith("result file "):
        return f"{label} was changed after the harness wrote it"
    return f"{label} replaced"


def _file_identity(path):
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _setattr_line(label, audit):
    """The candidate line of an audited class-attribute assignment matching `label`."""
    suffix = "." + ".".join(label.split(".")[-2:])
    for entry in audit:
        if entry.get("event") == "object.__setattr__" and \
                str(entry.get("detail", "")).endswith(suffix):
            return entry.get("line")
    return None


def _safe_text(exc):
    try:
        return str(exc)[:500]
    except Exception:
        return "<unprintable>"
