"""The guards package in-process: launch counting on the Triton interpreter (plain, autotuned,
heuristics), the no-op switch, ATen accounting and poison, the foreign-call profiler, the
auditor's rules (without installing the hook: it cannot be removed), identity snapshots.
"""
import os
import sys
import types

# Before triton is imported (it decides at decoration time); put back when this module is done
# so later tests' subprocesses do not inherit it.
_PREVIOUS_INTERPRET = os.environ.get("TRITON_INTERPRET")
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from crucible_worker import guards, value_pack as vp  # noqa: E402

if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("triton was configured without the interpreter", allow_module_level=True)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})],
                 key=["n"])
@triton.jit
def _tuned_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.heuristics(values={"BLOCK": lambda args: 32})
@triton.jit
def _heuristic_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def _restore_environment():
    if _PREVIOUS_INTERPRET is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = _PREVIOUS_INTERPRET


_restore_environment()  # the kernels above are interpreted; other modules' tests run unaffected


@pytest.fixture(scope="module", autouse=True)
def _interpreter_environment():
    os.environ["TRITON_INTERPRET"] = "1"
    yield
    _restore_environment()


@pytest.fixture(scope="module")
def tracker():
    t = guards.LaunchTracker()
    t.install()
    return t


def test_plain_launch_counted_and_noop(tracker):
    src = torch.arange(40, dtype=torch.float32)
    dst = torch.zeros(40)
    before = tracker.snapshot()
    _copy_kernel[(3,)](src, dst, 40, BLOCK=16)
    assert tracker.since(before) == (1, {"_copy_kernel": 1})
    assert torch.equal(dst, src)
    dst.zero_()
    tracker.noop = True
    try:
        assert _copy_kernel[(3,)](src, dst, 40, BLOCK=16) is None
    finally:
        tracker.noop = False
    assert torch.equal(dst, torch.zeros(40))
    assert tracker.depth == 0


def test_autotuned_and_heuristics_count_once_per_call(tracker):
    src = torch.arange(40, dtype=torch.float32)
    for kernel, name in ((_tuned_copy, "_tuned_copy"), (_heuristic_copy, "_heuristic_copy")):
        dst = torch.zeros(40)
        before = tracker.snapshot()
        kernel[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](src, dst, 40)
        kernel[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](src, dst, 40)
        # the autotuner's benchmarking launches are inside the launch, not counted
        assert tracker.since(before) == (2, {name: 2})
        assert torch.equal(dst, src)


def test_aten_guard_ignores_ops_inside_launches_and_poisons(tracker):
    src = torch.arange(40, dtype=torch.float32)
    aten = guards.AtenGuard(tracker)
    with torch.no_grad(), aten:
        out = torch.empty(40)
        _copy_kernel[(1,)](src, out, 20, BLOCK=32)  # writes the first 20 only
        y = (src + 1).view(4, 10).t().contiguous()
        z = y.half()
        _ = src[3].item()
    assert vp.count_poison(out) == 20
    assert torch.equal(out[:20], src[:20])
    assert aten.compute == {"aten::add.Tensor": 1}
    assert aten.scalar_reads == 1
    assert aten.downcasts == 1
    assert aten.poisoned == 1
    assert aten.by_class["view"] >= 2 and aten.by_class["copy"] >= 2
    assert z.dtype == torch.float16


def test_op_classes():
    assert guards.op_class("empty_like") == "allocation"
    assert guards.op_class("_unsafe_view") == "view"
    assert guards.op_class("_to_copy") == "copy"
    assert guards.op_class("sym_size") == "metadata"
    assert guards.op_class("_local_scalar_dense") == "scalar_read"
    assert guards.op_class("mm") == "compute"
    assert guards.op_name(torch.ops.aten.add.Tensor) == "aten::add.Tensor"
    assert guards.op_name(torch.ops.aten.mm.default) == "aten::mm.default"


def _fake_candidate(tmp_path, source):
    path = tmp_path / "cand.py"
    path.write_text(source)
    code = compile(source, str(path), "exec")
    namespace = {"__name__": "fake_candidate"}
    exec(code, namespace)
    return str(path), namespace


def test_foreign_call_profiler(tmp_path):
    import numpy  # noqa: F401
    path, ns = _fake_candidate(tmp_path, (
        "import math\nimport numpy as np\nimport torch\n"
        "def f(x):\n"
        "    a = x.numpy()\n"
        "    s = np.sum(a) + np.dot(a, a) + math.sqrt(4.0)\n"
        "    for _ in range(3):\n"
        "        s = s + np.sum(a)\n"
        "    return torch.from_numpy(a * s)\n"))
    code_map = guards.CodeMap(path)
    profiler = guards.ForeignCallProfiler(code_map)
    with profiler:
        ns["f"](torch.ones(3))
    assert profiler.calls == {"torch.Tensor.numpy": 1, "numpy.sum": 4, "numpy.dot": 1,
                              "math.sqrt": 1, "torch.from_numpy": 1}


