"""From sample records to per-domain and overall summaries (the numbers a report shows).

For each domain and overall:
- single attempt: the pooled sample success rate with a Wilson interval, and pass@1;
- multi attempt: pass@k for each requested k (unbiased, averaged over tasks) with a bootstrap
  interval over tasks, and pass^k (all k attempts succeed);
- mean reward with a bootstrap interval over tasks;
- the layer matrix (pass rate of each measured layer, first-failure attribution counts);
- step efficiency: mean turns, action tokens and wall seconds per sample;
- checkpoint resume (L4's pass criterion for interrupted episodes): how many episodes went on
  from an episode checkpoint after an infrastructure failure, and how many of them succeeded.

Guarantees: infrastructure errors are excluded from every rate and counted in ``errors``; a
task with fewer valid samples than k is left out of pass@k (counted in ``dropped``) instead
of silently using a biased estimate; the output is plain JSON (``results.json``).
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean, median
from typing import Iterable, Sequence

import numpy as np

from .estimators import pass_at_k, pass_hat_k
from .intervals import bootstrap_ci, wilson_interval
from .layers import LAYERS
from .samples import SampleRecord


def _by_item(records: Iterable[SampleRecord]) -> dict[str, list[SampleRecord]]:
    items: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        items[r.item].append(r)
    return dict(sorted(items.items()))


def _pass_block(counts: list[tuple[int, int]], ks: Sequence[int], seed: int) -> tuple[dict, dict, dict]:
    at_k, hat_k, dropped = {}, {}, {}
    for k in ks:
        usable = [(n, c) for n, c in counts if n >= k]
        dropped[str(k)] = len(counts) - len(usable)
        if not usable:
            at_k[str(k)] = None
            hat_k[str(k)] = None
            continue
        at_k[str(k)] = bootstrap_ci([pass_at_k(n, c, k) for n, c in usable], seed=seed).to_dict()
        hat_k[str(k)] = fmean(pass_hat_k(n, c, k) for n, c in usable)
    return at_k, hat_k, dropped


def _layers(valid: list[SampleRecord]) -> tuple[dict, dict]:
    matrix = {}
    for layer in LAYERS:
        measured = [r.layers.get(layer) for r in valid if r.layers.get(layer) is not None]
        passed = sum(1 for v in measured if v)
        matrix[layer] = {"measured": len(measured), "passed": passed,
                         "rate": passed / len(measured) if measured else None}
    first = {layer: sum(1 for r in valid if r.first_failure == layer) for layer in LAYERS}
    return matrix, first


def _efficiency(valid: list[SampleRecord]) -> dict:
    if not valid:
        return {"turns": None, "tokens": None, "wall_s": None, "wall_s_median": None,
                "tokens_success": None}
    ok = [r.tokens for r in valid if r.success]
    return {"turns": fmean(r.turns for r in valid), "tokens": fmean(r.tokens for r in valid),
            "wall_s": fmean(r.wall_s for r in valid), "wall_s_median": median(r.wall_s for r in valid),
            "tokens_success": fmean(ok) if ok else None}


def summarize(records: Sequence[SampleRecord], ks: Sequence[int], seed: int = 0) -> dict:
    """Summary of one domain's (or all) records; see the module docstring for the fields."""
    valid = [r for r in records if r.status == "ok"]
    items = _by_item(valid)
    counts = [(len(rs), sum(r.success for r in rs)) for rs in items.values()]
    out: dict = {"tasks": len(_by_item(records)), "samples": len(records),
                 "errors": len(records) - len(valid), "valid_samples": len(valid)}
    ns = [n for n, _ in counts]
    out["n_per_task"] = [min(ns), max(ns)] if ns else [0, 0]
    successes = sum(c for _, c in counts)
    out["success_rate"] = wilson_interval(successes, len(valid)).to_dict() if valid else None
    out["pass@k"], out["pass^k"], out["dropped"] = _pass_block(counts, ks, seed)
    rewards = [fmean(r.reward for r in rs) for rs in items.values()]
    out["mean_reward"] = bootstrap_ci(rewards, seed=seed).to_dict() if rewards else None
    out["layers"], out["first_failure"] = _layers(valid)
    out["failed"] = sum(1 for r in valid if not r.success)
    out["efficiency"] = _efficiency(valid)
    out["checkpoint_resume"] = _resumes(records)
    return out


def _resumes(records: Sequence[SampleRecord]) -> dict:
    """L4's pass criterion for interrupted episodes: of the episodes that went on from a
    checkpoint after an infrastructure failure, how many then succeeded (every measured layer,
    L4 on long-horizon domains). An episode that failed again counts as not succeeded."""
    resumed = [r for r in records if r.resumed]
    ok = sum(1 for r in resumed if r.success)
    return {"resumed": len(resumed), "succeeded": ok,
            "rate": wilson_interval(ok, len(resumed)).to_dict() if resumed else None}


def summarize_all(records: Sequence[SampleRecord], ks: Sequence[int], seed: int = 0) -> dict:
    """``{"domains": {id: summary}, "overall": summary, "macro": {...}}``."""
    by_domain: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_domain[r.domain].append(r)
    domains = {d: summarize(rs, ks, seed) for d, rs in sorted(by_domain.items())}
    macro = {}
    for k in ks:
        vals = [s["pass@k"][str(k)]["value"] for s in domains.values() if s["pass@k"][str(k)]]
        macro[f"pass@{k}"] = float(np.mean(vals)) if vals else None
    rewards = [s["mean_reward"]["value"] for s in domains.values() if s["mean_reward"]]
    macro["mean_reward"] = float(np.mean(rewards)) if rewards else None
    return {"domains": domains, "overall": summarize(records, ks, seed), "macro": macro}


def item_scores(records: Iterable[SampleRecord], metric: str = "success") -> dict[str, float]:
    """Per-item score for paired comparison: mean success (or reward) over valid samples.

    Items whose every sample errored are absent (they cannot be paired honestly).
    """
    out = {}
    for item, rs in _by_item(r for r in records if r.status == "ok").items():
        vals = [float(r.success) if metric == "success" else r.reward for r in rs]
        out[item] = fmean(vals)
    return out
