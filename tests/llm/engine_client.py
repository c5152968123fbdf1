"""A client for crucible-model's JSON-lines protocol, shared by the engine tests: one process,
requests with ids, events read back per id."""
import json
import os
import pathlib
import subprocess

HERE = pathlib.Path(__file__).parent
BINARY = os.environ.get("CRUCIBLE_MODEL_BIN", str(HERE.parents[1] / "build" / "bin" / "crucible-model"))
# cuda runs the engine on the GPU (label gpu) against transformers on the CPU.
DEVICE = os.environ.get("CRUCIBLE_MODEL_DEVICE", "cpu")
TOLERANCE = 1e-4 if DEVICE == "cpu" else 5e-4


class Engine:
    """One crucible-model process; requests carry ids, events are read back per id."""

    def __init__(self):
        # Bytes, not text mode: the protocol's line ends are "\n" only, so no newline translation.
        self.proc = subprocess.Popen([BINARY], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, op, **fields):
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"op": op, "id": self.next_id, **fields}) + "\n").encode())
        self.proc.stdin.flush()
        return self.next_id

    def read(self):
        line = self.proc.stdout.readline()
        assert line, "crucible-model closed its output"
        assert line.strip(), "crucible-model wrote an empty line"
        return json.loads(line.decode("utf-8"))

    def request(self, op, **fields):
        rid = self.send(op, **fields)
        while True:
            event = self.read()
            if event.get("id") == rid and event["ev"] != "token":
                return event

    def stream(self, op, **fields):
        rid = self.send(op, **fields)
        tokens = []
        while True:
            event = self.read()
            if event.get("id") != rid:
                continue
            if event["ev"] != "token":
                return tokens, event
            tokens.append(event)

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


def load(engine, path):
    """Loads a folder or .gguf in float32 on the test device; returns the `loaded` event."""
    event = engine.request("load", path=str(path), device=DEVICE, dtype="float32")
    assert event["ev"] == "loaded", event
    return event
