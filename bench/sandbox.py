"""Sandbox benchmark: cold start, warm exec, pre-started Python, snapshots, throughput.

Every figure is measured in this one run against a baseline measured in the same run, the two
sides interleaved (A B A B) so machine noise hits both; medians over many repetitions. Wall
time is the headline (the targets are wall-clock); CPU time says where the time goes on a
shared machine: the benchmark moves itself into a cgroup of its own, so ``cpuacct`` counts
this process, every child and every sandbox (their cgroups nest under it) and nothing of
other users' jobs. Each figure carries the 1-minute load average measured with it.
Prints a readable table, then the key figures as one JSON object on the last line.

    python bench/sandbox.py [--n 40] [--seconds 2] [--quick]

Targets (issue 3): cold isolated start + trivial command <= 1.6x a bare ``python3 -c pass``;
warm-pool acquire + shell command + release adds <= 3 ms over a bare ``true``; a pre-started
Python snippet < 2 ms; snapshot + restore of a 100-file tree < 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

from posttrain.sandbox import Limits, SandboxPool, Template, Timeouts
from posttrain.sandbox.bwrap import system_python
from posttrain.sandbox.isolated import IsolatedSandbox

LIMITS = Limits(memory_bytes=256 << 20, store_bytes=128 << 20)


class CpuMeter:
    """CPU nanoseconds of this process tree: its own cpuacct cgroup, else rusage (no sandboxes)."""

    def __init__(self) -> None:
        self.group = None
        try:
            own = next(line.split(":", 2)[2].strip() for line in open("/proc/self/cgroup")
                       if line.split(":")[1] == "cpuacct" or "cpuacct" in line.split(":")[1].split(","))
            parent = "/sys/fs/cgroup/cpuacct" + own.rstrip("/")
            group = f"{parent}/posttrain-bench-{os.getpid()}"
            os.mkdir(group)
            with open(f"{group}/cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))
            self.group, self.parent = group, parent
        except (OSError, StopIteration):
            self.group = None
        self.source = "cgroup cpuacct (whole tree)" if self.group else "rusage self+children"

    def ns(self) -> int:
        if self.group:
            with open(f"{self.group}/cpuacct.usage") as fh:
                return int(fh.read())
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return int((s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime) * 1e9)

    def close(self) -> None:
        if self.group:
            with open(f"{self.parent}/cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))
            for _ in range(100):
                try:
                    os.rmdir(self.group)
                    break
                except OSError:
                    time.sleep(0.05)


METER: CpuMeter


class Series:
    """Wall and CPU milliseconds of repeated runs of one side."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, fn) -> None:
        c0, t0 = METER.ns(), time.perf_counter()
        fn()
        self.wall.append((time.perf_counter() - t0) * 1e3)
        self.cpu.append((METER.ns() - c0) / 1e6)

    def summary(self) -> dict:
        xs = sorted(self.wall)
        return {"wall_ms": round(statistics.median(xs), 3),
                "wall_p90_ms": round(xs[min(len(xs) - 1, int(0.9 * len(xs)))], 3),
                "cpu_ms": round(statistics.median(self.cpu), 3)}


def interleave(a, b, n: int) -> tuple[dict, dict, float]:
    sa, sb = Series(), Series()
    load0 = os.getloadavg()[0]
    for _ in range(n):
        sa.run(a)
        sb.run(b)
    return sa.summary(), sb.summary(), round((load0 + os.getloadavg()[0]) / 2, 2)


def cold(n: int, py: str) -> dict:
    def bare():
        subprocess.run([py, "-c", "pass"], check=True)

    def sandbox():
        with IsolatedSandbox(limits=LIMITS) as sb:
            assert sb.exec(["true"]).ok

    sandbox()  # first use materialises the template, builds ptinit, probes cgroups
    base, box, load = interleave(bare, sandbox, n)
    return {"bare": base, "box": box, "loadavg": load,
            "ratio": round(box["wall_ms"] / base["wall_ms"], 3)}


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
    base, box, load = interleave(bare, pooled, n)
    b2b = Series()
    for _ in range(n):
        b2b.run(pooled)
    return {"bare": base, "box": box, "loadavg": load, "b2b": b2b.summary(),
            "overhead_ms": round(box["wall_ms"] - base["wall_ms"], 3)}


def python_snippet(n: int, py: str) -> dict:
    with IsolatedSandbox(limits=LIMITS) as sb:
        sb.run_python("pass")

        def snippet():
            assert sb.run_python("x = sum(range(100))").ok

        def bare():
            subprocess.run([py, "-c", "x = sum(range(100))"], check=True)

        base, box, load = interleave(bare, snippet, n)
        b2b = Series()  # consecutive calls: no idle gap for the CPUs to go cold in
        for _ in range(n):
            b2b.run(snippet)
    return {"bare": base, "box": box, "loadavg": load, "b2b": b2b.summary()}


