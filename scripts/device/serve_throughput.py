#!/usr/bin/env python3
"""Evaluations per minute through `crucible verify` and through `crucible serve` (one lane, then
one lane per GPU) over the same reference/candidate pairs; see device_serve.sh.

Each run starts with empty Triton and Inductor caches of its own, as a trainer's fresh candidates
do: a run after another would otherwise find every kernel compiled already.

Usage: serve_throughput.py CRUCIBLE TASK_DIR OUT_DIR [--trials N] [--no-compile-baseline]
       [--backend cuda|opencl|interpret] [--runs verify,one,all]
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request


def pairs(task_dir):
    found = []
    for ref in sorted(glob.glob(os.path.join(task_dir, "*.ref.py"))):
        cand = ref[:-len(".ref.py")] + ".cand.py"
        if os.path.exists(cand):
            found.append((os.path.basename(ref)[:-len(".ref.py")], ref, cand))
    return found


def gpu_count():
    return len([p for p in glob.glob("/dev/nvidia*") if re.fullmatch(r"/dev/nvidia\d+", p)])


def fresh_caches(out, label):
    """Points this process's children at empty compile caches under OUT for the run LABEL."""
    root = tempfile.mkdtemp(prefix=re.sub(r"[^a-z0-9]+", "_", label) + "-", dir=out)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor")


def by_verify(crucible, tasks, args):
    results, started = [], time.monotonic()
    for name, ref, cand in tasks:
        command = [crucible, "verify", ref, cand, "--backend", args.backend, "--no-db", "--json",
                   "--trials", str(args.trials)]
        if args.no_compile_baseline:
            command.append("--no-compile-baseline")
        t = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        verdict = json.loads(done.stdout).get("verdict") if done.stdout.strip() else None
        results.append({"task": name, "verdict": verdict, "seconds": time.monotonic() - t})
    return results, time.monotonic() - started


def by_service(crucible, tasks, args, lanes, out):
    log = open(os.path.join(out, f"serve-{lanes.replace(',', '_').replace(':', '')}.log"), "w+")
    service = subprocess.Popen([crucible, "serve", "--port", "0", "--lanes", lanes, "--db",
                                os.path.join(out, f"serve-{lanes.replace(',', '_').replace(':', '')}.db")],
                               stderr=log, stdout=subprocess.DEVNULL)
    try:
        port = None
        while port is None:
            time.sleep(0.2)
            log.seek(0)
            m = re.search(r"listening on http://[^:]+:(\d+)", log.read())
            port = m and int(m.group(1))
            if service.poll() is not None:
                raise SystemExit("crucible serve ended: " + open(log.name).read())
        url = f"http://127.0.0.1:{port}"
        # Lanes up before the clock starts, as a long-running service's are.
        while True:
            health = json.load(urllib.request.urlopen(url + "/health"))
            if all(lane["state"] != "starting" for lane in health["lanes"]):
                break
            time.sleep(0.2)
        tag = re.sub(r"[^A-Za-z0-9]+", "-", lanes)
        body = {"requests": [{"task_id": f"{name}-{tag}", "reference_code": open(ref).read(),
                              "kernel_code": open(cand).read(), "backend": args.backend,
                              "trials": args.trials,
                              "compile_baseline": not args.no_compile_baseline}
                             for name, ref, cand in tasks]}
        started = time.monotonic()
        answer = json.load(urllib.request.urlopen(urllib.request.Request(
            url + "/evaluate/batch", data=json.dumps(body).encode(), method="POST"),
            timeout=3600))
        wall = time.monotonic() - started
        results = [{"task": name, "verdict": r.get("verdict"), "status": r.get("status")}
                   for (name, _, _), r in zip(tasks, answer["results"])]
        return results, wall
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("crucible")
    parser.add_argument("task_dir")
    parser.add_argument("out")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--no-compile-baseline", action="store_true")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "opencl", "interpret"],
                        help="opencl or interpret: one cpu lane, to try the script without a GPU")
    parser.add_argument("--runs", default="verify,one,all",
                        help="which runs: verify (crucible verify), one (a lane), all (a lane per "
                             "GPU); a report already in OUT keeps the runs not made again")
    args = parser.parse_args()
    tasks = pairs(args.task_dir)
    os.makedirs(args.out, exist_ok=True)
    if not tasks:
        raise SystemExit(f"no *.ref.py / *.cand.py pairs in {args.task_dir}")
    report_path = os.path.join(args.out, "serve_report.json")
    report = {"tasks": len(tasks), "gpus": gpu_count(), "trials": args.trials,
              "compile_baseline": not args.no_compile_baseline, "runs": {}}
    if os.path.exists(report_path):
        kept = json.load(open(report_path))
        if (kept["tasks"], kept["trials"]) == (report["tasks"], report["trials"]):
            report["runs"] = kept["runs"]
    one_lane = "cuda:0" if args.backend == "cuda" else "cpu"
    runs = [("verify", None, "verify"), (f"serve {one_lane}", one_lane, "one")]
    if args.backend == "cuda" and report["gpus"] > 1:
        all_lanes = ",".join(f"cuda:{k}" for k in range(report["gpus"]))
        runs.append((f"serve {all_lanes}", all_lanes, "all"))
    wanted = args.runs.split(",")
    for label, lanes, key in runs:
        if key not in wanted:
            continue
        fresh_caches(args.out, label)
        results, wall = (by_verify(args.crucible, tasks, args) if lanes is None
                         else by_service(args.crucible, tasks, args, lanes, args.out))
        report["runs"][label] = {"wall_s": wall, "per_minute": 60 * len(tasks) / wall,
                                 "results": results}
        print(f"{label:32s} {wall:8.1f} s  {60 * len(tasks) / wall:6.2f} evaluations/min  "
              f"verdicts {[r['verdict'] for r in results]}", flush=True)
        with open(report_path, "w") as f:
            json.dump(report, f, indent=1)
    walls = {key: report["runs"][label]["wall_s"] for label, _, key in runs
             if label in report["runs"]}
    if "verify" in walls and "one" in walls:
        overhead = 100 * (walls["one"] - walls["verify"]) / walls["verify"]
        print(f"service overhead over crucible verify, one lane: {overhead:+.1f}%")
    if "one" in walls and "all" in walls:
        print(f"scaling over one lane: {walls['one'] / walls['all']:.2f}x")


if __name__ == "__main__":
    main()
