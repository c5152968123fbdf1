"""Entry point of Crucible's worker: `python -I -B worker.py STAGE JOB.json`.

Run with -I (isolated), so it puts its own folder on the path instead of trusting PYTHONPATH.
See docs/WORKER_PROTOCOL.md for the contract with the C++ side.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crucible_worker.main import main  # noqa: E402

if __name__ == "__main__":
    code = main(sys.argv[1:])
    # The facts are sent (the channel writes unbuffered). Tearing down the interpreter with
    # torch, Triton and an OpenCL runtime loaded costs a second or more and runs whatever exit
    # hooks user code registered; neither has anything left to give.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # closed or replaced by user code: nothing of ours is in it
    os._exit(code)