def snapshots(n: int) -> dict:
    files = {f"src/m{i:03d}.py": f"VALUE = {i}\n" * 20 for i in range(100)}
    with IsolatedSandbox(template=Template.of(files), limits=LIMITS) as sb:
        sb.exec("for i in 1 2 3 4 5; do echo $i > work$i.txt; done")
        s0 = sb.snapshot()
        series = Series()
        load0 = os.getloadavg()[0]
        for _ in range(n):
            sb.write_file("scratch.txt", "changed")
            series.run(lambda: (sb.snapshot(), sb.restore(s0)))
        assert len(sb.list_files("src")) == 100
        diff = Series()
        diff.run(lambda: sb.diff(since=s0))
    return {"box": series.summary(), "diff": diff.summary(), "loadavg": round(load0, 2)}


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


def fmt(name: str, side: dict, extra: str = "") -> str:
    return (f"{name}: wall median {side['wall_ms']:.2f} ms (p90 {side['wall_p90_ms']:.2f}), "
            f"CPU median {side['cpu_ms']:.2f} ms{extra}")


def run(args) -> dict:
    py = system_python()
    out: dict = {"cpus": os.cpu_count(), "loadavg": round(os.getloadavg()[0], 2),
                 "cpu_source": METER.source, "n": args.n}
    c = cold(args.n, py)
    print(fmt("cold start + true + close", c["box"]) + f" | ratio {c['ratio']:.2f} | load {c['loadavg']}")
    print(fmt("  bare python3 -c pass", c["bare"]))
    out.update(cold_start_ratio=c["ratio"], cold_start_ms=c["box"]["wall_ms"],
               cold_start_p90_ms=c["box"]["wall_p90_ms"], cold_start_cpu_ms=c["box"]["cpu_ms"],
               bare_python_ms=c["bare"]["wall_ms"], bare_python_cpu_ms=c["bare"]["cpu_ms"],
               cold_loadavg=c["loadavg"])
    if not args.quick:
        os.environ["POSTTRAIN_SANDBOX_NATIVE"] = "0"  # the pure-Python fallback, for comparison
        try:
            f = cold(max(5, args.n // 3), py)
        finally:
            os.environ.pop("POSTTRAIN_SANDBOX_NATIVE")
        print(fmt("cold start, Python supervisor (no ptinit)", f["box"]) + f" | ratio {f['ratio']:.2f}")
        out.update(cold_start_python_sup_ms=f["box"]["wall_ms"], cold_start_python_sup_ratio=f["ratio"],
                   cold_start_python_sup_cpu_ms=f["box"]["cpu_ms"])
    with SandboxPool(backend="isolated", max_total=8, warm=1, timeouts=Timeouts(create_s=60)) as pool:
        w = warm(args.n, pool)
        print(fmt("warm pool acquire+true+release", w["box"]) + f" | overhead {w['overhead_ms']:.2f} ms"
              f" | load {w['loadavg']}")
        print(fmt("  bare true", w["bare"]))
        print(fmt("  back to back (no gap)", w["b2b"]))
        out.update(warm_exec_overhead_ms=w["overhead_ms"], warm_exec_ms=w["box"]["wall_ms"],
                   warm_exec_p90_ms=w["box"]["wall_p90_ms"], warm_exec_cpu_ms=w["box"]["cpu_ms"],
                   bare_true_ms=w["bare"]["wall_ms"], bare_true_cpu_ms=w["bare"]["cpu_ms"],
                   warm_loadavg=w["loadavg"], warm_exec_b2b_ms=w["b2b"]["wall_ms"],
                   warm_exec_b2b_cpu_ms=w["b2b"]["cpu_ms"])
        if not args.quick:
            rates = {k: throughput(pool, k, args.seconds) for k in (1, 2, 8)}
            print("execs/s: " + ", ".join(f"c{k}={v:.0f}" for k, v in rates.items()))
            out.update({f"execs_per_s_c{k}": round(v, 1) for k, v in rates.items()})
    p = python_snippet(args.n, py)
    print(fmt("pre-started python snippet", p["box"]) + f" | load {p['loadavg']}")
    print(fmt("  bare python3 -c", p["bare"]))
    print(fmt("  back to back (no gap)", p["b2b"]))
    out.update(python_snippet_ms=p["box"]["wall_ms"], python_snippet_p90_ms=p["box"]["wall_p90_ms"],
               python_snippet_cpu_ms=p["box"]["cpu_ms"], python_loadavg=p["loadavg"],
               python_snippet_b2b_ms=p["b2b"]["wall_ms"], python_snippet_b2b_cpu_ms=p["b2b"]["cpu_ms"])
    s = snapshots(args.n)
    print(fmt("snapshot+restore (100 files)", s["box"]) + f" | diff {s['diff']['wall_ms']:.2f} ms"
          f" | load {s['loadavg']}")
    out.update(snapshot_restore_ms=s["box"]["wall_ms"], snapshot_restore_p90_ms=s["box"]["wall_p90_ms"],
               snapshot_restore_cpu_ms=s["box"]["cpu_ms"], diff_ms=s["diff"]["wall_ms"])
    return out


def main() -> None:
    global METER
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, no throughput/fallback")
    args = ap.parse_args()
    if args.quick and args.n == 40:
        args.n = 15
    METER = CpuMeter()  # before any sandbox exists, so theirs nest under it
    try:
        out = run(args)
    finally:
        METER.close()
    print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
