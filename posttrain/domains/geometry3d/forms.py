"""3D-modelling domains for stacked and stepped forms: stacks of boxes, staircases, stepped
pyramids, a chess rook, and parts completed by mirror symmetry.

- ``geometry3d.stacked_boxes-v1`` — 2-4 boxes stacked from z = 0: each centred on the one below
  (d1), each aligned to the -x/-y corner of the one below (d2), corner-aligned with each box
  turned 90 degrees about z relative to the one below (d3).
- ``geometry3d.staircase-v1`` — a solid flight of N steps rising along +x (3, 5 steps), and
  at d3 two flights meeting at a top landing (up along +x, down again), symmetric about x = 0.
- ``geometry3d.block_pyramid-v1`` — a stepped pyramid of square layers shrinking by a fixed
  margin (3, 4, 5 layers); at d3 a sealed cubic chamber inside the bottom layer (a cavity).
- ``geometry3d.rook-v1`` — a chess rook from coaxial cylinders (base, body, collar, head) with a
  cup recessed in the head (d2) and four slots cut across the head's rim (d3, crenellations).
- ``geometry3d.mirror_part-v1`` — a plate with features described on one side only (posts,
  holes) to be mirrored: about x = 0 (d1, d2), about both x = 0 and y = 0 (d3).

Scoring and shared probes: :mod:`._kit`. What they train: placement arithmetic (stacking
heights, corner alignment, margins), revolved profiles from cylinders, symmetry. Not covered:
true revolutions of arbitrary profiles, drafts, fillets. Probes: the shared ones, and the first
element alone far from the target (one box, one step, the base layer).
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d import _kit as K
from posttrain.domains.geometry3d._kit import fmt as F


def _first_element_far(task: Task) -> dict[str, str]:
    """The target's first element alone, moved far away (right shape family, wrong everything)."""
    first = task.hidden["target"].splitlines()[0]
    name = first.split("=")[0].strip()
    return {"first_element_far": f"{first}\nfar = translate {name} 0 200 0"}


ID_STACKED_BOXES = "geometry3d.stacked_boxes-v1"


