"""A tiny constructive-geometry language, its bounded voxel interpreter, and measurements.

The language (one statement per line, ``#`` starts a comment; lengths in millimetres)::

    NAME = box W D H                 # centred at the origin, W along x, D along y, H along z
    NAME = cylinder R H              # axis z, centred at the origin
    NAME = sphere R
    NAME = translate SHAPE X Y Z
    NAME = rotate SHAPE AXIS DEGREES # AXIS is x, y or z; right-handed
    NAME = union SHAPE SHAPE ...
    NAME = difference SHAPE SHAPE ...   # the first minus all the others
    NAME = intersection SHAPE SHAPE ...
    result SHAPE                     # optional; default: the last shape defined

Why a language we interpret ourselves rather than Python run in the sandbox: the policy's
"program" can only build shapes, so there is nothing to escape from, and the cost is bounded
up front — at most :data:`MAX_LINES` statements, :data:`MAX_CHARS` characters, coordinates
within :data:`MAX_COORD`, and a grid of at most :data:`MAX_CELLS` cells per axis (the voxel
size grows for huge shapes, so memory and time stay bounded). Evaluating any valid program
costs at most a few hundred milliseconds.

Measurements (:func:`measure`) on a voxel grid whose cells are ``v`` mm cubes (``v`` the
smallest of 0.5, 1, 2, 4 ... that fits): volume, bounding box of the occupied cells, the
number of solid pieces (26-connected), internal cavities (empty regions not connected to the
outside, 6-connected), through-holes (first Betti number, from the Euler characteristic of
the union of closed cubes: ``holes = pieces + cavities - euler``), mirror symmetry about the
planes x=0 and y=0, and IoU against another shape on the same grid. A voxel solid is always
closed, so "watertight" holds by construction; the checks that matter are one piece and the
right cavities.

Guarantees: :func:`parse` never raises on any text (it returns a :class:`ParseError` message
instead); a parsed program always evaluates. Not covered: curved-surface accuracy below the
voxel size, meshes (STL) or fillets, non-uniform scaling.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_LINES = 64
MAX_CHARS = 6_000
MAX_COORD = 1_000.0
MAX_CELLS = 64
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,31}$")
_PRIMS = {"box": 3, "cylinder": 2, "sphere": 1}
_BOOLS = ("union", "difference", "intersection")


class ParseError(ValueError):
    """The script is not a valid program (the message says which line and why)."""


@dataclass(frozen=True)
class Program:
    nodes: dict[str, tuple]
    result: str

    @property
    def root(self) -> tuple:
        return self.nodes[self.result]


def _num(tok: str, lineno: int, positive: bool = False) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise ParseError(f"line {lineno}: {tok!r} is not a number") from None
    if not math.isfinite(v) or abs(v) > MAX_COORD or (positive and v <= 0):
        raise ParseError(f"line {lineno}: {tok!r} is out of range")
    return v


def _statement(toks: list[str], nodes: dict[str, tuple], n: int) -> tuple:
    op, args = toks[0], toks[1:]
    if op in _PRIMS:
        if len(args) != _PRIMS[op]:
            raise ParseError(f"line {n}: {op} takes {_PRIMS[op]} numbers")
        return (op, *[_num(a, n, positive=True) for a in args])
    refs = lambda xs: [nodes[x] if x in nodes else _unknown(x, n) for x in xs]  # noqa: E731
    if op == "translate" and len(args) == 4:
        return ("translate", refs(args[:1])[0], tuple(_num(a, n) for a in args[1:]))
    if op == "rotate" and len(args) == 3 and args[1] in ("x", "y", "z"):
        return ("rotate", refs(args[:1])[0], args[1], _num(args[2], n))
    if op in _BOOLS and len(args) >= 2:
        return (op, *refs(args))
    raise ParseError(f"line {n}: cannot read {' '.join(toks)[:60]!r}")


def _unknown(name: str, n: int) -> tuple:
    raise ParseError(f"line {n}: unknown shape {name!r}")


def parse(text: str) -> Program | ParseError:
    """The program in ``text``, or a ParseError describing the first problem."""
    try:
        return _parse(text or "")
    except ParseError as exc:
        return exc
    except RecursionError:
        return ParseError("program nested too deeply")


def _parse(text: str) -> Program:
    if len(text) > MAX_CHARS:
        raise ParseError(f"script longer than {MAX_CHARS} characters")
    nodes: dict[str, tuple] = {}
    result, count = None, 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        count += 1
        if count > MAX_LINES:
            raise ParseError(f"more than {MAX_LINES} statements")
        toks = line.replace("=", " = ").split()
        if toks[0] == "result" and len(toks) == 2 and result is None:
            if toks[1] not in nodes:
                raise ParseError(f"line {n}: unknown shape {toks[1]!r}")
            result = toks[1]
            continue
        if len(toks) < 3 or toks[1] != "=" or not _NAME.match(toks[0]) or toks[0] in nodes:
            raise ParseError(f"line {n}: expected 'NAME = OPERATION ...' with a new name")
        if result is not None:
            raise ParseError(f"line {n}: statements after 'result'")
        nodes[toks[0]] = _statement(toks[2:], nodes, n)
    if not nodes:
        raise ParseError("no shape defined")
    return Program(nodes, result or list(nodes)[-1])


# evaluation -------------------------------------------------------------------------------

def _rot(axis: str, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def bbox(node: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    """Conservative axis-aligned bounds of a node (None when provably empty)."""
    op = node[0]
    if op == "box":
        h = np.array(node[1:4]) / 2
        return -h, h
    if op == "cylinder":
        return np.array([-node[1], -node[1], -node[2] / 2]), np.array([node[1], node[1], node[2] / 2])
    if op == "sphere":
        return -np.full(3, node[1]), np.full(3, node[1])
    if op == "translate":
        b = bbox(node[1])
        return None if b is None else (b[0] + node[2], b[1] + node[2])
    if op == "rotate":
        b = bbox(node[1])
        if b is None:
            return None
        corners = np.array([[b[i][0], b[j][1], b[k][2]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
        pts = corners @ _rot(node[2], node[3]).T
        return pts.min(0), pts.max(0)
    kids = [bbox(k) for k in node[1:]]
    if op == "difference":
        return kids[0]
    kids_ok = [k for k in kids if k is not None]
    if op == "union":
        return (np.min([k[0] for k in kids_ok], 0), np.max([k[1] for k in kids_ok], 0)) if kids_ok else None
    if len(kids_ok) < len(kids):
        return None
    lo, hi = np.max([k[0] for k in kids_ok], 0), np.min([k[1] for k in kids_ok], 0)
    return None if np.any(lo > hi) else (lo, hi)


def inside(node: tuple, p: np.ndarray) -> np.ndarray:
    """Boolean membership of the points ``p`` (N x 3) in the node."""
    op = node[0]
    if op == "box":
        return np.all(np.abs(p) <= np.array(node[1:4], dtype=p.dtype) / 2, axis=1)
    if op == "cylinder":
        return (p[:, 0] ** 2 + p[:, 1] ** 2 <= node[1] ** 2) & (np.abs(p[:, 2]) <= node[2] / 2)
    if op == "sphere":
        return np.einsum("ij,ij->i", p, p) <= node[1] ** 2
    if op == "translate":
        return inside(node[1], p - np.array(node[2], dtype=p.dtype))
    if op == "rotate":
        return inside(node[1], p @ _rot(node[2], node[3]).astype(p.dtype))
    out = inside(node[1], p)
    for k in node[2:]:
        m = inside(k, p)
        out = out | m if op == "union" else out & ~m if op == "difference" else out & m
    return out


@dataclass(frozen=True)
class Grid:
    lo: tuple[float, float, float]
    shape: tuple[int, int, int]
    v: float

    def points(self) -> np.ndarray:
        axes = [self.lo[i] + (np.arange(self.shape[i], dtype=np.float32) + 0.5) * self.v for i in range(3)]
        g = np.meshgrid(*axes, indexing="ij")
        return np.stack([a.ravel() for a in g], axis=1)


def grid_for(*nodes: tuple) -> Grid:
    """The grid covering every node's bounds (symmetric in x and y about 0)."""
    bs = [b for b in (bbox(n) for n in nodes) if b is not None]
    if not bs:
        return Grid((0.0, 0.0, 0.0), (1, 1, 1), 1.0)
    lo, hi = np.min([b[0] for b in bs], 0), np.max([b[1] for b in bs], 0)
    m = np.maximum(np.abs(lo[:2]), np.abs(hi[:2]))
    lo[:2], hi[:2] = -m, m
    v = 0.5
    while np.any(np.ceil(hi / v) - np.floor(lo / v) > MAX_CELLS):
        v *= 2
    glo = np.floor(lo / v) * v
    shape = tuple(int(max(1, x)) for x in np.ceil(hi / v) - np.floor(lo / v))
    return Grid(tuple(float(x) for x in glo), shape, v)


