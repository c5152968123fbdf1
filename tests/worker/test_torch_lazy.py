"""torch_lazy: the stages run modules without importing torch._dynamo, and what dynamo's first
import changes is done the way dynamo does it. Each check runs in a fresh interpreter, since
the test process may have imported dynamo already."""
import os
import subprocess
import sys
import textwrap

WORKER = os.path.join(os.path.dirname(__file__), "..", "..", "core", "worker")


def _run(code):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(WORKER))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_modes_and_seeding_leave_dynamo_unimported_and_its_import_changes_nothing():
    out = _run('''
        import sys
        import torch
        from torch.utils.flop_counter import FlopCounterMode
        from crucible_worker import loader, reference_stage, torch_lazy  # noqa: F401
        from crucible_worker.guards.aten_guard import AtenGuard

        torch_lazy.settle_manual_seed(torch)
        seed = torch.manual_seed
        loader.seed_all(3)
        with AtenGuard(None) as guard:
            torch.randn(4, 4).sum()
        with FlopCounterMode(display=False) as counter:
            torch.randn(8, 8) @ torch.randn(8, 8)
        assert guard.compute["aten::sum.default"] == 1, guard.compute
        assert counter.get_total_flops() == 1024
        print("before", "torch._dynamo" in sys.modules)
        import torch._dynamo  # noqa: F401
        print("seed kept", torch.manual_seed is seed)
        with AtenGuard(None) as guard:  # the mode still works, now through dynamo's skip
            torch.randn(4, 4).sum()
        print("after", guard.compute["aten::sum.default"])
        torch.manual_seed(1)
    ''')
    assert out.split("\n")[:3] == ["before False", "seed kept True", "after 1"], out


def test_torch_never_takes_the_shim_for_triton():
    out = _run('''
        import sys
        from crucible_worker import candidate_stage
        candidate_stage.use_triton_shim()
        import torch.utils._triton
        import triton
        print(triton.CRUCIBLE_SHIM, torch.utils._triton.has_triton_package(),
              "torch._dynamo" in sys.modules)
        try:
            import triton.compiler  # noqa: F401
        except ModuleNotFoundError as exc:
            print("compiler:", "shim" in str(exc))
    ''')
    assert out.split("\n")[:2] == ["True False False", "compiler: True"], out
