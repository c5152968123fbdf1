#!/usr/bin/env python3
"""One lane of `crucible serve` as a Ray actor: this process speaks the lane's JSON-lines
protocol to the service on stdin and stdout, and the actor runs `crucible lane` on whichever node
of the cluster Ray places it, pinned to the GPU Ray gives it. Ray does the placing and the
restarting of nodes; the service still retries a job whose lane died (this process ends when
the actor or its node does).

Usage: lane.py --address ADDRESS --crucible PATH [--backend B] [--num-gpus N]
               [--resources JSON]
"""
import argparse
import json
import os
import subprocess
import sys


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="the Ray cluster (ray://... or IP:PORT)")
    parser.add_argument("--crucible", required=True, help="the crucible binary on every node")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--num-gpus", type=float, default=0)
    parser.add_argument("--resources", default="{}", help="custom Ray resources, as JSON")
    return parser.parse_args()


class Lane:
    """The actor: `crucible lane` as a child on its node, one job line at a time."""

    def __init__(self, crucible, backend):
        self.child = subprocess.Popen([crucible, "lane", "--backend", backend],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      bufsize=1)
        self.ready = self._line()

    def _line(self):
        while True:
            line = self.child.stdout.readline()
            if not line:
                raise RuntimeError(f"crucible lane ended (exit {self.child.wait()})")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                return message

    def hello(self):
        import ray
        return dict(self.ready, node=ray.get_runtime_context().get_node_id(),
                    gpus=os.environ.get("CUDA_VISIBLE_DEVICES", ""))

    def run(self, line):
        self.child.stdin.write(line.rstrip("\n") + "\n")
        self.child.stdin.flush()
        return self._line()


def main():
    args = parse_args()
    import ray
    ray.init(address=args.address, logging_level="ERROR", log_to_driver=False)
    actor = ray.remote(Lane).options(num_gpus=args.num_gpus,
                                     resources=json.loads(args.resources),
                                     max_restarts=0).remote(args.crucible, args.backend)
    try:
        ready = ray.get(actor.hello.remote())
    except Exception as exc:  # the service reports why the lane is down
        print(json.dumps({"ready": False, "error": f"the Ray lane did not start: {exc}"}),
              flush=True)
        return 1
    # The service watches this process: its pid stands for the lane's.
    print(json.dumps(dict(ready, pid=os.getpid(), remote_pid=ready.get("pid"))), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        if json.loads(line).get("op") == "quit":
            break
        print(json.dumps(ray.get(actor.run.remote(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
