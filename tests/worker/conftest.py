"""Worker tests import the worker package the way worker.py does: from core/worker."""
import os
import sys

WORKER_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "core", "worker"))
if WORKER_DIR not in sys.path:
    sys.path.insert(0, WORKER_DIR)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sweep: a repeat of a case on another backend or shape; run with -m sweep "
        "(ctest label slow)")