def test_code_map_attribution(tmp_path):
    path, ns = _fake_candidate(tmp_path, (
        "import sys, collections\n"
        "def direct():\n"
        "    return sys._getframe()\n"
        "def via_stdlib():\n"
        "    return collections.namedtuple('P', 'a b')\n"))
    code_map = guards.CodeMap(path)
    frame = ns["direct"]()
    assert code_map.attribute(frame, direct=True) == (True, 3)
    assert code_map.kind(guards.__file__) == guards.WORKER
    assert code_map.kind(torch.__file__) == guards.TRUSTED
    assert code_map.kind(os.__file__) == guards.STDLIB
    assert code_map.kind(vp.__file__) == guards.WORKER
    import numpy
    assert code_map.kind(numpy.__file__) == guards.LIB
    assert code_map.kind("<string>") == guards.EXEC


def test_auditor_rules(tmp_path):
    out_dir, inputs_dir = tmp_path / "cand", tmp_path / "inputs"
    out_dir.mkdir()
    inputs_dir.mkdir()
    auditor = guards.Auditor(guards.CodeMap(None), write_roots=[str(out_dir)],
                             read_roots=[str(inputs_dir)])
    opener = auditor._on_open
    assert opener("open", (str(out_dir / "scratch.bin"), "wb", 0)) is None
    assert opener("open", (str(inputs_dir / "inputs_0.ctp"), "rb", 0)) is None
    assert opener("open", (torch.__file__, "r", 0)) is None
    assert opener("open", (str(tmp_path / "elsewhere"), "w", 0))[:1] == ("sandbox_violation",)
    assert opener("open", (str(tmp_path / "elsewhere"), "r", 0))[:1] == ("sandbox_violation",)
    assert opener("open", (str(inputs_dir / "x"), None, os.O_WRONLY | os.O_CREAT))[2] is True
    # the harness's result files, even inside the writable root
    assert opener("open", (str(out_dir / "actual_0.ctp"), "wb", 0))[::3] == \
        ("sandbox_violation", guards.HARNESS_ONLY)
    assert auditor._on_fs("os.rename", (str(out_dir / "a"), str(out_dir / "timed_0.ctp")))
    assert auditor._on_fs("os.remove", (str(out_dir / "a"),)) is None
    # the fd table, where the result channel could be found
    assert auditor._on_listdir("os.listdir", ("/proc/self/fd",))[:3] == \
        ("harness_tampering", auditor._on_listdir("os.listdir", ("/dev/fd",))[1], True)
    assert auditor._on_listdir("os.listdir", (str(inputs_dir),)) is None
    assert auditor._handler_for("socket.connect") == auditor._on_network
    assert auditor._handler_for("os.exec") == auditor._on_process
    assert auditor._handler_for("builtins.id") is None
    assert auditor._on_setattr("object.__setattr__", (torch.Tensor, "clone", None))[0] == \
        "harness_tampering"
    assert auditor._on_setattr("object.__setattr__", (type("Mine", (), {}), "x", 1)) is None


def test_identity_snapshot_changed_and_restore():
    module = types.ModuleType("crucible_fake_timer")
    module.clock = lambda: 1.0
    sys.modules["crucible_fake_timer"] = module
    try:
        snap = guards.IdentitySnapshot({"crucible_fake_timer.clock": module.clock})
        original = module.clock
        assert snap.changed() == []
        module.clock = lambda: 0.0
        assert snap.changed() == ["crucible_fake_timer.clock"]
        assert snap.restore() == ["crucible_fake_timer.clock"]
        assert module.clock is original and snap.changed() == []
    finally:
        del sys.modules["crucible_fake_timer"]


def test_torch_in_an_interpreted_kernel_body_is_counted(tracker, tmp_path):
    # Only the interpreter can run torch inside a kernel body; it must not hide there.
    source = (
        "import torch\nimport triton\nimport triton.language as tl\n"
        "A = torch.ones(4)\n"
        "@triton.jit\n"
        "def body_kernel(dst):\n"
        "    B = torch.mul(A, 2.0)\n"
        "    tl.store(dst + tl.arange(0, 4), tl.load(dst + tl.arange(0, 4)) + 1.0)\n")
    path, ns = _fake_candidate(tmp_path, source)
    code_map = guards.CodeMap(path)
    aten = guards.AtenGuard(tracker, code_map=code_map)
    dst = torch.zeros(4)
    with torch.no_grad(), aten:
        ns["body_kernel"][(1,)](dst)
    assert aten.compute == {"aten::mul.Tensor": 1}
    assert aten.in_kernel_body == 1
    assert torch.equal(dst, torch.ones(4))


