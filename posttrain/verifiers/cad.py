"""The CAD verifier: measure exported solids (one STL per body) and score them against a target.

What it is: :func:`measure` turns STL bytes (one per solid, as ``tools.cad_harness``
exports them) into a :class:`Model` — per body: closed (watertight), consistently wound,
volume, bounding box, genus (through-holes, from the Euler characteristic) and triangles —
with ``trimesh``. :func:`score_model` compares a candidate Model with the target Model and
a task ``spec`` and returns a :class:`Score` with named components:

- gates (weight 0; any failing one makes the value 0, so a generic blob earns nothing):
  ``valid`` (every body closed, consistently wound, positive volume), ``bodies`` (the
  asked number of solids), ``holes`` (total genus equals the target's), ``volume_gate``
  (within 25 %), ``key_features`` (every probe point marked key is right: the edited
  feature, the asked hole);
- graded: ``volume`` and ``placement`` (each body's bounding box against the target's
  body of the same rank by volume: a part's size, an assembly's mates) with a dead band
  (exact up to 0.5 %, zero at 15 % / 10 % of the target's diagonal), ``features`` (share
  of the spec's probe points — inside/outside the material: hole positions and sizes, wall
  thickness — that hold), ``render`` (silhouette IoU and depth agreement of three fixed
  orthographic depth renders on the target's window, :mod:`.cad_render`), and
  ``symmetry`` when the spec asks for a mirror plane.

Guarantees: never raises on bad meshes (an unreadable STL is an invalid body); the value is
in [0, 1]; the reference model (same script, same exporter) scores exactly 1.
Does not: run any script (the tool did, in the sandbox) or read the STEP file.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from posttrain.core.types import Score

from .cad_render import VIEWS, compare_views, mirror_iou, render_views, window

RAY = np.array([0.5773, 0.5791, 0.5755])  # off-axis, so rays miss edges of axis-aligned parts
RAY = RAY / np.linalg.norm(RAY)
MAX_TRIANGLES = 200_000
WEIGHTS = {"volume": 0.2, "placement": 0.2, "features": 0.25, "render": 0.25, "symmetry": 0.1}


@dataclass(frozen=True)
class Body:
    closed: bool
    volume: float
    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    genus: int
    tris: np.ndarray


@dataclass(frozen=True)
class Model:
    bodies: tuple[Body, ...]

    @property
    def tris(self) -> np.ndarray:
        return np.concatenate([b.tris for b in self.bodies]) if self.bodies else np.zeros((0, 3, 3))

    @property
    def volume(self) -> float:
        return float(sum(b.volume for b in self.bodies))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.min([b.lo for b in self.bodies], axis=0), np.max([b.hi for b in self.bodies], axis=0))


def _body(data: bytes) -> Body:
    import trimesh

    try:
        mesh = trimesh.load(io.BytesIO(data), file_type="stl", process=True)
        tris = np.asarray(mesh.triangles, float)
        if len(tris) == 0:
            raise ValueError("no triangles")
    except Exception:  # a forged or truncated file: an invalid body, not a crash
        return Body(False, 0.0, (0, 0, 0), (0, 0, 0), 0, np.zeros((0, 3, 3)))
    closed = bool(mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0)
    genus = int(round((2 - mesh.euler_number) / 2)) if closed else 0
    lo, hi = mesh.bounds
    return Body(closed, float(abs(mesh.volume)), tuple(map(float, lo)), tuple(map(float, hi)),
                genus, tris)


def measure(stls: Sequence[bytes]) -> Model:
    """A Model from one STL per solid (bodies ordered by volume, largest first)."""
    bodies = sorted((_body(b) for b in stls), key=lambda b: -b.volume)
    return Model(tuple(bodies))


def contains(tris: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Whether each point is inside the closed mesh (ray parity, Möller-Trumbore)."""
    pts = np.asarray(points, float).reshape(-1, 3)
    if len(tris) == 0:
        return np.zeros(len(pts), bool)
    if len(pts) > 8:  # bounded memory: (points x triangles x 3) floats per chunk
        return np.concatenate([contains(tris, pts[i:i + 8]) for i in range(0, len(pts), 8)])
    v0, e1, e2 = tris[:, 0], tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    p = np.cross(RAY, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-12
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = pts[:, None, :] - v0[None]
    u = np.einsum("pti,ti->pt", s, p) * inv
    q = np.cross(s, e1[None])
    v = np.einsum("i,pti->pt", RAY, q) * inv
    t = np.einsum("ti,pti->pt", e2, q) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    return (np.count_nonzero(hit, axis=1) % 2) == 1


def _band(err: float, exact: float, zero: float) -> float:
    return float(np.clip(1.0 - (err - exact) / (zero - exact), 0.0, 1.0))


def _placement(got: Model, want: Model) -> float:
    diag = float(np.linalg.norm(np.subtract(*want.bounds()[::-1])))
    errs = [max(np.max(np.abs(np.subtract(g.lo, w.lo))), np.max(np.abs(np.subtract(g.hi, w.hi))))
            for g, w in zip(got.bodies, want.bodies)]
    return min(_band(e / diag, 0.005, 0.10) for e in errs)


def _features(got: Model, probes: Sequence[Mapping[str, Any]]) -> tuple[float, bool, list[str]]:
    if not probes:
        return 1.0, True, []
    pts = np.array([p["at"] for p in probes], float)
    inside = contains(got.tris, pts)
    wrong = [p["name"] for p, i in zip(probes, inside) if bool(i) != bool(p["inside"])]
    key_ok = not any(p.get("key") for p in probes if p["name"] in wrong)
    return 1.0 - len(wrong) / len(probes), key_ok, wrong


def render_score(got: Model, want: Model) -> tuple[float, dict[str, float]]:
    """Mean over views of (silhouette IoU + depth agreement) / 2 on the target's window."""
    win = window(*want.bounds())
    per = compare_views(render_views(got.tris, win), render_views(want.tris, win), win)
    return float(np.mean(list(per.values()))), per


def score_model(got: Model | None, want: Model, spec: Mapping[str, Any], version: str) -> Score:
    """See the module docstring; ``spec``: ``probes`` (list of {name, at, inside, key}),
    optional ``symmetry`` (a view name and an image axis: mirror plane through the window)."""
    if got is None or not got.bodies:
        return Score(0.0, components={"valid": (0.0, 0.0)}, reason="no model was exported",
                     verifier_version=version)
    comps: dict[str, tuple[float, float]] = {}
    if len(got.tris) > MAX_TRIANGLES:  # the exporter's tolerances keep real parts far below
        return Score(0.0, components={"valid": (0.0, 0.0)}, verifier_version=version,
                     reason=f"{len(got.tris)} triangles: more than {MAX_TRIANGLES}, not measured")
    gates = {"valid": all(b.closed for b in got.bodies),
             "bodies": len(got.bodies) == len(want.bodies)}
    gates["holes"] = gates["valid"] and sum(b.genus for b in got.bodies) == sum(b.genus for b in want.bodies)
    vol_err = abs(got.volume - want.volume) / want.volume
    gates["volume_gate"] = vol_err <= 0.25
    feat, key_ok, wrong = _features(got, spec.get("probes", ()))
    gates["key_features"] = key_ok
    for name, ok in gates.items():
        comps[name] = (float(ok), 0.0)
    if not all(gates.values()):
        failed = [n for n, ok in gates.items() if not ok]
        return Score(0.0, components=comps, reason=f"gate failed: {', '.join(failed)}"
                     + (f" (wrong: {', '.join(wrong[:6])})" if wrong else ""), verifier_version=version)
    graded = {"volume": _band(vol_err, 0.005, 0.15), "placement": _placement(got, want),
              "features": feat}
    raw, _ = render_score(got, want)
    graded["render"] = _band(1.0 - raw, 0.02, 0.4)
    sym = spec.get("symmetry")
    if sym:
        win = window(*want.bounds())
        # relative to the target's own mirror IoU: tessellation makes neither exactly symmetric
        own = mirror_iou(render_views(want.tris, win)[sym[0]], int(sym[1]))
        mine = mirror_iou(render_views(got.tris, win)[sym[0]], int(sym[1]))
        graded["symmetry"] = _band(max(0.0, own - mine), 0.02, 0.3)
    total_w = sum(WEIGHTS[k] for k in graded)
    value = sum(WEIGHTS[k] * v for k, v in graded.items()) / total_w
    comps.update({k: (v, WEIGHTS[k] / total_w) for k, v in graded.items()})
    reason = "matches the target" if value >= 1 - 1e-9 else ", ".join(
        f"{k} {v:.2f}" for k, v in graded.items() if v < 1) + (f"; wrong: {', '.join(wrong[:6])}" if wrong else "")
    return Score(value, components=comps, reason=reason, verifier_version=version)


__all__ = ["Body", "Model", "VIEWS", "contains", "measure", "render_score", "score_model"]
