"""Calibration: a model's pass rate per (domain, difficulty) cell, as JSON and a PNG heatmap.

What it is: the measurement behind ``posttrain domains calibrate``. For each cell it samples
``n_tasks`` tasks (seeds ``seed .. seed + n_tasks - 1``), generates ``samples`` completions
per task with the given backend through :func:`posttrain.rollout.run_groups` (the one episode engine)
(the same env and verifier as training), and records the pass rate (share of samples scoring
1.0), the mean reward and the number of verifier or inference errors (excluded from both
rates, counted apart). A curriculum uses it to start where the model is learnable
(pass rate strictly between 0 and 1). Tasks whose prompt does not fit the model's context
are not sent; a cell counts them as ``too_long`` (its pass rate covers the rest, None when
none fit).

:func:`profile` measures what the catalogue shows of one domain without a model: the
reference solver's pass rate per level (the same scripted episode as the conformance check,
so multi-turn domains too), the verifier's component names, the hidden keys and the domain's
own probe names. :func:`difficulty_flags` (re-exported) flags levels that are not monotone or
a saturated level 1.

Multi-turn domains (tool and sandbox episodes, the real tier included) are played through
the same engine under ``limits`` (the episode budgets; default :class:`EpisodeLimits`), with
``max_new_tokens`` per turn; a sample passes when its episode's reward is 1.0. A text model on
a visual domain fails each episode with an inference error: those count in ``errors``.

What it does not do: confidence intervals (see :mod:`posttrain.eval`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Sequence

from posttrain.domains import get_domain, sample_task
from posttrain.domains.calibration import difficulty_flags
from posttrain.inference.base import SamplingParams

__all__ = ["calibrate", "difficulty_flags", "plot_heatmap", "profile", "write_outputs"]

PASS = 1.0 - 1e-9


def calibrate(backend: Any, domain_ids: Sequence[str], *, n_tasks: int = 16, samples: int = 1,
              temperature: float = 0.0, max_new_tokens: int = 32, seed: int = 0,
              difficulties: Sequence[int] | None = None, batch_tasks: int = 64,
              limits: Any = None) -> dict[str, Any]:
    """Pass rates of ``backend`` on every (domain, difficulty) cell; see the module docstring."""
    from posttrain.rollout import run_groups

    params = SamplingParams(n=samples, temperature=temperature, greedy=temperature == 0.0,
                            max_new_tokens=max_new_tokens, seed=seed)
    t0 = time.perf_counter()
    cells: dict[str, dict[str, Any]] = {}
    for did in domain_ids:
        dom = get_domain(did)
        levels = [d for d in dom.difficulties if difficulties is None or d in difficulties]
        cells[dom.id] = {}
        for d in levels:
            tasks = [sample_task(dom, seed + i, d) for i in range(n_tasks)]
            fit = [t for t in tasks if _fits(backend, t, max_new_tokens)]
            groups = []
            for k in range(0, len(fit), batch_tasks):
                groups += run_groups(backend, fit[k:k + batch_tasks], params, limits=limits)
            cells[dom.id][str(d)] = {**_cell_stats(groups), "too_long": len(tasks) - len(fit)}
    flags = {did: f for did, c in cells.items() if "skipped" not in c and (f := difficulty_flags(c))}
    return {"policy_version": int(getattr(backend, "policy_version", 0)),
            "params": {"n_tasks": n_tasks, "samples": samples, "temperature": temperature,
                       "max_new_tokens": max_new_tokens, "seed": seed},
            "domains": cells, "flags": flags, "wall_s": round(time.perf_counter() - t0, 3)}


def profile(dom: Any, *, n_tasks: int = 4, seed: int = 1_000_000) -> dict[str, Any]:
    """The model-free part of a domain's catalogue entry (see the module docstring).

    Per level, ``n_tasks`` tasks (seeds ``seed ..``) are played by the reference through the
    env; a Score with an error counts in ``errors``, not as a fail. Component, hidden and
    probe names are the union over the tasks seen. Never raises for a broken domain: the
    failure is recorded under ``error``.
    """
    from posttrain.rollout.scripted import replay_score

    components: set[str] = set()
    hidden: set[str] = set()
    probes: set[str] = set()
    reference: dict[str, Any] = {}
    try:
        for d in dom.difficulties:
            scores = []
            for i in range(n_tasks):
                task = sample_task(dom, seed + i, d)
                hidden |= set(task.hidden) if isinstance(task.hidden, dict) else set()
                if i == 0:
                    probes |= set(dict(dom.probes(task)))
                ref_actions = getattr(dom, "reference_actions", None)
                actions = list(ref_actions(task)) if callable(ref_actions) else [dom.solve(task)]
                score = replay_score(dom, task, actions)
                components |= set(score.components)
                scores.append(score)
            usable = [s.value for s in scores if s.error is None]
            reference[str(d)] = {
                "pass_rate": sum(v >= PASS for v in usable) / len(usable) if usable else None,
                "n_samples": len(scores), "errors": len(scores) - len(usable)}
    except Exception as exc:  # a broken domain is reported in the catalogue, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"[:300], "reference": reference}
    return {"verifier_components": sorted(components), "hidden": sorted(hidden),
            "probes": sorted(probes), "reference": reference}


def _fits(backend: Any, task: Any, max_new_tokens: int) -> bool:
    """Whether the task's prompt leaves room for an answer in the model's context (a backend
    without ``render``/``max_positions`` is assumed to fit). A prompt that does not fit is
    counted as ``too_long``, not sent: it can only fail, and says nothing of difficulty."""
    limit = getattr(backend, "max_positions", None)
    render = getattr(backend, "render", None)
    if not limit or not callable(render):
        return True
    return len(render(list(task.prompt))) + min(max_new_tokens, 8) <= limit


def _cell_stats(groups: Sequence[Any]) -> dict[str, Any]:
    trajs = [t for g in groups for t in g.trajectories]
    usable = [t for t in trajs if t.usable]
    rewards = [t.reward for t in usable]
    return {
        "pass_rate": sum(r >= PASS for r in rewards) / len(rewards) if rewards else None,
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "n_tasks": len(groups),
        "n_samples": len(trajs),
        "errors": len(trajs) - len(usable),
    }


def write_outputs(result: dict[str, Any], out: Path) -> dict[str, Path]:
    """``calibration.json`` and ``calibration.png`` (heatmap of pass rates) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "calibration.json"
    json_path.write_text(json.dumps(result, indent=2, sort_keys=True))
    png_path = out / "calibration.png"
    plot_heatmap(result, png_path)
    return {"json": json_path, "png": png_path}


def plot_heatmap(result: dict[str, Any], path: Path) -> None:
    """Rows: domains; columns: difficulties; colour: pass rate (grey where not measured)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [(did, c) for did, c in result["domains"].items() if "skipped" not in c]
    levels = sorted({int(d) for _, c in rows for d in c})
    grid = np.full((max(1, len(rows)), max(1, len(levels))), np.nan)
    for i, (_, c) in enumerate(rows):
        for j, d in enumerate(levels):
            v = c.get(str(d), {}).get("pass_rate")
            grid[i, j] = math.nan if v is None else v
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * max(1, len(levels)), 0.8 + 0.35 * max(1, len(rows))))
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    im = ax.imshow(np.ma.masked_invalid(grid), vmin=0.0, vmax=1.0, cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(levels)), [f"d{d}" for d in levels])
    ax.set_yticks(range(len(rows)), [did for did, _ in rows])
    for i in range(len(rows)):
        for j in range(len(levels)):
            if not math.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] < 0.6 else "black")
    ax.set_title(f"pass rate (policy v{result.get('policy_version', 0)})")
    fig.colorbar(im, ax=ax, fraction=0.05)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
