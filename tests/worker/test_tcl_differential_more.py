"""The rest of the differential corpus (tests/worker/tcl_kernels/): every module that
test_tcl_differential.py does not run, checked the same way (shim and Triton interpreter side by
side, both against PyTorch)."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_tcl_differential import OTHER_MODULES, check_module, pytestmark  # noqa: E402,F401


def test_every_module_is_run_by_one_of_the_two_files():
    assert len(OTHER_MODULES) >= 6


@pytest.mark.parametrize("mod", OTHER_MODULES)
def test_kernels_match_interpreter_and_torch(mod, tmp_path):
    check_module(mod, tmp_path)