def test_dispatch_mode_escape_is_recorded(tmp_path):
    path, ns = _fake_candidate(tmp_path, (
        "import torch\n"
        "from torch.utils._python_dispatch import _disable_current_modes\n"
        "def f(x):\n"
        "    with _disable_current_modes():\n"
        "        return x + 1\n"))
    code_map = guards.CodeMap(path)
    auditor = guards.Auditor(code_map)
    aten = guards.AtenGuard(None, code_map=code_map)
    profiler = guards.ForeignCallProfiler(code_map, None, auditor)
    with torch.no_grad(), aten, profiler:
        ns["f"](torch.ones(2))
    assert aten.compute == {}  # the escape worked...
    events = [a for a in auditor.facts() if a["event"] == "torch.dispatch_mode_escape"]
    assert events and events[0]["line"] == 4  # ...and was seen


def test_identity_snapshot_sees_a_replaced_submodule():
    import torch.cuda
    snap = guards.IdentitySnapshot()
    real = torch.cuda
    try:
        torch.cuda = types.SimpleNamespace(synchronize=lambda *a: None)
        assert "torch.cuda" in snap.changed()
        snap.restore()
        assert torch.cuda is real and snap.changed() == []
    finally:
        torch.cuda = real


def test_identity_snapshot_restores_class_attributes():
    snap = guards.IdentitySnapshot()
    original = torch.Tensor.clone
    try:
        torch.Tensor.clone = lambda self: self
        assert "torch.Tensor.clone" in snap.changed()
        assert "torch.Tensor.clone" in snap.restore()
        t = torch.ones(2)
        assert t.clone() is not t and snap.changed() == []
    finally:
        if torch.Tensor.clone is not original:
            torch.Tensor.clone = original


def test_channel_guard_keeps_candidate_code_off_the_channel(tmp_path):
    read_end, write_end = os.pipe()
    try:
        path, ns = _fake_candidate(tmp_path, (
            "import os\n"
            "def forge(fd):\n"
            "    os.write(fd, b'forged')\n"
            "def forge_dup(fd):\n"
            "    os.write(os.dup(fd), b'forged')\n"
            "def forge_file(fd):\n"
            "    os.fdopen(os.dup(fd), 'wb')\n"
            "def close(fd):\n"
            "    os.closerange(3, 4096)\n"))
        code_map = guards.CodeMap(path)
        auditor = guards.Auditor(code_map)
        guard = guards.ChannelGuard(code_map, auditor)
        saved = {name: getattr(os, name) for name in guard._WRITERS + guard._CLOSERS
                 if hasattr(os, name)}
        import posix
        saved_posix = {name: getattr(posix, name) for name in saved}
        try:
            guard.install(write_end)
            for fn in ("forge", "forge_dup", "close"):
                with pytest.raises(PermissionError):
                    ns[fn](write_end)
            # opening it as a file is the auditor's to refuse (its hook is not installed here)
            verdict = auditor._on_open("open", (os.dup(write_end), "wb", 0))
            assert verdict[0] == "harness_tampering" and verdict[3] == guards.HARNESS_ONLY
            with pytest.raises(PermissionError):  # this test file is not the harness either
                os.write(write_end, b"no")
            from crucible_worker.channel import Channel
            Channel(write_end).phase("ok")  # the harness's own channel code may write
        finally:
            for name, fn in saved.items():
                setattr(os, name, fn)
            for name, fn in saved_posix.items():
                setattr(posix, name, fn)
        events = [(a["event"], a["line"]) for a in auditor.facts()]
        assert ("os.write", 3) in events and ("os.write", 5) in events
        assert ("os.closerange", 9) in events
        import json
        line = json.loads(os.read(read_end, 1000))
        if "body" in line:  # a signed channel line
            line = json.loads(line["body"])
        assert line == {"type": "phase", "name": "ok"}

    finally:
        os.close(read_end)
        os.close(write_end)


def test_recorder_ranges_are_bound_before_candidate_code_and_keep_launch_work_apart(monkeypatch):
    """The recorder's ranges come from a class bound when the guards were imported: a candidate
    that replaces torch's range helpers afterwards changes nothing. ATen compute inside a
    forward range counts, inside a launch range in it does not."""
    from torch.autograd import profiler
    monkeypatch.setattr(profiler, "record_function", None)
    if hasattr(torch._C, "_profiler"):
        monkeypatch.setattr(torch._C._profiler, "_RecordFunctionFast", None, raising=False)
    recorder = guards.AtenRecorder()
    recorder.start()
    a = torch.ones(8)
    try:
        with recorder.forward("timing"):
            a.add(1)
            with recorder.range("launch"):
                a.mul(2)
                a.mul(3)
    finally:
        facts = recorder.finish()
    assert facts["ok"], facts
    assert facts["forward_ranges"] == {"timing": 1}
    assert facts["compute"] == {"timing": {"aten::add": 1}}
