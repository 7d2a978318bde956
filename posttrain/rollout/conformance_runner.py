"""Check many domains in parallel worker processes (``check_domains``).

Each domain is checked by :func:`posttrain.rollout.conformance.check_domain` in a spawned worker
with a timeout that starts when the worker begins that domain (spawning and importing get
their own budget, :data:`STARTUP_TIMEOUT_S`). A domain that crashes, hangs or kills its worker
becomes a failed report, the worker is replaced, and the other domains carry on; results come
back in the order of ``ids``.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from posttrain.domains.base import DOMAINS, get_domain, load_builtin_domains
from posttrain.rollout.conformance import CheckReport, check_domain

STARTUP_TIMEOUT_S = 120.0

def _check_id(resolve: Callable[[str], Any], domain_id: str, kw: Mapping[str, Any]) -> CheckReport:
    try:
        domain = resolve(domain_id)
    except Exception as exc:
        return CheckReport(domain_id, False, [f"cannot load: {type(exc).__name__}: {exc}"[:300]])
    rep = check_domain(domain, **kw)
    return rep if rep.id == domain_id else replace(rep, id=domain_id)


def _worker(conn: Any, resolve: Callable[[str], Any], kw: Mapping[str, Any]) -> None:
    """Spawned worker: check the ids it is sent, one at a time, until it gets None."""
    sys.stdout = sys.stderr  # a chatty domain must not corrupt the parent's --json output
    while True:
        job = conn.recv()
        if job is None:
            return
        idx, domain_id = job
        conn.send((idx, None))  # started: the timeout counts from here, not from spawn
        conn.send((idx, _check_id(resolve, domain_id, kw)))


class _Slot:
    def __init__(self, ctx: Any, resolve: Callable[[str], Any], kw: Mapping[str, Any]):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, resolve, dict(kw)), daemon=True)
        self.proc.start()
        child.close()
        self.job: tuple[int, str] | None = None
        self.started = 0.0
        self.running = False  # the worker said it began the job (spawn + imports are done)

    def give(self, job: tuple[int, str]) -> None:
        self.job, self.started, self.running = job, time.monotonic(), False
        self.conn.send(job)

    def stop(self, kill: bool = False) -> None:
        self.proc.join(timeout=0 if kill else 5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)
        self.conn.close()


def check_domains(ids: Sequence[str] | None = None, *, resolve: Callable[[str], Any] = get_domain,
                  workers: int | None = None,
                  timeout_s: float = 600.0,
                  on_result: Callable[[int, CheckReport], None] | None = None,
                  **check_kw: Any) -> list[CheckReport]:
    """Check each id (all registered ones when None; resolved by ``resolve``, a picklable
    top-level function) in order.

    With ``workers`` ≤ 1 (or one id) the checks run in this process (no timeout). Otherwise
    in spawned workers: a domain that crashes its worker or runs past ``timeout_s`` becomes a
    failed report, the worker is replaced and the other domains carry on.
    """
    if ids is None:  # every registered domain
        load_builtin_domains()
        ids = list(DOMAINS.ids())
    ids = list(ids)
    workers = min(workers if workers is not None else (os.cpu_count() or 1), len(ids))
    results: list[CheckReport | None] = [None] * len(ids)

    def done(idx: int, rep: CheckReport) -> None:
        results[idx] = rep
        if on_result is not None:
            on_result(idx, rep)

    if workers <= 1:
        for i, did in enumerate(ids):
            done(i, _check_id(resolve, did, check_kw))
        return [r for r in results if r is not None]
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    jobs = deque(enumerate(ids))
    slots = [_Slot(ctx, resolve, check_kw) for _ in range(workers)]
    try:
        for s in slots:
            s.give(jobs.popleft())
        while any(s.job for s in slots):
            busy = [s for s in slots if s.job]
            wait([s.conn for s in busy] + [s.proc.sentinel for s in busy], timeout=1.0)
            for k, s in enumerate(slots):
                rep = _poll(s, timeout_s) if s.job else None
                if rep is None:
                    continue
                done(s.job[0], rep)
                if rep.timings.get("worker_lost"):
                    s.stop(kill=True)
                    slots[k] = s = _Slot(ctx, resolve, check_kw)
                s.job = None
                if jobs:
                    s.give(jobs.popleft())
    finally:
        for s in slots:
            try:
                s.conn.send(None)
            except (OSError, ValueError):
                pass
        for s in slots:
            s.stop()
    return [r for r in results if r is not None]


def _poll(s: _Slot, timeout_s: float) -> CheckReport | None:
    """The slot's finished report, a failed one if its worker died or timed out, else None."""
    idx, did = s.job  # type: ignore[misc]
    lost = {"worker_lost": 1.0}
    while s.conn.poll():
        try:
            got_idx, rep = s.conn.recv()
        except (EOFError, OSError):
            break
        if got_idx != idx:
            continue
        if rep is not None:
            return rep
        s.running, s.started = True, time.monotonic()
    if not s.proc.is_alive():
        return CheckReport(did, False, [f"worker process died (exit code {s.proc.exitcode})"], lost)
    # A fresh worker first imports torch and the domain library: on a loaded machine that
    # alone can take longer than a domain's budget, so it gets a separate, generous one.
    budget = timeout_s if s.running else max(timeout_s, STARTUP_TIMEOUT_S)
    if time.monotonic() - s.started > budget:
        return CheckReport(did, False, [f"timed out after {budget:.0f}s"], lost)
    return None
