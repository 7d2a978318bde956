"""3D-modelling domains where a dimension or position must be worked out first: a target
surface area, placement by centroid, the largest inscribed solid, a minimal connector between
two blocks, and a ported housing.

- ``geometry3d.surface_area-v1`` — the height that gives a box (d1), a box with a square
  through-hole (d2) or the lower box of a two-box stack (d3) a stated surface area.
- ``geometry3d.placement-v1`` — a given part (its script is in the prompt) to be placed so its
  centroid lands on a given point: a box (d1), an L of two boxes (d2), a block with an
  off-centre hole (d3).
- ``geometry3d.inscribed-v1`` — the largest solid of a kind inside an envelope: a z-axis
  cylinder in a box (d1), a sphere in a box (d2), a square-section prism in a cylinder (d3).
- ``geometry3d.bridge-v1`` — two given cubes joined by the least material: a straight bar of
  a given square section (d1: blocks aligned on x), an L-shaped run (d2: offset in x and y),
  a run with a vertical leg (d3: one cube raised). "One piece" and keeping both cubes are
  gates; the volume may not exceed the minimal connector's.
- ``geometry3d.housing-v1`` — a closed box with walls of a given thickness and a round port in
  the +x wall (d1: the void becomes a pocket, no cavity), ports in both x walls (d2: one
  through-hole), and two drilled mounting tabs (d3: three through-holes).

Scoring: :mod:`._kit` (IoU-gated components; area, centroid, envelope, containment and
material bound from :mod:`posttrain.verifiers.geometry_more`). What they train: solving for a
dimension or an offset before modelling, optimisation under a bound. Not covered: non-axis
optimisation, arbitrary surface areas of curved parts. Probes: the shared ones, the given
part unplaced (placement), the envelope offset (inscribed), the two cubes without a
connector (bridge).
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d import _kit as K
from posttrain.domains.geometry3d._kit import fmt as F


ID_SURFACE_AREA = "geometry3d.surface_area-v1"


def _draw_surface_area(rng: random.Random, difficulty: int) -> Task:
    w, d, h = 2 * rng.randint(5, 12), 2 * rng.randint(5, 12), rng.randint(4, 18)
    lines = [f"b0 = box {w} {d} {h}", f"b = translate b0 0 0 {F(h / 2)}"]
    area, vol, holes, top = 2 * (w * d + (w + d) * h), w * d * h, 0, h
    what = f"a rectangular block {w} mm along x and {d} mm along y"
    if difficulty == 2:
        a = 2 * rng.randint(1, min(w, d) // 4)
        lines += [f"s0 = box {a} {a} {h + 4}", f"s = translate s0 0 0 {F(h / 2)}", "part = difference b s"]
        area += 4 * a * h - 2 * a * a
        vol -= a * a * h
        holes = 1
        what += f" with a square through-hole {a} x {a} mm running vertically through its centre"
    if difficulty == 3:
        uw, ud, uh = w - 2 * rng.randint(1, w // 4), d - 2 * rng.randint(1, d // 4), rng.randint(2, 8)
        lines += [f"u0 = box {uw} {ud} {uh}", f"u = translate u0 0 0 {F(h + uh / 2)}", "part = union b u"]
        area += 2 * (uw + ud) * uh
        vol += uw * ud * uh
        top = h + uh
        what = (f"two stacked blocks: a lower block {w} mm along x and {d} mm along y of unknown height, and centred "
                f"on its top an upper block {uw} x {ud} x {uh} mm")
    spec = (f"Model {what}, standing on z = 0 and centred on the z axis, whose total surface area is exactly "
            f"{area} mm^2: work out the missing height.")
    cons = [{"kind": "area", "value": area, "rel_tol": 0.01}, {"kind": "size", "value": [w, d, top]},
            {"kind": "volume", "value": vol}, {"kind": "holes", "value": holes}, {"kind": "rests_on_z0"},
            {"kind": "centred_xy"}]
    return K.build(ID_SURFACE_AREA, difficulty, spec, "\n".join(lines), cons)


register_domain(K.csg_domain(ID_SURFACE_AREA, _draw_surface_area, """\
Solving for a height from a surface area and modelling the solid.