def _draw_stacked_boxes(rng: random.Random, difficulty: int) -> Task:
    n = {1: 2, 2: 3, 3: rng.randint(3, 4)}[difficulty]
    w0, d0 = 2 * rng.randint(10, 14), 2 * rng.randint(8, 12)
    boxes, w, d = [], w0, d0
    for i in range(n):  # each box smaller than the one below; at d3 odd boxes are turned
        bw, bd = (d, w) if difficulty == 3 and i % 2 else (w, d)
        boxes.append((min(bw, w0), min(bd, d0), 2 * rng.randint(2, 4)))
        w, d = max(4, w - 2 * rng.randint(1, 3)), max(4, d - 2 * rng.randint(1, 3))
    x0, y0 = -w0 / 2, -d0 / 2
    lines, names, z, desc = [], [], 0, []
    for i, (bw, bd, bh) in enumerate(boxes):
        cx, cy = (0, 0) if difficulty == 1 else (x0 + bw / 2, y0 + bd / 2)
        lines += [f"k{i} = box {bw} {bd} {bh}", f"b{i} = translate k{i} {F(cx)} {F(cy)} {F(z + bh / 2)}"]
        names.append(f"b{i}")
        desc.append(f"{bw} x {bd} x {bh}")
        z += bh
    dims = boxes
    lines.append(f"part = union {' '.join(names)}")
    vol = sum(a * b * c for a, b, c in dims)
    rule = {1: "each centred on the box below", 2: "each with its -x and -y faces flush with those of the box below",
            3: "each with its -x and -y faces flush with those of the box below"}[difficulty]
    spec = (f"A stack of {n} boxes (x by y by z, from the bottom): {'; '.join(desc)}, {rule}. The bottom box "
            f"stands on z = 0 centred on the z axis. Volume {vol} mm^3, one solid.")
    cons = [{"kind": "size", "value": [dims[0][0], dims[0][1], z]}, {"kind": "volume", "value": vol},
            {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"}, {"kind": "centred_xy"}]
    if difficulty == 1:
        cons.append({"kind": "symmetric", "value": ["x", "y"]})
    return K.build(ID_STACKED_BOXES, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_STACKED_BOXES, _draw_stacked_boxes, """\
Placement arithmetic in 3D: stacking boxes by centring and corner-alignment rules.

2-4 boxes stacked from z = 0: each centred on the one below (d1), each aligned to the -x/-y
corner of the one below (d2), corner-aligned with each box turned 90 degrees about z relative to
the one below (d3).
""", _first_element_far))


ID_STAIRCASE = "geometry3d.staircase-v1"


def _draw_staircase(rng: random.Random, difficulty: int) -> Task:
    n = {1: 3, 2: 5, 3: 3}[difficulty]
    rise, run, width = rng.randint(2, 4), rng.randint(3, 5), 2 * rng.randint(4, 8)
    landing = 2 * rng.randint(2, 4) if difficulty == 3 else 0
    flights = 2 if difficulty == 3 else 1
    total = flights * n * run + landing
    lines, names = [], []
    for k in range(n):  # step k spans x in [k*run, (k+1)*run) from the start, height (k+1)*rise
        h = (k + 1) * rise
        x = -total / 2 + k * run + run / 2
        lines += [f"s{k} = box {run} {width} {h}", f"p{k} = translate s{k} {F(x)} 0 {F(h / 2)}"]
        names.append(f"p{k}")
        if flights == 2:
            lines.append(f"q{k} = translate s{k} {F(-x)} 0 {F(h / 2)}")
            names.append(f"q{k}")
    top = n * rise
    if landing:
        lines += [f"l0 = box {landing} {width} {top}", f"land = translate l0 0 0 {F(top / 2)}"]
        names.append("land")
    lines.append(f"part = union {' '.join(names)}")
    vol = flights * width * run * rise * n * (n + 1) / 2 + landing * width * top
    spec = (f"Solid stairs {width} mm wide (along y, centred on y = 0) standing on z = 0: {n} steps, each {run} mm "
            f"deep along x and {rise} mm high, rising along +x from x = {F(-total / 2)}")
    if landing:
        spec += (f" to a {landing} mm landing at the top height (centred on x = 0), then {n} identical steps "
                 f"going down along +x to x = {F(total / 2)} (symmetric about x = 0)")
    spec += f". Every step is solid down to the floor. Volume {vol:.0f} mm^3, one solid."
    cons = [{"kind": "size", "value": [total, width, top]}, {"kind": "volume", "value": vol},
            {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"}, {"kind": "centred_xy"}]
    if landing:
        cons.append({"kind": "symmetric", "value": ["x"]})
    return K.build(ID_STAIRCASE, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_STAIRCASE, _draw_staircase, """\
Modelling solid stairs from step counts and sizes (cumulative heights, symmetric flights).

A solid flight of N steps rising along +x (3, 5 steps), and at d3 two flights meeting at a top
landing (up along +x, down again), symmetric about x = 0.
""", _first_element_far))


ID_BLOCK_PYRAMID = "geometry3d.block_pyramid-v1"


def _draw_block_pyramid(rng: random.Random, difficulty: int) -> Task:
    n, m, h = 2 + difficulty, rng.randint(2, 3), 4 if difficulty == 3 else rng.randint(2, 4)
    s0 = 2 * m * n + 2 * rng.randint(2, 4)
    lines, names, vol = [], [], 0
    for k in range(n):
        s = s0 - 2 * m * k
        lines += [f"l{k} = box {s} {s} {h}", f"p{k} = translate l{k} 0 0 {F(k * h + h / 2)}"]
        names.append(f"p{k}")
        vol += s * s * h
    lines.append(f"part = union {' '.join(names)}")
    spec = (f"A stepped pyramid of {n} square layers, each {h} mm tall, centred on the z axis and standing on "
            f"z = 0: the bottom layer is {s0} mm square and each layer is {m} mm smaller on every side than the "
            "one below")
    cav = 0
    if difficulty == 3:
        c, ch = 2 * (s0 // 6), 2  # walls, floor and roof at least 1 mm: sealed
        lines += [f"c0 = box {c} {c} {ch}", f"room = translate c0 0 0 {F(h / 2)}", "hollow = difference part room"]
        vol -= c * c * ch
        cav = 1
        spec += f"; a sealed chamber {c} x {c} x {ch} mm is hollowed out at the centre of the bottom layer"
    spec += f". Volume {vol} mm^3, {cav} internal cavit{'y' if cav == 1 else 'ies'}, one solid."
    cons = [{"kind": "size", "value": [s0, s0, n * h]}, {"kind": "volume", "value": vol},
            {"kind": "cavities", "value": cav}, {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"},
            {"kind": "symmetric", "value": ["x", "y"]}]
    return K.build(ID_BLOCK_PYRAMID, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_BLOCK_PYRAMID, _draw_block_pyramid, """\
Modelling a stepped pyramid of shrinking layers (margins, an internal chamber).

A stepped pyramid of square layers shrinking by a fixed margin (3, 4, 5 layers); at d3 a sealed
cubic chamber inside the bottom layer (a cavity).
""", _first_element_far))


ID_ROOK = "geometry3d.rook-v1"


def _draw_rook(rng: random.Random, difficulty: int) -> Task:
    rb, hb = rng.randint(8, 10), rng.randint(2, 4)
    rbody, hbody = rb - rng.randint(2, 3), rng.randint(10, 16)
    rc, hc = rbody + 1, 2
    rh, hh = rb - 1, rng.randint(4, 6)
    segs = [(rb, hb), (rbody, hbody), (rc, hc), (rh, hh)]
    lines, names, z, vol = [], [], 0, 0.0
    for i, (r, h) in enumerate(segs):
        lines += [f"c{i} = cylinder {r} {h}", f"s{i} = translate c{i} 0 0 {F(z + h / 2)}"]
        names.append(f"s{i}")
        z, vol = z + h, vol + math.pi * r * r * h
    lines.append(f"body = union {' '.join(names)}")
    desc = (f"A chess rook on z = 0, centred on the z axis, made of stacked coaxial cylinders from the bottom: base "
            f"radius {rb} mm x {hb} mm, body radius {rbody} mm x {hbody} mm, collar radius {rc} mm x {hc} mm, head "
            f"radius {rh} mm x {hh} mm")
    last = "body"
    if difficulty >= 2:
        cr, cd = rh - 2, hh - 2
        lines += [f"cup0 = cylinder {cr} {2 * cd}", f"cup = translate cup0 0 0 {z}", "r1 = difference body cup"]
        vol -= math.pi * cr * cr * cd
        last = "r1"
        desc += f"; a cup of radius {cr} mm and {cd} mm deep is recessed into the top of the head"
    if difficulty == 3:
        sw, sd = 2, 2
        lines += [f"slot0 = box {2 * rh + 4} {sw} {2 * sd}", f"slot1 = translate slot0 0 0 {z}",
                  "slot2 = rotate slot1 z 90", "r2 = difference r1 slot1 slot2"]
        vol = None
        last = "r2"
        desc += f"; two slots {sw} mm wide and {sd} mm deep are cut across the head's top, along x and along y"
    lines.append(f"result {last}")
    target = "\n".join(lines)
    if vol is None:
        vol = K.target_measure(target)[0]["volume"]
    spec = f"{desc}. Total height {z} mm, volume about {vol:.0f} mm^3, mirror-symmetric about x = 0 and y = 0."
    cons = [{"kind": "size", "value": [2 * rb, 2 * rb, z]}, {"kind": "volume", "value": vol, "rel_tol": 0.05},
            {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"}, {"kind": "symmetric", "value": ["x", "y"]}]
    return K.build(ID_ROOK, difficulty, spec, target, cons)


register_domain(K.csg_domain(ID_ROOK, _draw_rook, """\
Modelling a revolved form from coaxial cylinders: a chess rook with a cup and crenellations.

A chess rook from coaxial cylinders (base, body, collar, head) with a cup recessed in the head
(d2) and four slots cut across the head's rim (d3, crenellations).
""", _first_element_far))


ID_MIRROR_PART = "geometry3d.mirror_part-v1"


def _draw_mirror_part(rng: random.Random, difficulty: int) -> Task:
    w, d, t = 2 * rng.randint(12, 15), 2 * rng.randint(7, 10), 2 * rng.randint(1, 2)
    a, ph = 2 * rng.randint(1, 2), rng.randint(4, 8)
    # posts apart from their mirror images; a hole between the post and the mirror plane
    px = rng.randint(a + 4, w // 2 - a // 2 - 1)
    py = rng.randint(a, d // 2 - a // 2 - 1) if difficulty == 3 else 0
    hx = rng.randint(2, max(2, px - a - 2)) if difficulty >= 2 else 0
    mirrors = [(1, 1), (-1, 1)] + ([(1, -1), (-1, -1)] if difficulty == 3 else [])
    pts = sorted({(sx * px, sy * py) for sx, sy in mirrors})
    lines = [f"pl0 = box {w} {d} {t}", f"plate = translate pl0 0 0 {F(t / 2)}", f"post = box {a} {a} {ph}"]
    names = []
    for i, (x, y) in enumerate(pts):
        lines.append(f"p{i} = translate post {x} {y} {F(t + ph / 2)}")
        names.append(f"p{i}")
    lines.append(f"body = union plate {' '.join(names)}")
    vol, holes = w * d * t + len(pts) * a * a * ph, 0
    one = f"a square post {a} x {a} mm and {ph} mm tall standing on the plate centred at (x, y) = ({px}, {py})"
    if hx:
        hpts = sorted({(sx * hx, sy * py) for sx, sy in mirrors})
        lines.append(f"dr = cylinder 1 {4 * t}")
        cut = []
        for i, (x, y) in enumerate(hpts):
            lines.append(f"h{i} = translate dr {x} {y} 0")
            cut.append(f"h{i}")
        lines.append(f"part = difference body {' '.join(cut)}")
        vol -= len(hpts) * math.pi * t
        holes = len(hpts)
        one += f", and a vertical through-hole of radius 1 mm at ({hx}, {py})"
    planes = "the plane x = 0" if difficulty < 3 else "both planes x = 0 and y = 0"
    spec = (f"A plate {w} x {d} x {t} mm (x, y, z) on z = 0, centred on the z axis, carrying {one}. Mirror these "
            f"features about {planes} so that the part is symmetric. Volume {vol:.0f} mm^3, {holes} through-holes.")
    cons = [{"kind": "size", "value": [w, d, t + ph]}, {"kind": "volume", "value": vol},
            {"kind": "holes", "value": holes}, {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"},
            {"kind": "symmetric", "value": ["x"] if difficulty < 3 else ["x", "y"]}]
    return K.build(ID_MIRROR_PART, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_MIRROR_PART, _draw_mirror_part, """\
Completing a part by mirror symmetry from features described on one side.

A plate with features described on one side only (posts, holes) to be mirrored: about x = 0 (d1,
d2), about both x = 0 and y = 0 (d3).
""", _first_element_far))
