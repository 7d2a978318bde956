"""More measurements of voxel solids (:mod:`posttrain.verifiers.geometry`): surface area,
centroid, containment of a required solid, and checks of these against a specification.

- :func:`surface_area` — the area of the voxel boundary (faces between a solid cell and an
  empty one, times ``v**2``). Exact for axis-aligned boxes whose faces lie on cell
  boundaries; curved or slanted faces are overestimated (a staircase), so tasks use it on
  axis-aligned parts only.
- :func:`centroid` — the mean of the solid cells' centres (mm), exact to half a voxel.
- :func:`contained_fraction` — the share of a required solid's cells that the model fills.

:func:`check_more` decides the extended constraint kinds on a measurement dict: ``area``
(relative tolerance), ``centroid`` (per-axis tolerance in mm, at least one voxel), ``volume_max``
(no more material than allowed), ``within`` (the bounds lie inside a given box, one voxel of
slack) and ``contains`` (at least 98 % of a required solid is filled). Guarantees: pure
functions of their arguments; every check returns a bool, never raises on a measurement that
lacks a key (False). Not covered: mesh-accurate areas of curved surfaces.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from posttrain.verifiers.geometry import Grid


def surface_area(vox: np.ndarray, v: float) -> float:
    """Exposed cell faces times the face area."""
    q = np.pad(vox, 1).astype(np.int8)
    faces = sum(int(np.abs(np.diff(q, axis=ax)).sum()) for ax in range(3))
    return faces * v * v


def centroid(vox: np.ndarray, grid: Grid) -> list[float]:
    if not vox.any():
        return [math.nan] * 3
    idx = np.argwhere(vox).mean(0)
    return [float(grid.lo[i] + (idx[i] + 0.5) * grid.v) for i in range(3)]


def contained_fraction(vox: np.ndarray, required: np.ndarray) -> float:
    n = int(required.sum())
    return float((vox & required).sum() / n) if n else 0.0


def extra_measures(vox: np.ndarray, grid: Grid) -> dict[str, Any]:
    return {"area": surface_area(vox, grid.v), "centroid": centroid(vox, grid)}


def check_more(c: Mapping[str, Any], m: Mapping[str, Any], v: float) -> bool | None:
    """The extended kinds (module docstring); None when ``c`` is not one of them."""
    k, tol = c["kind"], 1.01 * v
    try:
        if k == "area":
            return math.isclose(m["area"], c["value"], rel_tol=c.get("rel_tol", 0.03))
        if k == "centroid":
            t = max(c.get("tol", 0.5), tol / 2)
            return all(abs(a - b) <= t for a, b in zip(m["centroid"], c["value"]))
        if k == "volume_max":
            return m["volume"] <= c["value"] * (1 + c.get("rel_tol", 0.03))
        if k == "within":
            return all(m["min"][i] >= c["lo"][i] - tol and m["max"][i] <= c["hi"][i] + tol for i in range(3))
        if k == "contains":
            return m.get(f"contains:{c['name']}", 0.0) >= 0.98
    except (KeyError, TypeError, IndexError):
        return False
    return None