The height that gives a box (d1), a box with a square through-hole (d2) or the lower box of a
two-box stack (d3) a stated surface area.
"""))


ID_PLACEMENT = "geometry3d.placement-v1"


def _draw_placement(rng: random.Random, difficulty: int) -> Task:
    a, b, c = 2 * rng.randint(2, 5), 2 * rng.randint(2, 5), 2 * rng.randint(2, 4)
    if difficulty == 3:  # a hole big enough to move the centroid by more than the tolerance
        a, b = 10, 8
    part = [f"blk = box {a} {b} {c}"]
    v0, m = a * b * c, [0.0, 0.0, 0.0]  # volume and first moments of the part as given
    if difficulty == 2:
        e = 2 * rng.randint(1, 2)
        part += [f"arm0 = box {e} {b} {2 * c}", f"arm = translate arm0 {F(a / 2 + e / 2)} 0 {F(c / 2)}",
                 "piece = union blk arm"]
        va = e * b * 2 * c
        m = [va * (a / 2 + e / 2), 0.0, va * c / 2]
        v0 += va
    if difficulty == 3:
        r, hx = 2.5, 1.5
        part += [f"hole = cylinder {r} {2 * c}", f"hole1 = translate hole {F(hx)} 0 0", "piece = difference blk hole1"]
        vh = math.pi * r * r * c
        m = [-vh * hx, 0.0, 0.0]
        v0 -= vh
    cen = [x / v0 for x in m]
    sx, sy = rng.choice([-1, 1]), rng.choice([-1, 1])
    goal = [sx * rng.randint(6, 8), sy * rng.randint(0, 6), rng.randint(c + 2, c + 8)]
    name = part[-1].split("=")[0].strip()
    shift = [g - q for g, q in zip(goal, cen)]
    target = "\n".join(part + [f"placed = translate {name} {F(round(shift[0], 4))} {F(round(shift[1], 4))} "
                               f"{F(round(shift[2], 4))}"])
    spec = ("Here is a part, defined at the origin:\n" + "\n".join(part) + "\nPlace this exact part (same shape and "
            f"orientation, only translated) so that its centroid (centre of mass, uniform density) is at (x, y, z) = "
            f"({goal[0]}, {goal[1]}, {goal[2]}). Answer with a complete script that defines the part and places it.")
    cons = [{"kind": "centroid", "value": goal, "tol": 0.3}, {"kind": "volume", "value": v0},
            {"kind": "pieces", "value": 1}, {"kind": "holes", "value": 1 if difficulty == 3 else 0}]
    return K.build(ID_PLACEMENT, difficulty, spec, target, cons, intro="Place this part.")


def _placement_probes(task: Task) -> dict[str, str]:
    return {"unplaced": "\n".join(task.hidden["target"].splitlines()[:-1])}


register_domain(K.csg_domain(ID_PLACEMENT, _draw_placement, """\
Placing a given part so that its centroid lands on a point (centroid arithmetic).

A given part (its script is in the prompt) to be placed so its centroid lands on a given point:
a box (d1), an L of two boxes (d2), a block with an off-centre hole (d3).
""", _placement_probes))


ID_INSCRIBED = "geometry3d.inscribed-v1"


def _draw_inscribed(rng: random.Random, difficulty: int) -> Task:
    w, d, h = 2 * rng.randint(6, 14), 2 * rng.randint(6, 14), 2 * rng.randint(5, 12)
    if difficulty == 1:
        r = min(w, d) / 2
        target, vol = f"c = cylinder {F(r)} {h}\npart = translate c 0 0 {F(h / 2)}", math.pi * r * r * h
        env, lo, hi = f"a box {w} x {d} x {h} mm (x, y, z) standing on z = 0, centred on the z axis", \
            [-w / 2, -d / 2, 0], [w / 2, d / 2, h]
        what, size = "the largest solid cylinder with its axis along z", [2 * r, 2 * r, h]
    elif difficulty == 2:
        r = min(w, d, h) / 2
        target, vol = f"s = sphere {F(r)}\npart = translate s 0 0 {F(h / 2)}", 4 / 3 * math.pi * r ** 3
        env, lo, hi = f"a box {w} x {d} x {h} mm (x, y, z) standing on z = 0, centred on the z axis", \
            [-w / 2, -d / 2, 0], [w / 2, d / 2, h]
        what, size = "the largest sphere, centred in the box", [2 * r] * 3
    else:
        R = rng.randint(6, 14)
        s = round(R * math.sqrt(2), 4)
        target, vol = f"b = box {F(s)} {F(s)} {h}\npart = translate b 0 0 {F(h / 2)}", s * s * h
        env, lo, hi = f"a cylinder of radius {R} mm and height {h} mm, axis along z, standing on z = 0", \
            [-R, -R, 0], [R, R, h]
        what, size = "the largest box with a square cross-section in x-y (sides along x and y) and the full height", \
            [s, s, h]
    spec = (f"The envelope is {env}. Model {what} that fits inside the envelope, centred on the z axis. Its volume is "
            f"the largest possible (within 5 %).")
    cons = [{"kind": "volume", "value": vol, "rel_tol": 0.05}, {"kind": "within", "lo": lo, "hi": hi},
            {"kind": "size", "value": size}, {"kind": "centred_xy"}, {"kind": "pieces", "value": 1}]
    return K.build(ID_INSCRIBED, difficulty, spec, target, cons)


register_domain(K.csg_domain(ID_INSCRIBED, _draw_inscribed, """\
Fitting the largest solid of a kind inside a bounding envelope.

