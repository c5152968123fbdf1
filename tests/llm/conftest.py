"""Fixtures shared by the engine suites of tests/llm."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from engine_client import Engine  # noqa: E402


@pytest.fixture
def engine():
    """A fresh crucible-model process per test, closed (and its exit code checked) after it."""
    e = Engine()
    yield e
    e.close()
