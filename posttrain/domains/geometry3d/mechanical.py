"""3D-modelling domains for machine parts: brackets, flanges, tubes, spoked wheels and
counterbored blocks.

- ``geometry3d.bracket-v1`` — an L-bracket (a base plate and an upright plate at its back
  edge); one hole through each leg at d2 (the upright's hole runs along y), two per leg at d3.
- ``geometry3d.flange-v1`` — a disc with a centre bore (d1), plus four bolt holes on a bolt
  circle (d2), plus a raised hub the bore runs through and six bolt holes (d3); symmetric.
- ``geometry3d.tube-v1`` — a tube lying along x on the floor (d1), with an end flange at each
  end (d2), a tee: a branch tube along +y whose bore meets the main bore (d3, two openings).
- ``geometry3d.spoked_wheel-v1`` — a rim and a bored hub joined by 2, 4 or 6 spokes: the
  through-openings count is spokes + 1.
- ``geometry3d.counterbore-v1`` — a block with counterbored holes (a through hole and a wider,
  shallow bore from the top): one (d1), two along x (d2), four in a rectangle (d3).

Scoring and shared probes: :mod:`._kit` (constraints as components, IoU-gated). What
they train: composing standard machine features with boolean operations and rotations,
and counting the topology the features create. Not covered: threads, chamfers, fillets,
tolerances. Probes: the shared ones, and the stock without any feature cut (a disc, a
block) placed away from the target.
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d import _kit as K
from posttrain.domains.geometry3d._kit import fmt as F


def _mech_probes(task: Task) -> dict[str, str]:
    """The stock block (the part's bounding box) placed beside the target."""
    w, d, h = K.size_of(task)
    return {"stock_far": f"s = box {F(w)} {F(d)} {F(h)}\np = translate s 0 {F(2 * d + 40)} {F(h / 2)}"}


ID_BRACKET = "geometry3d.bracket-v1"


def _draw_bracket(rng: random.Random, difficulty: int) -> Task:
    w, d, h, t = 2 * rng.randint(8, 13), 2 * rng.randint(6, 10), 2 * rng.randint(6, 11), 2 * rng.randint(1, 2)
    lines = [f"b0 = box {w} {d} {t}", f"base = translate b0 0 0 {F(t / 2)}",
             f"u0 = box {w} {t} {h}", f"up = translate u0 0 {F(d / 2 - t / 2)} {F(h / 2)}",
             "part = union base up"]
    vol = w * d * t + w * t * (h - t)
    n = {1: 0, 2: 1, 3: 2}[difficulty]
    r = 1.5
    xs = [0.0] if n == 1 else [-w / 4, w / 4]
    names, desc = [], ""
    if n:
        yb = -t / 2  # the middle of the base's free part (y from -d/2 to d/2 - t)
        zu = t + (h - t) / 2
        lines += [f"dr = cylinder {r} {4 * t}", f"dy0 = cylinder {r} {4 * t}", "dy = rotate dy0 x 90"]
        for i, x in enumerate(xs):
            lines += [f"hb{i} = translate dr {F(x)} {F(yb)} 0", f"hu{i} = translate dy {F(x)} {F(d / 2 - t / 2)} {F(zu)}"]
            names += [f"hb{i}", f"hu{i}"]
        lines.append("drilled = difference part " + " ".join(names))
        vol -= 2 * len(xs) * math.pi * r * r * t
        at = ", ".join(F(x) for x in xs)
        desc = (f" Drill {len(xs)} hole(s) of radius {r} mm vertically through the base at x = {at}, "
                f"y = {F(yb)}, and {len(xs)} along y through the upright at the same x, z = {F(zu)}.")
    spec = (f"An L-bracket {w} mm along x, {d} mm along y, {h} mm tall, on the plane z = 0 and centred on the z "
            f"axis: a base plate {t} mm thick covering the whole footprint and an upright plate {t} mm thick "
            f"standing along the back edge (y from {F(d / 2 - t)} to {F(d / 2)}).{desc} Volume {vol:.0f} mm^3, "
            f"{len(names)} through-holes.")
    return K.build(ID_BRACKET, difficulty, spec, "\n".join(lines), K.centred_part([w, d, h], vol, len(names)))


register_domain(K.csg_domain(ID_BRACKET, _draw_bracket, """\
Modelling a mechanical part from its description: an L-bracket with holes.

An L-bracket (a base plate and an upright plate at its back edge); one hole through each leg at
d2 (the upright's hole runs along y), two per leg at d3.
""", _mech_probes))


ID_FLANGE = "geometry3d.flange-v1"


def _draw_flange(rng: random.Random, difficulty: int) -> Task:
    R, T, r0 = rng.randint(11, 15), 2 * rng.randint(1, 3), rng.randint(3, 4)
    lines = [f"d0 = cylinder {R} {T}", f"disc = translate d0 0 0 {F(T / 2)}"]
    vol, body, height = math.pi * R * R * T, "disc", T
    desc = f"A flange disc of radius {R} mm and {T} mm thick lying on z = 0, centred on the z axis"
    if difficulty == 3:
        rh, hh = r0 + 3, rng.randint(3, 6)
        lines += [f"h0 = cylinder {rh} {hh}", f"hub = translate h0 0 0 {F(T + hh / 2)}", "body = union disc hub"]
        vol += math.pi * rh * rh * hh
        body, height = "body", T + hh
        desc += f", with a hub of radius {rh} mm rising {hh} mm above the disc"
    lines += [f"b0 = cylinder {r0} {4 * height}", f"bore = translate b0 0 0 {F(height / 2)}"]
    vol -= math.pi * r0 * r0 * height
    cut = ["bore"]
    n = {1: 0, 2: 4, 3: 6}[difficulty]
    if n:
        rb, pcd = 1.5, (R + r0 + 3 + (3 if difficulty == 3 else 0)) / 2
        pcd = min(pcd, R - 3)
        lines.append(f"bolt = cylinder {rb} {4 * T}")
        for i in range(n):
            a = 2 * math.pi * i / n
            lines.append(f"k{i} = translate bolt {F(round(pcd * math.cos(a), 4))} {F(round(pcd * math.sin(a), 4))} {F(T / 2)}")
            cut.append(f"k{i}")
        vol -= n * math.pi * rb * rb * T
        desc += (f"; {n} bolt holes of radius {rb} mm on a circle of radius {F(pcd)} mm, the first on the +x axis, "
                 "equally spaced")
    lines.append(f"part = difference {body} {' '.join(cut)}")
    spec = (f"{desc}; a centre bore of radius {r0} mm through everything. Volume {vol:.0f} mm^3, {1 + n} "
            "through-holes, mirror-symmetric about x = 0 and y = 0.")
    cons = [{"kind": "size", "value": [2 * R, 2 * R, height]}, {"kind": "volume", "value": vol},
            {"kind": "holes", "value": 1 + n}, {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"},
            {"kind": "symmetric", "value": ["x", "y"]}]
    return K.build(ID_FLANGE, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_FLANGE, _draw_flange, """\
Modelling a flange: a bored disc with holes on a bolt circle.

A disc with a centre bore (d1), plus four bolt holes on a bolt circle (d2), plus a raised hub
the bore runs through and six bolt holes (d3); symmetric.
""", _mech_probes))


ID_TUBE = "geometry3d.tube-v1"


def _draw_tube(rng: random.Random, difficulty: int) -> Task:
    R, L = rng.randint(5, 7), 2 * rng.randint(10, 14)
    ri = R - rng.choice([2, 2.5, 3])
    top = R + (2 if difficulty == 2 else 0)
    lines = [f"o0 = cylinder {R} {L}", f"i0 = cylinder {F(ri)} {L + 4}"]
    vol = math.pi * (R * R - ri * ri) * L
    outer, holes = ["o0"], 1
    desc = f"A tube of outer radius {R} mm and inner radius {F(ri)} mm, {L} mm long, its axis along x"
    if difficulty == 2:
        fr = R + 2
        lines += [f"f0 = cylinder {fr} 2", f"fa = translate f0 0 0 {F(L / 2 - 1)}", f"fb = translate f0 0 0 {F(-L / 2 + 1)}"]
        outer += ["fa", "fb"]
        vol += 2 * math.pi * (fr * fr - R * R) * 2
        desc += f", with a flange of radius {fr} mm and 2 mm thick flush with each end"
    if difficulty == 3:
        bl = rng.randint(R + 4, R + 8)
        lines += [f"bo = cylinder {R} {bl}", f"bo1 = translate bo 0 0 {F(bl / 2)}", "bo2 = rotate bo1 x -90",
                  f"bi = cylinder {F(ri)} {bl + 4}", f"bi1 = translate bi 0 0 {F(bl / 2 + 2)}", "bi2 = rotate bi1 x -90"]
        desc += (f", and a branch tube of the same radii along +y from the main axis, reaching y = {bl} mm, its "
                 "bore joining the main bore (a tee)")
        holes = 2
    solid = outer + (["bo2"] if difficulty == 3 else [])
    if len(solid) > 1:
        lines.append(f"solid = union {' '.join(solid)}")
    lines.append(f"hollow = difference {'solid' if len(solid) > 1 else 'o0'} i0{' bi2' if difficulty == 3 else ''}")
    lines += ["turned = rotate hollow y 90", f"part = translate turned 0 0 {F(top)}"]
    target = "\n".join(lines)
    vol = K.target_measure(target)[0]["volume"] if difficulty == 3 else vol  # the tee's overlap: measured
    ymax = R if difficulty < 3 else bl
    size = [L, 2 * top if difficulty < 3 else R + bl, 2 * top]
    spec = (f"{desc}. It lies on the plane z = 0 (axis at z = {F(top)}), centred at x = 0, the main axis on y = 0 "
            f"(y up to {F(ymax)} mm). Volume about {vol:.0f} mm^3, {holes} through-opening(s) counted as holes.")
    cons = [{"kind": "size", "value": size}, {"kind": "volume", "value": vol, "rel_tol": 0.05},
            {"kind": "holes", "value": holes}, {"kind": "pieces", "value": 1}, {"kind": "rests_on_z0"}]
    return K.build(ID_TUBE, difficulty, spec, target, cons)


register_domain(K.csg_domain(ID_TUBE, _draw_tube, """\
Modelling hollow parts: tubes, flanged tubes and tees.

A tube lying along x on the floor (d1), with an end flange at each end (d2), a tee: a branch
tube along +y whose bore meets the main bore (d3, two openings).
""", _mech_probes))


ID_SPOKED_WHEEL = "geometry3d.spoked_wheel-v1"


def _draw_spoked_wheel(rng: random.Random, difficulty: int) -> Task:
    R, T = rng.randint(12, 15), 2 * rng.randint(1, 2)
    ri, rh, rb = R - 2, rng.randint(4, 5), 2
    n = {1: 2, 2: 4, 3: 6}[difficulty]
    sw = 2
    lines = [f"rim0 = cylinder {R} {T}", f"rim1 = cylinder {ri} {T + 2}", "rim = difference rim0 rim1",
             f"hub = cylinder {rh} {T}", f"sp = box {2 * ri + 1} {sw} {T}"]
    spokes = []
    for i in range(n // 2):  # each bar crosses the hub: two spokes
        lines.append(f"s{i} = rotate sp z {F(180 * i / (n // 2))}")
        spokes.append(f"s{i}")
    lines += [f"wheel = union rim hub {' '.join(spokes)}", f"bore = cylinder {rb} {T + 4}",
              "w1 = difference wheel bore", f"part = translate w1 0 0 {F(T / 2)}"]
    target = "\n".join(lines)
    vol = K.target_measure(target)[0]["volume"]  # spoke/rim overlaps: measured on the exact script
    ang = ", ".join(F(180 * i / (n // 2)) for i in range(n // 2))
    spec = (f"A flat wheel {T} mm thick lying on z = 0, centred on the z axis: a rim of outer radius {R} mm and "
            f"inner radius {ri} mm, a hub of radius {rh} mm with a bore of radius {rb} mm, and {n} straight spokes "
            f"{sw} mm wide joining hub and rim (bars through the centre at {ang} degrees from the x axis). "
            f"Volume about {vol:.0f} mm^3; {n + 1} through-openings (between the spokes, and the bore).")
    cons = K.centred_part([2 * R, 2 * R, T], vol, n + 1, rel_tol=0.05)
    return K.build(ID_SPOKED_WHEEL, difficulty, spec, target, cons)


register_domain(K.csg_domain(ID_SPOKED_WHEEL, _draw_spoked_wheel, """\
Modelling a spoked wheel: rim, hub and evenly rotated spokes.

A rim and a bored hub joined by 2, 4 or 6 spokes: the through-openings count is spokes + 1.
""", _mech_probes))


ID_COUNTERBORE = "geometry3d.counterbore-v1"


def _draw_counterbore(rng: random.Random, difficulty: int) -> Task:
    w, d, h = 2 * rng.randint(9, 14), 2 * rng.randint(6, 10), 2 * rng.randint(3, 6)
    r1, r2, depth = 1.5, 3, rng.randint(2, h // 2)
    pts = {1: [(0, 0)], 2: [(-w / 4, 0), (w / 4, 0)],
           3: [(sx * w / 4, sy * d / 4) for sx in (-1, 1) for sy in (-1, 1)]}[difficulty]
    lines = [f"b0 = box {w} {d} {h}", f"block = translate b0 0 0 {F(h / 2)}",
             f"th = cylinder {r1} {2 * h}", f"cb = cylinder {r2} {2 * depth}"]
    cut = []
    for i, (x, y) in enumerate(pts):
        lines += [f"t{i} = translate th {F(x)} {F(y)} {F(h / 2)}", f"c{i} = translate cb {F(x)} {F(y)} {F(h)}"]
        cut += [f"t{i}", f"c{i}"]
    lines.append(f"part = difference block {' '.join(cut)}")
    vol = w * d * h - len(pts) * math.pi * (r1 * r1 * (h - depth) + r2 * r2 * depth)
    at = ", ".join(f"({F(x)}, {F(y)})" for x, y in pts)
    spec = (f"A block {w} x {d} x {h} mm (x, y, z) on z = 0, centred on the z axis, with {len(pts)} counterbored "
            f"hole(s) at (x, y) = {at}: a through hole of radius {r1} mm and, from the top face, a counterbore of "
            f"radius {r2} mm and {depth} mm deep. Volume {vol:.0f} mm^3, {len(pts)} through-holes.")
    return K.build(ID_COUNTERBORE, difficulty, spec, "\n".join(lines), K.centred_part([w, d, h], vol, len(pts)))


register_domain(K.csg_domain(ID_COUNTERBORE, _draw_counterbore, """\
Modelling counterbored holes in a block (stepped bores from one face).

A block with counterbored holes (a through hole and a wider, shallow bore from the top): one
(d1), two along x (d2), four in a rectangle (d3).
""", _mech_probes))