The largest solid of a kind inside an envelope: a z-axis cylinder in a box (d1), a sphere in a
box (d2), a square-section prism in a cylinder (d3).
"""))


ID_BRIDGE = "geometry3d.bridge-v1"


def _draw_bridge(rng: random.Random, difficulty: int) -> Task:
    s, a = 2 * rng.randint(3, 4), 2
    ax, bx = -rng.randint(9, 12), rng.randint(9, 12)
    ay, by = (0, 0) if difficulty == 1 else (-rng.randint(4, 7), rng.randint(4, 7))
    az, bz = s / 2, s / 2 + (rng.randint(4, 8) if difficulty == 3 else 0)
    blocks = [f"cube = box {s} {s} {s}", f"ca = translate cube {ax} {ay} {F(az)}", f"cb = translate cube {bx} {by} {F(bz)}"]
    zc = a / 2 + 1  # the connector runs 1 mm above the floor
    # the run: from A's +x face along x to x = bx, then along y to B's -y face, then up into B (d3)
    x0, x1 = ax + s / 2, bx + (a / 2 if difficulty > 1 else -s / 2)
    segs = [((x0 + x1) / 2, ay, zc, x1 - x0, a, a)]
    if difficulty > 1:
        y0, y1 = ay - a / 2, by - s / 2
        segs.append((bx, (y0 + y1) / 2, zc, a, y1 - y0, a))
    lines = list(blocks)
    for i, (cx, cy, cz, lx, ly, lz) in enumerate(segs):
        lines += [f"g{i} = box {F(lx)} {F(ly)} {F(lz)}", f"r{i} = translate g{i} {F(cx)} {F(cy)} {F(cz)}"]
    if difficulty == 3:  # B floats: a post under it from the run up to its bottom face
        z1 = bz - s / 2
        lines += [f"g9 = box {a} {a} {F(z1 - zc + a / 2)}", f"r9 = translate g9 {bx} {F(by - s / 2 + a / 2)} "
                                                              f"{F((zc - a / 2 + z1) / 2)}"]
    parts = ["ca", "cb"] + [ln.split("=")[0].strip() for ln in lines if ln.startswith("r")]
    lines.append(f"part = union {' '.join(parts)}")
    target = "\n".join(lines)
    vol = K.target_measure(target)[0]["volume"]
    where = f"A at ({ax}, {ay}, {F(az)}) and B at ({bx}, {by}, {F(bz)})"
    spec = (f"Two cubes of side {s} mm are given, centred at {where}:\n" + "\n".join(blocks) + "\nJoin them into one "
            f"solid with connecting bars of square section {a} x {a} mm whose bottom is 1 mm above z = 0 (the bars "
            "run parallel to the axes), using as little material as possible: the total volume may not exceed "
            f"{vol:.0f} mm^3 (within 3 %). Keep both cubes exactly where they are.")
    cons = [{"kind": "pieces", "value": 1, "gate": True},
            {"kind": "contains", "name": "A", "script": f"{blocks[0]}\n{blocks[1]}", "gate": True},
            {"kind": "contains", "name": "B", "script": f"{blocks[0]}\n{blocks[2]}", "gate": True},
            {"kind": "volume_max", "value": vol}, {"kind": "volume", "value": vol, "rel_tol": 0.05}]
    return K.build(ID_BRIDGE, difficulty, spec, target, cons, intro="Connect these parts.")


def _bridge_probes(task: Task) -> dict[str, str]:
    blocks = task.hidden["target"].splitlines()[:3]
    return {"cubes_only": "\n".join(blocks + ["both = union ca cb"]),
                                   "solid_hull": "h = box 60 40 30\nm = translate h 0 0 15"}


register_domain(K.csg_domain(ID_BRIDGE, _draw_bridge, """\
Joining two given cubes with the least material (one piece, a volume budget).

