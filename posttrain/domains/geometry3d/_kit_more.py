"""Shared plumbing of the second wave of 3D-modelling domains: :mod:`._kit` extended with the
measurements of :mod:`posttrain.verifiers.geometry_more` (surface area, centroid, an upper
bound on material, a bounding envelope, required solids that must be kept).

Scoring is :func:`._kit.score_script`'s rule unchanged — each constraint one component, an
IoU component of weight 2, and **no credit unless IoU with the hidden target is at least
0.5** and none unless every constraint marked ``"gate": true`` holds — with the extra kinds decided by :func:`posttrain.verifiers.geometry_more.check_more`.
``build`` measures the target once and fails loudly when it misses one of its own
constraints (a generator bug), widening volume and area tolerances to cover the voxel error
of the exact answer as :func:`._kit.build` does.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Mapping, Sequence

import numpy as np

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.geometry3d import _kit
from posttrain.verifiers.geometry import Grid, Program, grid_for, iou, measure, parse, voxelize
from posttrain.verifiers.geometry_more import check_more, contained_fraction, extra_measures
from posttrain.verifiers.structured import answer_text


def fmt(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.4f}".rstrip("0")


def _check(c: Mapping[str, Any], m: Mapping[str, Any], v: float) -> bool:
    got = check_more(c, m, v)
    return _kit._check(c, m, v) if got is None else got


@functools.lru_cache(maxsize=64)
def _required_voxels(script: str, grid: Grid) -> np.ndarray:
    return voxelize(_kit._parsed(script).root, grid)


def _measure(vox: np.ndarray, grid: Grid, cons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    m = measure(vox, grid) | extra_measures(vox, grid)
    for c in cons:
        if c["kind"] == "contains":
            m[f"contains:{c['name']}"] = contained_fraction(vox, _required_voxels(c["script"], grid))
    return m


def build(domain_id: str, difficulty: int, spec: str, target: str, constraints: Sequence[Mapping[str, Any]],
          intro: str = "Model this part.") -> Task:
    grid = grid_for(_kit._parsed(target).root)
    m = _measure(_kit._target_voxels(target, grid), grid, constraints)
    cons = []
    for c in constraints:
        c = dict(c)
        if c["kind"] in ("volume", "area"):
            key = "volume" if c["kind"] == "volume" else "area"
            err = abs(m[key] / c["value"] - 1)
            c["rel_tol"] = max(c.get("rel_tol", 0.03), round(1.5 * err + 0.005, 4))
        if not _check(c, m, grid.v):
            raise AssertionError(f"{domain_id}: target misses its own constraint {c} (measured "
                                 f"{ {k: m[k] for k in ('volume', 'size', 'min', 'holes', 'cavities', 'pieces', 'area')} })")
        cons.append(c)
    prompt = f"{intro}\n{spec}\n\n{_kit.LANGUAGE}"
    return make_task(domain_id, difficulty, prompt, public={"spec": spec},
                     hidden={"target": target, "constraints": cons})


def score(task: Task, answer: str, version: str) -> Score:
    text = answer_text(answer or "")
    prog = parse(text or "")
    cons = task.hidden["constraints"]
    names = [c["kind"] + (f":{c['name']}" if "name" in c else "") for c in cons]
    zeros = {n: (0.0, 1.0) for n in names} | {"iou": (0.0, _kit.WEIGHTS["iou"])}
    if not isinstance(prog, Program):
        return Score(0.0, components=zeros, reason=f"script rejected: {prog}"[:200], verifier_version=version)
    target = _kit._parsed(task.hidden["target"])
    grid = grid_for(prog.root, target.root)
    got, want = voxelize(prog.root, grid), _kit._target_voxels(task.hidden["target"], grid)
    m = _measure(got, grid, cons)
    j = iou(got, want)
    comps = {n: (1.0 if _check(c, m, grid.v) else 0.0, 1.0) for n, c in zip(names, cons)}
    comps["iou"] = (min(1.0, max(0.0, (j - _kit.IOU_GATE) / (_kit.IOU_FULL - _kit.IOU_GATE))), _kit.WEIGHTS["iou"])
    cen = ", ".join(f"{x:.1f}" for x in m["centroid"]) if not math.isnan(m["centroid"][0]) else "-"
    summary = (f"iou {j:.3f}, volume {m['volume']:.0f}, area {m['area']:.0f}, size {[round(x, 1) for x in m['size']]}, "
               f"centroid ({cen}), holes {m['holes']}, cavities {m['cavities']}, pieces {m['pieces']}")
    met = sum(1 for k, (val, _) in comps.items() if k != "iou" and val == 1.0)
    gated = [n for n, c in zip(names, cons) if c.get("gate") and comps[n][0] < 1.0]
    if gated:  # a constraint that is the point of the task (e.g. "one piece" for a connector)
        return Score(0.0, components=comps, passed=met, total=len(cons), reason=f"gate failed {gated}: {summary}",
                     verifier_version=version)
    if j < _kit.IOU_GATE:
        return Score(0.0, components=comps, passed=met, total=len(cons), reason=f"IoU below {_kit.IOU_GATE}: {summary}",
                     verifier_version=version)
    return Score.weighted(comps, passed=met, total=len(cons), reason=summary, verifier_version=version)


class Base:
    """The geometry domain skeleton: reference = hidden target, scoring and shared probes."""

    family = "geometry3d"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def solve(self, task: Task) -> str:
        return task.hidden["target"]

    def score(self, task: Task, answer: str) -> Score:
        return score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, str]:
        return _kit.probes(task)
