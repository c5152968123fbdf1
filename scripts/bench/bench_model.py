#!/usr/bin/env python3
"""Prefill and decode speed and peak memory of crucible-model against llama.cpp (llama-cpp-python)
on the same GGUF file, one process per engine and run, runs alternating so that a machine whose
load changes treats both alike. Driven by scripts/bench/bench_model.sh; the `llama-cpp` mode runs inside
the benchmark environment (requirements-bench.txt).

Both engines get the same prompt tokens, decode greedily past the end-of-sequence token for a fixed
number of tokens, and use every core. Prefill tok/s = prompt tokens / time of the prompt's forward
pass; decode tok/s = tokens after the first / time to produce them (the first comes from the
prefill); decode CPU ms/token = the process's CPU time (all its threads) over those tokens, which
a loaded machine changes far less than tok/s. Peak memory is the process's VmHWM (llama.cpp's
includes the Python interpreter and llama-cpp-python, measured alone as `base`). --dtype takes a
comma-separated list: each run then measures crucible-model once per dtype.

usage: bench_model.py all GGUF --binary build/bin/crucible-model --bench-python PY [--runs N]
           [--tokens N] [--threads N] [--dtype auto|float32|bfloat16|int8|int4] [--device D]
           [--skip-llama-cpp]
       bench_model.py llama-cpp GGUF --prompt-file F --tokens N --threads T   (prints JSON)
"""
import argparse
import json
import os
import subprocess
import sys
import time

PROMPT = (
    "You are given a PyTorch reference model that applies a linear layer, a GELU activation and a "
    "softmax over the last dimension. Write an equivalent Triton kernel that fuses the three "
    "operations, explain how the program ids map to rows, how the block size is chosen, how the "
    "reduction for the softmax is made numerically stable, and which masks guard the loads and "
    "stores when the row length is not a multiple of the block size. Then list the tests you "
    "would run to compare it with the reference on random inputs of several shapes and dtypes.")


def peak_rss_mib(pid="self"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid):
    """User + system CPU time of a process so far (its threads included)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_ours(binary, gguf, tokens, dtype, device="cpu"):
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    first_token_cpu = []

    def request(op, **fields):
        proc.stdin.write((json.dumps({"op": op, "id": 1, **fields}) + "\n").encode())
        proc.stdin.flush()
        while True:
            event = json.loads(proc.stdout.readline())
            if event.get("id") == 1 and event["ev"] == "token" and not first_token_cpu:
                first_token_cpu.append(cpu_seconds(proc.pid))
            if event.get("id") == 1 and event["ev"] != "token":
                if event["ev"] == "error":
                    raise RuntimeError(event["message"])
                return event

    start = time.perf_counter()
    info = request("load", path=gguf, dtype=dtype, device=device)
    load_s = time.perf_counter() - start
    cpu = cpu_seconds(proc.pid)
    done = request("generate", prompt=PROMPT, max_tokens=tokens, ignore_eos=True)
    end_cpu = cpu_seconds(proc.pid)
    decode_cpu = end_cpu - first_token_cpu[0]
    cpu = end_cpu - cpu
    rss = peak_rss_mib(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=60)
    usage, timing = done["usage"], done["timing"]
    return {"engine": f"crucible-model {info['decoder']['dtype']}", "device": info["decoder"]["device"],
            "threads": info["decoder"]["threads"],
            "prompt_tokens": usage["prompt_tokens"], "generated_tokens": usage["generated_tokens"],
            "load_s": load_s, "prefill_tok_s": usage["prompt_tokens"] / timing["prefill_s"],
            "decode_tok_s": (usage["generated_tokens"] - 1) / timing["decode_s"], "peak_rss_mib": rss,
            "generate_cpu_s": cpu, "decode_cpu_ms": 1e3 * decode_cpu / (usage["generated_tokens"] - 1)}


def run_llama_cpp(gguf, tokens, threads):
    base = peak_rss_mib()
    from llama_cpp import Llama  # only in the benchmark environment

    start = time.perf_counter()
    llm = Llama(model_path=gguf, n_ctx=1024, n_batch=512, n_threads=threads,
                n_threads_batch=threads, verbose=False)
    load_s = time.perf_counter() - start
    ids = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
    start = time.perf_counter()
    first = None
    for i, _ in enumerate(llm.generate(ids, top_k=1, top_p=1.0, temp=0.0, reset=True)):
        if i == 0:
            first, first_cpu = time.perf_counter(), time.process_time()
        if i + 1 == tokens:
            break
    end, end_cpu = time.perf_counter(), time.process_time()
    return {"engine": "llama.cpp", "threads": threads, "prompt_tokens": len(ids),
            "generated_tokens": tokens, "load_s": load_s,
            "prefill_tok_s": len(ids) / (first - start), "decode_tok_s": (tokens - 1) / (end - first),
            "peak_rss_mib": peak_rss_mib(), "base_rss_mib": base,
            "decode_cpu_ms": 1e3 * (end_cpu - first_cpu) / (tokens - 1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["all", "llama-cpp"])
    parser.add_argument("gguf")
    parser.add_argument("--binary", default="build/bin/crucible-model")
    parser.add_argument("--bench-python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--dtype", default="auto", help="crucible-model's dtypes, comma-separated (auto: int4 for a Q4 GGUF on the CPU)")
    parser.add_argument("--device", default="cpu", help="crucible-model's device (cpu, cuda, cuda:N)")
    parser.add_argument("--skip-llama-cpp", action="store_true", help="measure crucible-model alone")
    args = parser.parse_args()
    if args.mode == "llama-cpp":
        print(json.dumps(run_llama_cpp(args.gguf, args.tokens, args.threads)))
        return
    results = []
    for run in range(args.runs):
        dtypes = args.dtype.split(",")
        for engine in dtypes + ([] if args.skip_llama_cpp else ["llama.cpp"]):
            if engine in dtypes:
                os.environ["CRUCIBLE_MODEL_THREADS"] = str(args.threads)
                r = run_ours(args.binary, args.gguf, args.tokens, engine, args.device)
            else:
                out = subprocess.run([args.bench_python, __file__, "llama-cpp", args.gguf,
                                      "--tokens", str(args.tokens), "--threads", str(args.threads)],
                                     check=True, capture_output=True, text=True).stdout
                r = json.loads(out.strip().splitlines()[-1])
            r["run"] = run + 1
            r["load_avg_1m"] = os.getloadavg()[0]
            results.append(r)
            print(f"run {r['run']} {r['engine']:>20}: prefill {r['prefill_tok_s']:7.1f} tok/s  "
                  f"decode {r['decode_tok_s']:6.1f} tok/s ({r['decode_cpu_ms']:5.1f} CPU ms/token)  "
                  f"peak RSS {r['peak_rss_mib']:6.0f} MiB  "
                  f"({r['prompt_tokens']} prompt tokens, {r['threads']} threads, "
                  f"{r.get('generate_cpu_s', float('nan')):.1f} CPU s, "
                  f"load avg {r['load_avg_1m']:.1f})", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