Two given cubes joined by the least material: a straight bar of a given square section (d1:
blocks aligned on x), an L-shaped run (d2: offset in x and y), a run with a vertical leg (d3:
one cube raised). "One piece" and keeping both cubes are gates; the volume may not exceed the
minimal connector's.
""", _bridge_probes))


ID_HOUSING = "geometry3d.housing-v1"


def _draw_housing(rng: random.Random, difficulty: int) -> Task:
    w, d, h, t = 2 * rng.randint(8, 12), 2 * rng.randint(6, 9), 2 * rng.randint(5, 8), 2
    pr = rng.randint(2, min(3, h // 2 - t - 1))
    lines = [f"o0 = box {w} {d} {h}", f"outer = translate o0 0 0 {F(h / 2)}",
             f"v0 = box {w - 2 * t} {d - 2 * t} {h - 2 * t}", f"void = translate v0 0 0 {F(h / 2)}",
             f"port = cylinder {pr} {2 * t + 2}", "port1 = rotate port y 90",
             f"pa = translate port1 {F(w / 2 - t / 2)} 0 {F(h / 2)}"]
    cut, body = ["void", "pa"], "outer"
    vol = w * d * h - (w - 2 * t) * (d - 2 * t) * (h - 2 * t) - math.pi * pr * pr * t
    holes, size_d = 0, d
    if difficulty >= 2:
        lines.append(f"pb = translate port1 {F(-w / 2 + t / 2)} 0 {F(h / 2)}")
        cut.append("pb")
        vol -= math.pi * pr * pr * t
        holes = 1
    if difficulty == 3:
        tl, tt = 6, 2
        lines += [f"tab0 = box {w // 2} {d + 2 * tl} {tt}", f"tab = translate tab0 0 0 {F(tt / 2)}",
                  "body = union outer tab", "drill = cylinder 1.5 10",
                  f"da = translate drill 0 {F(d / 2 + tl / 2)} 0", f"db = translate drill 0 {F(-d / 2 - tl / 2)} 0"]
        cut += ["da", "db"]
        body = "body"
        vol += 2 * (w // 2) * tl * tt - 2 * math.pi * 1.5 ** 2 * tt
        holes, size_d = 3, d + 2 * tl
    lines.append(f"part = difference {body} {' '.join(cut)}")
    spec = (f"A closed housing {w} x {d} x {h} mm (x, y, z) on z = 0, centred on the z axis, walls, floor and lid all "
            f"{t} mm thick, with a round port of radius {pr} mm through the +x wall on the axis y = 0, z = {F(h / 2)}")
    if difficulty >= 2:
        spec += " and an identical port through the -x wall"
    if difficulty == 3:
        spec += (f"; a mounting plate {w // 2} mm long (x) and 2 mm thick under the housing, centred, sticking out 6 "
                 "mm beyond the housing on both y sides, each side drilled with a hole of radius 1.5 mm centred in "
                 "the protruding part")
    spec += f". Volume {vol:.0f} mm^3, {holes} through-holes, no sealed cavity."
    cons = [{"kind": "size", "value": [w, size_d, h]}, {"kind": "volume", "value": vol},
            {"kind": "holes", "value": holes}, {"kind": "cavities", "value": 0}, {"kind": "pieces", "value": 1},
            {"kind": "rests_on_z0"}, {"kind": "centred_xy"}]
    return K.build(ID_HOUSING, difficulty, spec, "\n".join(lines), cons)


def _housing_probes(task: Task) -> dict[str, str]:
    w, d, h = K.size_of(task)
    return {"solid_block_far": f"b = box {w} {d} {h}\nm = translate b 0 {2 * d + 30} {h / 2}"}


register_domain(K.csg_domain(ID_HOUSING, _draw_housing, """\
Modelling a closed housing with wall ports and drilled mounting tabs.

A closed box with walls of a given thickness and a round port in the +x wall (d1: the void
becomes a pocket, no cavity), ports in both x walls (d2: one through-hole), and two drilled
mounting tabs (d3: three through-holes).
""", _housing_probes))
