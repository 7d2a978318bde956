"""Verifier throughput per family, and the sandbox's share of verification time.

For every family registered in ``DOMAINS`` (built-ins and plugins alike), two worker
processes (the 2-core budget) each verify reference solutions of that family's domains:
single-turn domains score ``solve(task)`` with ``domain.score``; multi-turn domains play the
scripted reference episode first (untimed) and then time ``env.verify(trajectory)`` alone.
Reported per family: verifications/s over the wall time of both workers, the mean
milliseconds per verification, and the share of verification time spent inside sandbox
calls (lease, exec, file reads/writes — instrumented in the workers), which is what makes
code and terminal verification expensive. Multi-turn domains also report the whole scripted
episode (reset, tool calls, verify, close): milliseconds per episode and the sandbox's share of
it — the cost of driving a real tool. Real-tier domains (``tier = "real"``: a CAD kernel, a
document parser, a repository's test suite) are reported in rows of their own,
``<family>/real``.

Usage: ``python bench/verifiers.py [--per-domain 6] [--families code,terminal]``. The last
line of output is one JSON object (DESIGN.md §3, "Benchmarks").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict

os.environ.setdefault("POSTTRAIN_SANDBOX_QUIET", "1")


def _instrument(acc: dict) -> None:
    """Wrap the sandbox entry points so their time is accumulated in ``acc['sandbox_s']``."""
    from posttrain.sandbox import pool as pool_mod
    from posttrain.sandbox.isolated import IsolatedSandbox
    from posttrain.sandbox.process import ProcessSandbox

    def wrap(cls, name):
        fn = getattr(cls, name, None)
        if fn is None or getattr(fn, "_timed", False):
            return

        def timed(self, *a, **k):
            t0 = time.perf_counter()
            acc["depth"] = acc.get("depth", 0) + 1  # nested sandbox calls are counted once
            try:
                return fn(self, *a, **k)
            finally:
                acc["depth"] -= 1
                if acc["depth"] == 0:
                    acc["sandbox_s"] += time.perf_counter() - t0

        timed._timed = True
        setattr(cls, name, timed)

    for cls in (IsolatedSandbox, ProcessSandbox):
        for name in ("exec", "run_python", "write_file", "read_file", "list_files", "snapshot", "restore"):
            wrap(cls, name)
    for name in ("acquire", "release"):
        orig = getattr(pool_mod.SandboxPool, name)

        def outer(self, *a, _orig=orig, **k):
            t0 = time.perf_counter()
            acc["depth"] = acc.get("depth", 0) + 1  # restore() inside release is counted once
            try:
                return _orig(self, *a, **k)
            finally:
                acc["depth"] -= 1
                if acc["depth"] == 0:
                    acc["sandbox_s"] += time.perf_counter() - t0

        setattr(pool_mod.SandboxPool, name, outer)


def _group(dom) -> str:
    """The row a domain is reported in: its family, or ``<family>/real`` for the real tier."""
    return f"{dom.family}/real" if getattr(dom, "tier", "light") == "real" else dom.family


def _jobs(family: str, per_domain: int) -> list[tuple[str, int, int]]:
    from posttrain.domains import DOMAINS, load_builtin_domains

    load_builtin_domains()
    out = []
    for did in DOMAINS.ids():
        dom = DOMAINS.get(did)
        if _group(dom) != family:
            continue
        diffs = list(dom.difficulties)
        for i in range(per_domain):
            out.append((did, diffs[i % len(diffs)], 500_000 + i))
    return out


def _worker(jobs: list[tuple[str, int, int]], q) -> None:
    import torch

    torch.set_num_threads(1)
    from posttrain.core.types import Completion, Trajectory, Turn
    from posttrain.domains import get_domain, sample_task
    from posttrain.envs.base import call_maybe_async
    from posttrain.envs.factory import make_env

    acc = {"sandbox_s": 0.0, "verify_s": 0.0, "n": 0, "errors": 0, "episode_s": 0.0, "episode_sandbox_s": 0.0,
           "episodes": 0}
    _instrument(acc)
    for did, d, seed in jobs:
        start = acc["sandbox_s"]
        try:
            dom = get_domain(did)
            task = sample_task(dom, seed, d)
            ref = getattr(dom, "reference_actions", None)
            if callable(ref):
                ep0, ep_sb0 = time.perf_counter(), acc["sandbox_s"]
                env = make_env(dom, task)
                obs, turns = call_maybe_async(env.reset), []
                for text in ref(task):
                    act = Completion(text=text)
                    res = call_maybe_async(env.step, act)
                    turns.append(Turn(obs, act, float(res.reward), dict(res.info)))
                    if res.done:
                        break
                    obs = res.observation or obs
                before = acc["sandbox_s"]
                t0 = time.perf_counter()
                score = call_maybe_async(env.verify, Trajectory(task=task, turns=tuple(turns)))
                dt = time.perf_counter() - t0
                during = acc["sandbox_s"] - before
                getattr(env, "close", lambda: None)()
                acc["episode_s"] += time.perf_counter() - ep0
                acc["episode_sandbox_s"] += acc["sandbox_s"] - ep_sb0
                acc["episodes"] += 1
            else:
                answer = dom.solve(task)
                before = acc["sandbox_s"]
                t0 = time.perf_counter()
                score = dom.score(task, answer)
                dt = time.perf_counter() - t0
                during = acc["sandbox_s"] - before
        except Exception:  # a crashing domain is counted, not fatal to the benchmark
            acc["errors"] += 1
            acc["sandbox_s"] = start
            continue
        if score.error is not None or score.value < 0.999:
            acc["errors"] += 1
        acc["verify_s"] += dt
        # Sandbox time spent outside verify (playing the episode, closing the env) is not
        # verification time: keep only what happened inside the timed verify call.
        acc["sandbox_s"] = start + during
        acc["n"] += 1
    acc.pop("depth", None)
    q.put(acc)


def _collect(q, procs, deadline: float) -> list[dict]:
    """Results of the workers; a worker that died or ran past the deadline gives none."""
    import queue

    results: list[dict] = []
    while len(results) < len(procs) and time.perf_counter() < deadline:
        try:
            results.append(q.get(timeout=1.0))
        except queue.Empty:
            if not any(p.is_alive() for p in procs) and q.empty():
                break
    for p in procs:
        if p.is_alive():
            p.kill()
    return results


def bench_family(family: str, per_domain: int, workers: int = 2, timeout_s: float = 300.0) -> dict:
    jobs = _jobs(family, per_domain)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    parts = [jobs[i::workers] for i in range(workers)]
    t0 = time.perf_counter()
    procs = [ctx.Process(target=_worker, args=(p, q)) for p in parts if p]
    for p in procs:
        p.start()
    results = _collect(q, procs, t0 + timeout_s)
    for p in procs:
        p.join(timeout=5)
    lost = len(procs) - len(results)
    wall = time.perf_counter() - t0
    n = sum(r["n"] for r in results)
    verify_s = sum(r["verify_s"] for r in results)
    sandbox_s = sum(r["sandbox_s"] for r in results)
    return {"verifications": n, "errors": sum(r["errors"] for r in results), "lost_workers": lost,
            "verify_per_s": round(n / max(verify_s, 1e-9) * max(1, len(results)), 1),
            "ms_per_verification": round(1000 * verify_s / max(n, 1), 2),
            "sandbox_share": round(sandbox_s / verify_s, 3) if verify_s else 0.0,
            **_episodes(results), "wall_s": round(wall, 2)}


def _episodes(results: list[dict]) -> dict:
    """Whole scripted episodes of the multi-turn domains: ms each, and the sandbox's share."""
    n = sum(r.get("episodes", 0) for r in results)
    ep_s = sum(r.get("episode_s", 0.0) for r in results)
    if not n:
        return {}
    return {"episodes": n, "ms_per_episode": round(1000 * ep_s / n, 1),
            "episode_sandbox_share": round(sum(r.get("episode_sandbox_s", 0.0) for r in results) / ep_s, 3)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-domain", type=int, default=6)
    ap.add_argument("--families", default="", help="comma-separated (default: all registered)")
    args = ap.parse_args(argv)
    from posttrain.domains import DOMAINS, load_builtin_domains

    load_builtin_domains()
    fams = sorted({_group(DOMAINS.get(i)) for i in DOMAINS.ids()})
    if args.families:
        fams = [f for f in fams if f in args.families.split(",")]
    out: dict = {"cores": 2, "per_domain": args.per_domain, "families": {}}
    for fam in fams:
        out["families"][fam] = res = bench_family(fam, args.per_domain)
        print(f"{fam:14s} {res['verify_per_s']:9.1f}/s  {res['ms_per_verification']:8.2f} ms  "
              f"sandbox {100 * res['sandbox_share']:5.1f}%  n={res['verifications']} errors={res['errors']}",
              file=sys.stderr)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
