"""What the curriculum logs and draws: ``sched/`` metrics, ``curriculum.json`` and a heatmap.

``curriculum_json`` gives ``{"step", "cells": [{"domain", "difficulty", "pass_rate", "count",
"reward_var", ...}], "domains": [...], "events": [...]}`` — the shape the eval report reads.
``pass_rate`` and ``reward_var`` are the live (discounted) statistics the curriculum acts on,
and ``null`` for a cell never seen. ``draw_heatmap`` draws pass rate per (domain, difficulty)
as a PNG with matplotlib's Agg backend (no display needed); unseen or absent cells are grey,
the frontier level of each domain is outlined.

Guarantees: read-only views of a Curriculum; metric keys are those of ``docs/scheduler.md``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import STAGES

if TYPE_CHECKING:
    from .curriculum import Curriculum


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 6)


def curriculum_metrics(cur: "Curriculum") -> dict[str, float]:
    """Scalar ``sched/*`` metrics for the logger."""
    c = cur.counters
    st = cur.stats
    decisions = max(c["decisions"], 1)
    active, _ = cur._active_mask()
    seen = st.array("count") > 0
    pr = st.pass_rate()
    lo, hi = cur.config.learnable_band
    out = {
        "sched/step": float(cur.step),
        "sched/cells": float(len(cur.cells)),
        "sched/cells_active": float(active.sum()),
        "sched/cells_learnable": float(np.count_nonzero(active & seen & (pr > lo) & (pr < hi))),
        "sched/decisions": float(c["decisions"]),
        "sched/learnable_decision_share": c["learnable_decisions"] / decisions,
        "sched/zero_var_predicted": c["pzv_sum"] / decisions,
        "sched/groups": float(c["groups"]),
        "sched/zero_var_groups": float(c["zero_var_groups"]),
        "sched/zero_var_group_share": c["zero_var_groups"] / max(c["groups"], 1),
        "sched/promotions": float(c["promotions"]),
        "sched/demotions": float(c["demotions"]),
        "sched/frontier_mean": float(np.mean(cur.frontier / np.maximum(cur.n_levels - 1, 1))),
    }
    for s, n in zip(STAGES, cur.stage_decisions.tolist()):
        out[f"sched/stage_share/{s}"] = n / decisions
    return out


def curriculum_json(cur: "Curriculum") -> dict[str, Any]:
    st = cur.stats
    active, _ = cur._active_mask()
    s_eff, var_w = st.array("s_eff"), st.array("var_w")
    n_eff = s_eff + st.array("f_eff")
    with np.errstate(invalid="ignore", divide="ignore"):
        live_pass = np.where(n_eff > 0, s_eff / np.maximum(n_eff, 1e-300), np.nan)
        live_var = np.where(var_w > 0, st.array("var_sum") / np.maximum(var_w, 1e-300), np.nan)
    mean = st.reward_mean()
    probs = cur.probabilities()
    cells = []
    for i, (dom, diff) in enumerate(cur.cells):
        d = int(cur.dom_C[i])
        cells.append(dict(
            domain=dom, difficulty=diff, pass_rate=_num(live_pass[i]), count=int(st.count[i]),
            reward_var=_num(live_var[i]), reward_mean=_num(mean[i]), groups=int(st.groups[i]),
            lifetime_pass_rate=_num(st.passes[i] / st.count[i]) if st.count[i] else None,
            predicted_zero_var=_num(st.pzv[i]), active=bool(active[i]),
            frontier=bool(cur.lvl_C[i] == cur.frontier[d]), probability=_num(probs[(dom, diff)]),
            last_step=int(st.last_step[i])))
    domains = [dict(id=dm.id, family=dm.family, stage=cur.stage[j],
                    frontier_difficulty=dm.difficulties[int(cur.frontier[j])],
                    share=_num(float(cur.share[j])) if hasattr(cur, "share") else None,
                    decided=int(cur.decided[j]))
               for j, dm in enumerate(cur.domains)]
    return dict(step=cur.step, cells=cells, domains=domains, events=list(cur.events),
                metrics=curriculum_metrics(cur))


def write_json(doc: dict[str, Any], path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(p)  # atomic: a reader never sees half a file


def draw_heatmap(doc: dict[str, Any], path: str | Path, max_rows: int = 400) -> None:
    """PNG of pass rate per (domain, difficulty); at most ``max_rows`` domains (most sampled)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts: dict[str, int] = {}
    for c in doc["cells"]:
        counts[c["domain"]] = counts.get(c["domain"], 0) + c["count"]
    order = [d["id"] for d in doc["domains"]]
    if len(order) > max_rows:
        keep = set(sorted(order, key=lambda d: -counts[d])[:max_rows])
        order = [d for d in order if d in keep]
    diffs = sorted({c["difficulty"] for c in doc["cells"]})
    row = {d: i for i, d in enumerate(order)}
    col = {v: j for j, v in enumerate(diffs)}
    grid = np.full((len(order), len(diffs)), np.nan)
    frontier = []
    for c in doc["cells"]:
        if c["domain"] not in row:
            continue
        r, k = row[c["domain"]], col[c["difficulty"]]
        if c["pass_rate"] is not None:
            grid[r, k] = c["pass_rate"]
        if c["frontier"]:
            frontier.append((r, k))
    height = min(60.0, 1.5 + 0.22 * len(order))
    fig, ax = plt.subplots(figsize=(2.0 + 0.6 * len(diffs), height))
    cmap = plt.get_cmap("viridis").with_extremes(bad="#cccccc")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto",
                   interpolation="nearest")
    for r, k in frontier:
        ax.add_patch(plt.Rectangle((k - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="red", lw=1.2))
    ax.set_xticks(range(len(diffs)), [str(v) for v in diffs])
    ax.set_yticks(range(len(order)), order, fontsize=6 if len(order) > 40 else 8)
    ax.set_xlabel("difficulty")
    ax.set_title(f"pass rate per cell (step {doc['step']}); red: frontier")
    fig.colorbar(im, ax=ax, fraction=0.05)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