def voxelize(node: tuple, grid: Grid) -> np.ndarray:
    return inside(node, grid.points()).reshape(grid.shape)


# topology ---------------------------------------------------------------------------------

def _dilate(m: np.ndarray, full: bool) -> np.ndarray:
    """One step of dilation: 6-neighbourhood, or the full 26-neighbourhood (separable)."""
    out = m.copy()
    for ax in range(3):
        src = out if full else m
        sl_a, sl_b = [slice(None)] * 3, [slice(None)] * 3
        sl_a[ax], sl_b[ax] = slice(1, None), slice(None, -1)
        shifted = out.copy() if full else out
        shifted[tuple(sl_a)] |= src[tuple(sl_b)]
        shifted[tuple(sl_b)] |= src[tuple(sl_a)]
        out = shifted
    return out


def _line_fill(reach: np.ndarray, allowed: np.ndarray, ax: int) -> np.ndarray:
    """Every run of ``allowed`` cells along ``ax`` that touches ``reach`` becomes reached."""
    a = np.moveaxis(allowed, ax, -1).reshape(-1, allowed.shape[ax])
    r = np.moveaxis(reach, ax, -1).reshape(a.shape)
    starts = a & ~np.concatenate([np.zeros((a.shape[0], 1), bool), a[:, :-1]], axis=1)
    run = np.cumsum(starts, axis=1) + (np.arange(a.shape[0]) * (a.shape[1] + 1))[:, None]
    hit = np.zeros(int(run.max()) + 1, bool)
    hit[run[r & a]] = True
    out = (a & hit[run]).reshape(np.moveaxis(allowed, ax, -1).shape)
    return np.moveaxis(out, -1, ax)


