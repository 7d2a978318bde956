"""Sandbox benchmark: cold start, warm exec, pre-started Python, snapshots, throughput.

Every figure is measured in this one run against a baseline measured in the same run, the two
sides interleaved (A B A B) so machine noise hits both. Prints a readable table, then the key
figures as one JSON object on the last line (DESIGN.md §3, Benchmarks).

    python bench/sandbox.py [--n 40] [--seconds 2]

Targets (issue 3): cold isolated start + trivial command <= 1.6x a bare ``python3 -c pass``;
warm-pool acquire + shell command + release adds <= 3 ms over a bare ``true``; a pre-started
Python snippet < 2 ms; snapshot + restore of a 100-file tree < 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

from posttrain.sandbox import Limits, SandboxPool, Template, Timeouts
from posttrain.sandbox.bwrap import system_python
from posttrain.sandbox.isolated import IsolatedSandbox

LIMITS = Limits(memory_bytes=256 << 20, store_bytes=128 << 20)


def ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(0.9 * len(xs)))]


def interleave(a, b, n: int) -> tuple[list, list]:
    ra, rb = [], []
    for _ in range(n):
        ra.append(ms(a))
        rb.append(ms(b))
    return ra, rb


def cold(n: int, py: str) -> dict:
    def bare():
        subprocess.run([py, "-c", "pass"], check=True)

    def sandbox():
        sb = IsolatedSandbox(limits=LIMITS)
        try:
            assert sb.exec(["true"]).ok
        finally:
            cold.close_ms.append(ms(sb.close))

    cold.close_ms = []
    ms(sandbox)  # first use materialises the template and probes cgroups: not a cold start
    base, box = interleave(bare, sandbox, n)
    return {"bare_python_ms": stats(base), "cold_start_exec_ms": stats(box),
            "close_ms": stats(cold.close_ms),
            "ratio": statistics.median(box) / statistics.median(base)}


def warm(n: int, pool: SandboxPool) -> dict:
    pool.prewarm(limits=LIMITS)

    def bare():
        subprocess.run(["true"], check=True)

    def pooled():
        sb = pool.acquire(limits=LIMITS)
        try:
            assert sb.exec(["true"]).ok
        finally:
            pool.release(sb)

    pooled()
    base, box = interleave(bare, pooled, n)
    return {"bare_true_ms": stats(base), "pool_exec_ms": stats(box),
            "overhead_ms": statistics.median(box) - statistics.median(base)}


def python_snippet(n: int, py: str) -> dict:
    with IsolatedSandbox(limits=LIMITS) as sb:
        sb.run_python("pass")

        def snippet():
            assert sb.run_python("x = sum(range(100))").ok

        def bare():
            subprocess.run([py, "-c", "x = sum(range(100))"], check=True)

        base, box = interleave(bare, snippet, n)
    return {"bare_python_ms": stats(base), "snippet_ms": stats(box)}


def snapshots(n: int) -> dict:
    files = {f"src/m{i:03d}.py": f"VALUE = {i}\n" * 20 for i in range(100)}
    with IsolatedSandbox(template=Template.of(files), limits=LIMITS) as sb:
        sb.exec("for i in 1 2 3 4 5; do echo $i > work$i.txt; done")
        s0 = sb.snapshot()
        xs = []
        for _ in range(n):
            sb.write_file("scratch.txt", "changed")
            t0 = time.perf_counter()
            sid = sb.snapshot()
            sb.restore(s0)
            xs.append((time.perf_counter() - t0) * 1000)
            del sid
        assert len(sb.list_files("src")) == 100
        diff_ms = ms(lambda: sb.diff(since=s0))
    return {"snapshot_restore_ms": stats(xs), "diff_ms": diff_ms}


def throughput(pool: SandboxPool, conc: int, seconds: float) -> float:
    boxes = [pool.acquire(limits=LIMITS) for _ in range(conc)]
    count = [0] * conc
    stop = time.monotonic() + seconds

    def worker(i):
        while time.monotonic() < stop:
            assert boxes[i].exec(["true"]).ok
            count[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(conc)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    for sb in boxes:
        pool.release(sb)
    return sum(count) / took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    py = system_python()
    out: dict = {"cpus": os.cpu_count(), "loadavg": os.getloadavg()[0]}
    c = cold(args.n, py)
    print(f"cold start + true: median {c['cold_start_exec_ms'][0]:.1f} ms p90 {c['cold_start_exec_ms'][1]:.1f}"
          f" | bare python3 -c pass {c['bare_python_ms'][0]:.1f} ms | ratio {c['ratio']:.2f}"
          f" | close {c['close_ms'][0]:.1f} ms")
    with SandboxPool(backend="isolated", max_total=8, warm=1, timeouts=Timeouts(create_s=60)) as pool:
        w = warm(args.n, pool)
        print(f"warm pool acquire+true+release: median {w['pool_exec_ms'][0]:.2f} ms p90 "
              f"{w['pool_exec_ms'][1]:.2f} | bare true {w['bare_true_ms'][0]:.2f} | overhead "
              f"{w['overhead_ms']:.2f} ms")
        rates = {c_: throughput(pool, c_, args.seconds) for c_ in (1, 2, 8)}
        print("execs/s: " + ", ".join(f"c{k}={v:.0f}" for k, v in rates.items()))
    p = python_snippet(args.n, py)
    print(f"pre-started python snippet: median {p['snippet_ms'][0]:.2f} ms p90 {p['snippet_ms'][1]:.2f}"
          f" | bare python3 -c {p['bare_python_ms'][0]:.1f} ms")
    s = snapshots(args.n)
    print(f"snapshot+restore (100 files): median {s['snapshot_restore_ms'][0]:.2f} ms p90 "
          f"{s['snapshot_restore_ms'][1]:.2f} | diff {s['diff_ms']:.1f} ms")
    out.update({
        "cold_start_ratio": round(c["ratio"], 3),
        "cold_start_ms": round(c["cold_start_exec_ms"][0], 2),
        "cold_start_p90_ms": round(c["cold_start_exec_ms"][1], 2),
        "bare_python_ms": round(c["bare_python_ms"][0], 2),
        "warm_exec_overhead_ms": round(w["overhead_ms"], 3),
        "warm_exec_ms": round(w["pool_exec_ms"][0], 3),
        "warm_exec_p90_ms": round(w["pool_exec_ms"][1], 3),
        "python_snippet_ms": round(p["snippet_ms"][0], 3),
        "python_snippet_p90_ms": round(p["snippet_ms"][1], 3),
        "snapshot_restore_ms": round(s["snapshot_restore_ms"][0], 3),
        "snapshot_restore_p90_ms": round(s["snapshot_restore_ms"][1], 3),
        "execs_per_s_c1": round(rates[1], 1), "execs_per_s_c2": round(rates[2], 1),
        "execs_per_s_c8": round(rates[8], 1),
    })
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
