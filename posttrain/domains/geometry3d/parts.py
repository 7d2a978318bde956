"""3D-modelling domains for single parts: drilled plates, solids sized by volume, shells.

- ``geometry3d.plate_holes-v1`` — a plate on the floor with through-holes: one central hole
  (d1), two to four holes at given coordinates (d2), a centred grid of holes at a pitch (d3).
- ``geometry3d.volume_fit-v1`` — a solid whose missing dimension follows from its volume: a
  box's height (d1), a cylinder's radius (d2), a tube's inner radius (d3).
- ``geometry3d.shell-v1`` — thin-walled boxes: an open-top container (d1), a closed box with
  an internal cavity (d2), a two-compartment container with a drain hole in each floor (d3).

Each task states dimensions, placement and topology (holes, cavities) in words; the hidden
target script is the verifier's reference for IoU. Scoring and the shared probes are in
:mod:`._kit`. What they train: translating a specification into constructive geometry,
arithmetic from volume, placement. Not covered: fillets, chamfers, threads, tolerancing.

Probes: the shared ones of :mod:`._kit`, and (plates) a model of one hole's cylinder alone.
A plate without its holes is not a probe: it overlaps the target and earns partial credit
(size, placement, IoU) by design while failing the hole and volume checks.
"""

from __future__ import annotations

import math
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d import _kit
from posttrain.domains.geometry3d._kit import fmt


def _plate_lines(w: int, d: int, h: int) -> list[str]:
    return [f"plate0 = box {w} {d} {h}", f"plate = translate plate0 0 0 {fmt(h / 2)}"]


def _drill(lines: list[str], base: str, holes: list[tuple[float, float]], r: float, h: float) -> str:
    lines.append(f"drill = cylinder {fmt(r)} {fmt(h * 3)}")
    names = []
    for i, (x, y) in enumerate(holes):
        lines.append(f"h{i} = translate drill {fmt(x)} {fmt(y)} {fmt(h / 2)}")
        names.append(f"h{i}")
    lines.append(f"part = difference {base} {' '.join(names)}")
    return "\n".join(lines)


ID_PLATE_HOLES = "geometry3d.plate_holes-v1"