def _flood(seed: np.ndarray, allowed: np.ndarray, full: bool) -> np.ndarray:
    """Cells of ``allowed`` connected to ``seed`` (6- or 26-connected). Whole runs along each
    axis are filled per sweep, so a few sweeps suffice for typical parts."""
    reach = seed & allowed
    count = int(reach.sum())
    while True:
        for ax in range(3):
            reach = _line_fill(reach, allowed, ax)
        reach = _dilate(reach, full) & allowed
        new = int(reach.sum())
        if new == count:
            return reach
        count = new


def count_components(mask: np.ndarray, full: bool, limit: int = 16) -> int:
    left, n = mask.copy(), 0
    while left.any() and n < limit:
        seed = np.zeros_like(left)
        seed[np.unravel_index(np.argmax(left), left.shape)] = True
        left &= ~_flood(seed, left, full)
        n += 1
    return n


def euler(vox: np.ndarray) -> int:
    """Euler characteristic of the union of closed unit cubes at the solid voxels."""
    q = np.pad(vox, 2)
    n0, n1, n2 = (s - 2 for s in q.shape)
    off = (0, 1)
    vert = np.zeros((n0 + 1, n1 + 1, n2 + 1), bool)
    for a in off:
        for b in off:
            for c in off:
                vert |= q[a:a + n0 + 1, b:b + n1 + 1, c:c + n2 + 1]
    edges = 0
    for ax in range(3):
        e = None
        for b in off:
            for c in off:
                sl = [slice(d, d + s + 1) for d, s in zip((0, 0, 0), (n0, n1, n2))]
                sl[ax] = slice(1, 1 + (n0, n1, n2)[ax])
                others = [i for i in range(3) if i != ax]
                sl[others[0]] = slice(b, b + (n0, n1, n2)[others[0]] + 1)
                sl[others[1]] = slice(c, c + (n0, n1, n2)[others[1]] + 1)
                part = q[tuple(sl)]
                e = part if e is None else e | part
        edges += int(e.sum())
    faces = 0
    for ax in range(3):
        f = None
        for c in off:
            sl = [slice(1, 1 + s) for s in (n0, n1, n2)]
            sl[ax] = slice(c, c + (n0, n1, n2)[ax] + 1)
            part = q[tuple(sl)]
            f = part if f is None else f | part
        faces += int(f.sum())
    return int(vert.sum()) - edges + faces - int(vox.sum())


def measure(vox: np.ndarray, grid: Grid) -> dict[str, Any]:
    """Volume, bounds, pieces, cavities, holes and mirror symmetry of a voxel solid."""
    v = grid.v
    if not vox.any():
        return {"volume": 0.0, "size": [0.0, 0.0, 0.0], "min": [0.0] * 3, "max": [0.0] * 3, "pieces": 0,
                "cavities": 0, "holes": 0, "sym_x": 0.0, "sym_y": 0.0}
    idx = np.argwhere(vox)
    lo, hi = idx.min(0), idx.max(0) + 1
    mins = [grid.lo[i] + lo[i] * v for i in range(3)]
    maxs = [grid.lo[i] + hi[i] * v for i in range(3)]
    pieces = count_components(vox, full=True)
    empty = ~np.pad(vox, 1)
    outside = np.zeros_like(empty)
    outside[0], outside[-1], outside[:, 0], outside[:, -1], outside[:, :, 0], outside[:, :, -1] = (True,) * 6
    outside = _flood(outside, empty, full=False)
    cavities = count_components(empty & ~outside, full=False)
    holes = max(0, pieces + cavities - euler(vox))
    sym = lambda ax: iou(vox, np.flip(vox, axis=ax))  # noqa: E731 (grid is symmetric in x, y)
    mins, maxs = [float(x) for x in mins], [float(x) for x in maxs]
    return {"volume": float(vox.sum()) * v ** 3, "size": [b - a for a, b in zip(mins, maxs)], "min": mins,
            "max": maxs, "pieces": pieces, "cavities": cavities, "holes": holes, "sym_x": sym(0), "sym_y": sym(1)}


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 0.0
