"""A real `crucible serve` on loopback for the service's tests, and a client for it."""
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CRUCIBLE = os.environ.get("CRUCIBLE_BIN", os.path.join(REPO, "build", "bin", "crucible"))

REFERENCE = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4096)]


def get_init_inputs():
    return []
"""

CANDIDATE = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        PAUSE

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
"""


def candidate(pause_s=0):
    """The ReLU candidate; one that takes `pause_s` seconds to build keeps its lane busy."""
    pause = f"import time; time.sleep({pause_s})" if pause_s else "pass"
    return CANDIDATE.replace("PAUSE", pause)


def request(task_id, pause_s=0, **extra):
    body = {"task_id": task_id, "reference_code": REFERENCE, "kernel_code": candidate(pause_s),
            "trials": 2}
    body.update(extra)
    return body


class Service:
    """One `crucible serve` process; `stop()` ends it as Ctrl-C would."""

    def __init__(self, tmp_path, *args, db=None):
        self.db = db or str(tmp_path / "serve.db")
        self.log = open(tmp_path / f"serve-{time.monotonic_ns()}.log", "w+")
        env = dict(os.environ, TMPDIR=str(tmp_path))
        self.process = subprocess.Popen(
            [CRUCIBLE, "serve", "--port", "0", "--db", self.db, *args],
            stdout=subprocess.DEVNULL, stderr=self.log, env=env)
        self.port = self._port()
        self.token = None

    def _port(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            self.log.seek(0)
            found = re.search(r"listening on http://[^:]+:(\d+)", self.log.read())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                self.log.seek(0)
                raise AssertionError(f"crucible serve ended: {self.log.read()}")
            time.sleep(0.1)
        raise AssertionError("crucible serve did not start listening")

    def call(self, method, path, body=None, raw=None, headers=None, timeout=600):
        """(status, parsed JSON body, headers)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                            else None)
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     method=method, headers=dict(headers or {}))
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read()), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null"), dict(e.headers)

    def health(self):
        return self.call("GET", "/health")[1]

    def wait_for(self, predicate, what, limit_s=120):
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            found = predicate(self.health())
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}: {self.health()}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def serve(tmp_path):
    started = []

    def start(*args, db=None):
        service = Service(tmp_path, *args, db=db)
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()
