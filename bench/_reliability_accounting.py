"""The end-of-run books of a run folder made with the SQLite work store (the chaos loop's checks).

What it checks, from the files alone (``work.sqlite``, ``metrics.jsonl``, ``groups.jsonl``,
``model/``):

- :func:`task_books`: every task of every job item has exactly one outcome in the ledger
  (``lost``: scheduled with none, ``duplicated``: extra outcomes or outcomes of tasks never
  scheduled), every job item ended ``done`` and acknowledged, and every outcome other than
  ``trained`` says why;
- :func:`step_books`: every RL step's metrics row appears once, for steps 1..N, and
  ``groups.jsonl`` holds each step's groups once;
- :func:`weights_equal`: two saved models hold bit-identical tensors.

Guarantees: read-only (the store is opened through ``WorkStore``, which only creates tables
that already exist); counts are exact, not sampled. Does not: judge whether an outcome is the
right one (a ``failed`` with a reason is accounted for, as the ledger's contract says).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any


def task_books(run: Path) -> dict[str, Any]:
    from posttrain.scheduler.ledger import OutcomeLedger
    from posttrain.scheduler.store import WorkStore

    store = WorkStore(run / "work.sqlite")
    try:
        rows = store.connection().execute("SELECT key, payload, state, acked FROM items").fetchall()
        scheduled: Counter[tuple[int, str]] = Counter()
        for _key, payload, _state, _acked in rows:
            job = json.loads(payload)
            for t in job["tasks"]:
                scheduled[(int(job["job"]), f"{t['domain']}/d{t['difficulty']}/s{t['seed']}")] += 1
        ledger = OutcomeLedger(store).rows
    finally:
        store.close()
    got = Counter((int(r["job"]), r["task"]) for r in ledger)
    lost = sum(max(0, n - got[k]) for k, n in scheduled.items())
    duplicated = sum(max(0, n - scheduled[k]) for k, n in got.items())
    return {"jobs": len(rows), "tasks": sum(scheduled.values()), "lost": lost, "duplicated": duplicated,
            "not_done": sorted(k for k, _p, s, a in rows if s != "done" or not a),
            "unexplained": sum(1 for r in ledger if r["outcome"] != "trained" and not r["reason"]),
            "outcomes": dict(Counter(r["outcome"] for r in ledger))}


def step_books(run: Path, sft_steps: int, steps: int, groups_per_step: int) -> dict[str, Any]:
    rows = [json.loads(ln) for ln in (run / "metrics.jsonl").read_text().splitlines() if ln.strip()]
    rl = Counter(r["step"] - sft_steps for r in rows
                 if r["step"] > sft_steps and any(k.startswith("loss/") for k in r))
    groups = Counter(json.loads(ln)["step"] for ln in (run / "groups.jsonl").read_text().splitlines()
                     if ln.strip())
    want = range(1, steps + 1)
    return {"steps_missing": [s for s in want if rl[s] == 0],
            "steps_duplicated": sorted(s for s, n in rl.items() if n > 1 or s not in want),
            # groups.jsonl: a line's ``step`` is the 0-based job that was trained on it
            "groups_wrong": sorted(j for j in set(groups) | set(range(steps))
                                   if groups[j] != groups_per_step)}


def weights_equal(a: Path, b: Path) -> bool:
    """Bit-identical tensors, same names, in the two saved models' safetensors files."""
    import torch
    from safetensors.torch import load_file

    files_a, files_b = sorted(a.glob("*.safetensors")), sorted(b.glob("*.safetensors"))
    if not files_a or [f.name for f in files_a] != [f.name for f in files_b]:
        return False
    for fa, fb in zip(files_a, files_b):
        ta, tb = load_file(str(fa)), load_file(str(fb))
        if ta.keys() != tb.keys() or not all(torch.equal(ta[k], tb[k]) for k in ta):
            return False
    return True
