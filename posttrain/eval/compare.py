"""The regression gate: compare two evaluations of the same regression set, item by item.

``compare_evals(base_dir, new_dir)`` pairs the two evaluations' items per domain (only domains
whose regression-set hashes match — the same items), and tests new − base:

- one sample per item on both sides → exact McNemar test on success;
- several samples per item (or ``metric="reward"``) → paired bootstrap of per-item means;
- overall → paired bootstrap stratified by domain (each domain weighs the same).

Per-domain p-values are Holm-adjusted across domains. A domain (or the overall figure) is a
*significant regression* when its delta is below ``-margin`` and its (adjusted) one-sided
p-value is below ``alpha``. ``result["regression"]`` is true when any is; the CLI exits
non-zero on it with ``--fail-on-regression``.

Guarantees: comparing an evaluation with itself gives delta 0, p = 1 and no regression; a
domain present on one side only, or with different items, is reported under ``skipped`` and
never silently compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from posttrain.core.errors import ConfigError

from .aggregate import item_scores
from .paired import PairedResult, holm, mcnemar_exact, paired_bootstrap
from .runner import load_results
from .samples import SampleRecord, read_samples


def _load(eval_dir: Path) -> tuple[dict, list[SampleRecord]]:
    results = load_results(eval_dir)
    return results, read_samples(eval_dir / "samples.jsonl")


def _single_sample(records: list[SampleRecord]) -> bool:
    counts: dict[str, int] = {}
    for r in records:
        if r.status == "ok":
            counts[r.item] = counts.get(r.item, 0) + 1
    return bool(counts) and max(counts.values()) == 1


def _test(base: list[SampleRecord], new: list[SampleRecord], metric: str, seed: int
          ) -> tuple[PairedResult, list[str]] | None:
    b, n = item_scores(base, metric), item_scores(new, metric)
    items = sorted(set(b) & set(n))
    if not items:
        return None
    if metric == "success" and _single_sample(base) and _single_sample(new):
        return mcnemar_exact([b[i] == 1.0 for i in items], [n[i] == 1.0 for i in items]), items
    return paired_bootstrap([b[i] for i in items], [n[i] for i in items], seed=seed), items


def compare_evals(base_dir: str | Path, new_dir: str | Path, alpha: float = 0.05,
                  margin: float = 0.0, metric: str = "success", seed: int = 0) -> dict[str, Any]:
    """The paired comparison of two evaluation folders (see the module docstring)."""
    if metric not in ("success", "reward"):
        raise ConfigError(f"metric must be 'success' or 'reward', got {metric!r}")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    base_res, base_recs = _load(Path(base_dir))
    new_res, new_recs = _load(Path(new_dir))
    bh = base_res["meta"]["regression_set"]["hashes"]
    nh = new_res["meta"]["regression_set"]["hashes"]
    skipped = {d: "only in base" for d in bh if d not in nh}
    skipped.update({d: "only in new" for d in nh if d not in bh})
    skipped.update({d: "different items (regression-set hash differs)"
                    for d in bh if d in nh and bh[d] != nh[d]})
    domains: dict[str, dict] = {}
    pooled_b, pooled_n, strata = [], [], []
    for d in sorted(d for d in bh if d in nh and bh[d] == nh[d]):
        b = [r for r in base_recs if r.domain == d]
        n = [r for r in new_recs if r.domain == d]
        tested = _test(b, n, metric, seed)
        if tested is None:
            skipped[d] = "no item with a valid sample on both sides"
            continue
        res, items = tested
        domains[d] = res.to_dict()
        bs, ns = item_scores(b, metric), item_scores(n, metric)
        pooled_b += [bs[i] for i in items]
        pooled_n += [ns[i] for i in items]
        strata += [d] * len(items)
    if not domains:
        raise ConfigError(f"nothing to compare between {base_dir} and {new_dir}: {skipped}")
    adjusted = holm({d: v["p_regression"] for d, v in domains.items()})
    for d, v in domains.items():
        v["p_adjusted"] = adjusted[d]
        v["regression"] = v["delta"] < -margin and adjusted[d] < alpha
    overall = paired_bootstrap(pooled_b, pooled_n, strata=strata, seed=seed).to_dict()
    overall["regression"] = overall["delta"] < -margin and overall["p_regression"] < alpha
    regressed = sorted(d for d, v in domains.items() if v["regression"])
    return {"schema": "posttrain.compare/v1", "base": str(base_dir), "new": str(new_dir),
            "metric": metric, "alpha": alpha, "margin": margin, "domains": domains,
            "overall": overall, "skipped": skipped, "regressed_domains": regressed,
            "regression": bool(regressed) or overall["regression"]}


def write_compare(result: dict[str, Any], path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return p
