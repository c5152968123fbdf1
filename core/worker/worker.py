"""Entry point of Crucible's worker: `python -I -B worker.py STAGE JOB.json`.

Run with -I (isolated), so it puts its own folder on the path instead of trusting PYTHONPATH.
See docs/WORKER_PROTOCOL.md for the contract with the C++ side.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crucible_worker.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
