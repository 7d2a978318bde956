"""3D-modelling domains for multi-part models: tables (placement, symmetry) and stepped shafts.

- ``geometry3d.table-v1`` — a top on four legs inset from the corners (d1), plus a lower shelf
  joining the legs (d2: the frame has 3 through-openings), with round legs and a cable hole
  through the top (d3: 4). Symmetric about x = 0 and y = 0, standing on z = 0.
- ``geometry3d.shaft-v1`` — coaxial cylinders stacked along z from z = 0 (2, 3 or 4 sections),
  with a cross hole through one section (d2) and also an axial bore through the whole shaft
  (d3, the two bores meet: 3 through-openings).

What they train: placing and combining parts with transforms, reasoning about the topology
the combination creates. Not covered: joints, clearances, assemblies of separate bodies.
Probes: the shared ones of :mod:`._kit` (a crude approximation such as the top alone or
the widest cylinder is partial credit by design, not a probe: it overlaps the target).
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d import _kit
from posttrain.domains.geometry3d._kit import fmt


ID_TABLE = "geometry3d.table-v1"


def _draw_table(rng: random.Random, difficulty: int) -> Task:
    w, d = 2 * rng.randint(15, 30), 2 * rng.randint(12, 24)
    height, top = 2 * rng.randint(12, 25), 2 * rng.randint(1, 2)
    a, inset = 2 * rng.randint(1, 3), rng.randint(2, 4)
    leg_h = height - top
    lx, ly = w / 2 - inset - a / 2, d / 2 - inset - a / 2
    lines = [f"top0 = box {w} {d} {top}", f"top = translate top0 0 0 {fmt(height - top / 2)}"]
    if difficulty == 3:
        lines.append(f"leg = cylinder {fmt(a / 2)} {leg_h}")
        leg_vol = math.pi * (a / 2) ** 2 * leg_h
    else:
        lines.append(f"leg = box {a} {a} {leg_h}")
        leg_vol = a * a * leg_h
    for i, (sx, sy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
        lines.append(f"l{i} = translate leg {fmt(sx * lx)} {fmt(sy * ly)} {fmt(leg_h / 2)}")
    parts, vol, holes = ["top", "l0", "l1", "l2", "l3"], w * d * top + 4 * leg_vol, 0
    desc = (f"A table {w} mm along x, {d} mm along y and {height} mm tall, standing on the plane z = 0 and "
            f"centred on the z axis: a top {top} mm thick on four legs of {'diameter' if difficulty == 3 else 'square section'} "
            f"{a} mm, each leg's outer faces {inset} mm in from the edges of the top")
    if difficulty >= 2:
        sz = 2 * rng.randint(2, 4)
        sw, sd = 2 * lx + a, 2 * ly + a
        lines += [f"shelf0 = box {fmt(sw)} {fmt(sd)} 2", f"shelf = translate shelf0 0 0 {sz + 1}"]
        parts.append("shelf")
        vol += sw * sd * 2 - 4 * (leg_vol / leg_h) * 2
        holes = 3
        desc += (f"; a shelf 2 mm thick spans the legs' outer faces ({fmt(sw)} by {fmt(sd)} mm), its underside "
                 f"{sz} mm above the floor")
    lines.append(f"table = union {' '.join(parts)}")
    if difficulty == 3:
        cr = rng.randint(2, 3)
        lines += [f"cable = cylinder {cr} {top * 4}", f"hole = translate cable 0 0 {fmt(height - top / 2)}",
                  "part = difference table hole"]
        vol -= math.pi * cr * cr * top
        holes = 4
        desc += f"; a round cable hole of radius {cr} mm through the centre of the top"
    spec = (f"{desc}. It is symmetric about the planes x = 0 and y = 0, is one solid, has {holes} through-openings "
            f"and a volume of {vol:.0f} mm^3 (within 3 %).")
    cons = [{"kind": "size", "value": [w, d, height]}, {"kind": "volume", "value": vol},
            {"kind": "pieces", "value": 1}, {"kind": "holes", "value": holes},
            {"kind": "symmetric", "value": ["x", "y"]}, {"kind": "rests_on_z0"}]
    return _kit.build(ID_TABLE, difficulty, spec, "\n".join(lines), cons)


register_domain(_kit.csg_domain(ID_TABLE, _draw_table, """\
Modelling an assembly from its description: a table with legs, optionally a shelf and a cable hole.

A top on four legs inset from the corners (d1), plus a lower shelf joining the legs (d2: the
frame has 3 through-openings), with round legs and a cable hole through the top (d3: 4).
Symmetric about x = 0 and y = 0, standing on z = 0.
"""))


ID_SHAFT = "geometry3d.shaft-v1"


def _draw_shaft(rng: random.Random, difficulty: int) -> Task:
    n = 1 + difficulty
    radii = [rng.randint(4, 14) for _ in range(n)]
    while len(set(radii)) < n:
        radii = [rng.randint(4, 14) for _ in range(n)]
    lens = [2 * rng.randint(3, 8) for _ in range(n)]
    lines, names, z, vol = [], [], 0, 0.0
    for i, (r, ln) in enumerate(zip(radii, lens)):
        lines += [f"c{i} = cylinder {r} {ln}", f"s{i} = translate c{i} 0 0 {fmt(z + ln / 2)}"]
        names.append(f"s{i}")
        z += ln
        vol += math.pi * r * r * ln
    lines.append(f"shaft = union {' '.join(names)}")
    secs = ", ".join(f"radius {r} mm for {ln} mm" for r, ln in zip(radii, lens))
    desc = f"A stepped shaft on the z axis standing on z = 0, sections from the bottom up: {secs}"
    holes, last = 0, "shaft"
    if difficulty >= 2:
        k = max(range(n), key=lambda i: radii[i])
        cr = min(2, radii[k] - 2)
        zc = sum(lens[:k]) + lens[k] / 2
        lines += [f"x0 = cylinder {cr} {4 * max(radii)}", f"x1 = rotate x0 x 90",
                  f"cross = translate x1 0 0 {fmt(zc)}", "p0 = difference shaft cross"]
        vol -= math.pi * cr * cr * 2 * radii[k]
        holes, last = 1, "p0"
        desc += f"; a cross hole of radius {cr} mm along y through the widest section, at z = {fmt(zc)} mm"
    if difficulty == 3:
        br = max(1, min(radii) - 3)
        lines += [f"b0 = cylinder {br} {2 * z + 4}", f"bore = translate b0 0 0 {fmt(z / 2)}", "p1 = difference p0 bore"]
        vol -= math.pi * br * br * z
        vol += math.pi * br * br * 2 * min(2, radii[k] - 2)  # the two bores' shared void is removed once
        holes, last = 3, "p1"
        desc += f"; an axial bore of radius {br} mm through the whole length"
    spec = (f"{desc}. Total length {z} mm, volume {vol:.0f} mm^3 (within 3 %), {holes} through-openings, one solid.")
    cons = _kit.centred_part([2 * max(radii), 2 * max(radii), z], vol, holes)
    return _kit.build(ID_SHAFT, difficulty, spec, "\n".join(lines) + f"\nresult {last}", cons)


register_domain(_kit.csg_domain(ID_SHAFT, _draw_shaft, """\
Modelling a turned part from its description: a stepped shaft with cross hole and axial bore.

Coaxial cylinders stacked along z from z = 0 (2, 3 or 4 sections), with a cross hole through one
section (d2) and also an axial bore through the whole shaft (d3, the two bores meet: 3 through-
openings).
"""))