def _draw_plate_holes(rng: random.Random, difficulty: int) -> Task:
    w, d, h = 2 * rng.randint(15, 30), 2 * rng.randint(10, 22), 2 * rng.randint(2, 5)
    r = rng.randint(2, 4)
    if difficulty == 1:
        holes = [(0, 0)]
        where = "one hole centred on the plate"
    elif difficulty == 2:
        holes = []
        while len(holes) < rng.randint(2, 4) or not holes:
            x, y = rng.randint(-w // 2 + r + 2, w // 2 - r - 2), rng.randint(-d // 2 + r + 2, d // 2 - r - 2)
            if all(math.hypot(x - a, y - b) >= 2 * r + 3 for a, b in holes):
                holes.append((x, y))
            if len(holes) >= 4:
                break
        where = f"{len(holes)} holes centred at (x, y) = " + ", ".join(f"({x}, {y})" for x, y in holes)
    else:
        rows, cols = rng.choice([(2, 2), (2, 3), (3, 3)])
        pitch = rng.randint(2 * r + 3, 2 * r + 8)  # at least a 3 mm web between holes
        w = max(w, 2 * math.ceil(((cols - 1) * pitch + 2 * r + 8) / 2))
        d = max(d, 2 * math.ceil(((rows - 1) * pitch + 2 * r + 8) / 2))
        holes = [((c - (cols - 1) / 2) * pitch, (q - (rows - 1) / 2) * pitch) for q in range(rows) for c in range(cols)]
        where = (f"a grid of {rows} rows (along y) by {cols} columns (along x) of holes at a pitch of {pitch} mm, "
                 "centred on the plate")
    target = _drill(_plate_lines(w, d, h), "plate", holes, r, h)
    vol = w * d * h - len(holes) * math.pi * r * r * h
    spec = (f"A rectangular plate {w} mm along x, {d} mm along y and {h} mm thick, lying on the plane z = 0 and "
            f"centred on the z axis, with vertical through-holes of radius {r} mm: {where}. "
            f"Its volume is {vol:.0f} mm^3 (within 3 %).")
    return _kit.build(ID_PLATE_HOLES, difficulty, spec, target, _kit.centred_part([w, d, h], vol, len(holes)))


def _plate_holes_probes(task: Task) -> dict[str, str]:
    """One hole's cylinder alone."""
    h = _kit.size_of(task)[2]
    return {"holes_only": f"c = cylinder 3 {h}\nm = translate c 0 0 {h / 2}"}


register_domain(_kit.csg_domain(ID_PLATE_HOLES, _draw_plate_holes, """\
Modelling a drilled plate: hole placement from coordinates, counts and pitches.

A plate on the floor with through-holes: one central hole (d1), two to four holes at given
coordinates (d2), a centred grid of holes at a pitch (d3).
""", _plate_holes_probes))


ID_VOLUME_FIT = "geometry3d.volume_fit-v1"


def _draw_volume_fit(rng: random.Random, difficulty: int) -> Task:
    h = 2 * rng.randint(4, 15)
    if difficulty == 1:
        w, d, hh = 2 * rng.randint(5, 25), 2 * rng.randint(5, 25), rng.randint(6, 30)
        vol = w * d * hh
        target = f"b = box {w} {d} {hh}\npart = translate b 0 0 {fmt(hh / 2)}"
        spec = (f"A rectangular block {w} mm along x and {d} mm along y whose volume is exactly {vol} mm^3; "
                "work out its height. It lies on the plane z = 0, centred on the z axis.")
        size, holes = [w, d, hh], 0
    else:
        r = round(rng.uniform(8, 20), 2)
        if difficulty == 2:
            vol = math.pi * r * r * h
            target = f"c = cylinder {fmt(r)} {h}\npart = translate c 0 0 {fmt(h / 2)}"
            spec = (f"A solid cylinder with its axis along z, {h} mm tall, whose volume is {vol:.1f} mm^3; "
                    "work out its radius. It stands on the plane z = 0, centred on the z axis.")
            holes = 0
        else:
            ri = round(rng.uniform(0.3, 0.6) * r, 2)
            vol = math.pi * (r * r - ri * ri) * h
            target = (f"o = cylinder {fmt(r)} {h}\ni = cylinder {fmt(ri)} {h * 2}\nt = difference o i\n"
                      f"part = translate t 0 0 {fmt(h / 2)}")
            spec = (f"A tube (hollow cylinder) with its axis along z, {h} mm tall, outer radius {fmt(r)} mm, "
                    f"whose volume is {vol:.1f} mm^3; work out its inner radius. It stands on the plane z = 0, "
                    "centred on the z axis; the bore goes all the way through.")
            holes = 1
        size = [2 * r, 2 * r, h]
    # curved walls sampled on a grid of 0.5-1 mm cells: allow 5 % (about 2.5 % on a radius)
    cons = [{"kind": "volume", "value": vol, "rel_tol": 0.03 if difficulty == 1 else 0.05},
            {"kind": "size", "value": size}, {"kind": "holes", "value": holes},
            {"kind": "rests_on_z0"}, {"kind": "centred_xy"}]
    return _kit.build(ID_VOLUME_FIT, difficulty, spec, target, cons)


register_domain(_kit.csg_domain(ID_VOLUME_FIT, _draw_volume_fit, """\
Solving for a missing dimension from a volume and modelling the solid.

A solid whose missing dimension follows from its volume: a box's height (d1), a cylinder's
radius (d2), a tube's inner radius (d3).
"""))


ID_SHELL = "geometry3d.shell-v1"


def _draw_shell(rng: random.Random, difficulty: int) -> Task:
    w, d, h = 2 * rng.randint(12, 28), 2 * rng.randint(10, 22), 2 * rng.randint(6, 14)
    t = 2 * rng.randint(1, 2)
    lines = [f"outer0 = box {w} {d} {h}", f"outer = translate outer0 0 0 {h // 2}"]
    iw, idp = w - 2 * t, d - 2 * t
    if difficulty == 2:  # closed: the void stops t below the top
        ih = h - 2 * t
        lines += [f"void0 = box {iw} {idp} {ih}", f"void = translate void0 0 0 {h // 2}",
                  "part = difference outer void"]
        vol, cav, holes = w * d * h - iw * idp * ih, 1, 0
        what = f"a closed box with walls, floor and lid all {t} mm thick and one sealed internal cavity"
    else:  # open top: the void runs from the floor (thickness t) up through the top
        ih = h - t
        lines += [f"void0 = box {iw} {idp} {ih + 2}", f"void = translate void0 0 0 {t + (ih + 2) / 2:g}"]
        vol, cav, holes = w * d * h - iw * idp * ih, 0, 0
        what = f"an open-top container with walls and floor {t} mm thick"
        if difficulty == 1:
            lines.append("part = difference outer void")
        else:
            r = 2
            lines += [f"wall0 = box {t} {d} {h}", f"wall = translate wall0 0 0 {h // 2}",
                      "body0 = difference outer void", "body = union body0 wall",
                      f"drain = cylinder {r} {4 * t}", f"d0 = translate drain {-(iw // 4 + t // 4)} 0 0",
                      f"d1 = translate drain {iw // 4 + t // 4} 0 0", "part = difference body d0 d1"]
            vol += t * idp * ih - 2 * math.pi * r * r * t
            holes = 2
            what += (f", divided into two equal compartments by a {t} mm wall across the middle (in the plane "
                     f"x = 0), each compartment with a drain hole of radius 2 mm through the floor at "
                     f"x = ±{iw // 4 + t // 4} mm, y = 0")
    spec = (f"Outer size {w} mm along x, {d} mm along y, {h} mm tall: {what}. It lies on the plane z = 0, "
            f"centred on the z axis. Its volume is {vol:.0f} mm^3 (within 3 %); it has {cav} internal cavities "
            f"and {holes} through-holes.")
    cons = [{"kind": "size", "value": [w, d, h]}, {"kind": "volume", "value": vol},
            {"kind": "cavities", "value": cav}, {"kind": "holes", "value": holes}, {"kind": "pieces", "value": 1},
            {"kind": "rests_on_z0"}]
    return _kit.build(ID_SHELL, difficulty, spec, "\n".join(lines), cons)


register_domain(_kit.csg_domain(ID_SHELL, _draw_shell, """\
Modelling thin-walled containers and closed shells (walls, cavities, drain holes).

Thin-walled boxes: an open-top container (d1), a closed box with an internal cavity (d2), a two-
compartment container with a drain hole in each floor (d3).
"""))
