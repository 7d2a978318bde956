"""Real-tier CAD edits: the task gives a working build123d script; change one feature.

- ``geometry3d.cad_edit_hole_size-v1``: resize the holes of a drilled plate: both holes
  (d1), the four corner holes (d2), only the central hole of a five-hole plate (d3);
- ``geometry3d.cad_edit_add_hole-v1``: add a through-hole at a given position to a plate
  with two (d1) or four (d2) holes, or to a flange between two bolt holes (d3);
- ``geometry3d.cad_edit_move_block-v1``: move the block of a plate-and-block assembly to a
  new position (d1: along X, d2: in X and Y, d3: one of two blocks).

The edited feature's probe points are key: submitting the starting script unchanged fails
a gate and scores 0 (it is one of the probes); the rest of the part must stay as it was.
"""

from __future__ import annotations

import copy
import math

from posttrain.domains.base import register_domain

from . import cad_assemblies as asm
from . import cad_parts as parts
from .cad_kit import CadDomain, hole_probes, num, probe


# ---------------------------------------------------------------- resize holes
def resize_params(rng, d: int) -> dict:
    old = parts.plate_params(rng, d)
    new = copy.deepcopy(old)
    which = [len(new["holes"]) - 1] if d == 3 else list(range(len(new["holes"])))
    for i in which:
        r = new["holes"][i][2]
        new["holes"][i][2] = r + (1 if r <= 2.5 else rng.choice([-1, 1])) * (2 if d == 3 else 1)
    return {"old": old, "new": new, "which": which}


def resize_brief(p) -> str:
    i = p["which"][0]
    old_d, new_d = 2 * p["old"]["holes"][i][2], 2 * p["new"]["holes"][i][2]
    what = "the central hole" if len(p["which"]) == 1 and len(p["old"]["holes"]) == 5 else f"all {len(p['which'])} holes"
    return (f"Edit this part: change the diameter of {what} from {num(old_d)} mm to {num(new_d)} mm. "
            "Keep every other dimension and position as it is.")


def resize_spec(p) -> dict:
    spec = parts.plate_spec(p["new"])
    T = p["new"]["T"]
    for i in p["which"]:
        x, y, r1 = p["new"]["holes"][i]
        r0 = p["old"]["holes"][i][2]
        spec["probes"].append(probe(f"hole{i}_resized", (x + (r0 + r1) / 2, y, T / 2), r1 < r0, True))
    return spec


# ---------------------------------------------------------------- add a hole
def addhole_params(rng, d: int) -> dict:
    if d < 3:
        base = parts.plate_params(rng, d)
        at = [0.0, round(-base["W"] / 2 + 7, 1) if d == 2 else 0.0]
        return {"kind": "plate", "base": base, "at": at, "r": rng.choice([2, 2.5, 3])}
    base = parts.flange_params(rng, 2)
    a = math.pi / base["n"]  # halfway between bolt 0 and bolt 1
    return {"kind": "flange", "base": base, "r": 1.5,
            "at": [round(base["R"] * math.cos(a), 3), round(base["R"] * math.sin(a), 3)]}


def _base_script(p) -> str:
    return (parts.plate_script if p["kind"] == "plate" else parts.flange_script)(p["base"])


def _thick(p) -> float:
    return p["base"]["T"]


def addhole_script(p) -> str:
    T, (x, y) = _thick(p), p["at"]
    cut = f"part = part - Pos({num(x)}, {num(y)}, {num(T / 2)}) * Cylinder({p['r']}, {3 * T})\n"
    return _base_script(p).replace("result = part\n", cut + "result = part\n")


def addhole_brief(p) -> str:
    x, y = p["at"]
    return (f"Edit this part: add one vertical through-hole of diameter {num(2 * p['r'])} mm centred "
            f"at x = {num(x)}, y = {num(y)}. Change nothing else.")


def addhole_spec(p) -> dict:
    spec = (parts.plate_spec if p["kind"] == "plate" else parts.flange_spec)(p["base"])
    spec.pop("symmetry", None)  # an added off-centre hole may break the mirror symmetry
    spec["probes"] += hole_probes("new_hole", (*p["at"], _thick(p) / 2), p["r"])
    return spec


# ---------------------------------------------------------------- move a block
def move_params(rng, d: int) -> dict:
    old = asm.stacked_params(rng, 3 if d == 3 else 1)
    new = copy.deepcopy(old)
    l, w, _ = old["block"]
    # every move is at least a block length (or 3/4 of a width), so the old place is empty
    if d == 1:
        new["offsets"][0][0] = rng.choice([-1, 1]) * (l + rng.randint(0, 3))
    elif d == 2:
        new["offsets"][0] = [rng.choice([-1, 1]) * (l + rng.randint(0, 3)), rng.choice([-1, 1]) * rng.randint(4, 9)]
    else:
        y0, room = old["offsets"][1][1], old["W"] / 2 - w / 2
        new["offsets"][1][1] = -room if y0 > 0 else room
    return {"old": old, "new": new, "moved": 1 if d == 3 else 0}


def move_brief(p) -> str:
    i = p["moved"]
    x, y = p["new"]["offsets"][i]
    name = "the second block (the one at +X)" if i == 1 else "the block"
    return (f"Edit this assembly: move {name}, with its hole, so that it is centred in X/Y at "
            f"({num(x)}, {num(y)}), still sitting on the plate. Keep the solids separate and change nothing else.")


def move_spec(p) -> dict:
    spec = asm.stacked_spec(p["new"])
    i, T, (l, w, h) = p["moved"], p["old"]["T"], p["old"]["block"]
    ox, oy = p["old"]["offsets"][i]
    spec["probes"].append(probe("old_place_empty", (ox + l / 2 - 1.5, oy, T + h / 2), False, True))
    return spec


register_domain(CadDomain("geometry3d.cad_edit_hole_size-v1", resize_params,
                          lambda p: parts.plate_script(p["new"]), resize_brief, resize_spec,
                          given=lambda p: parts.plate_script(p["old"]),
                          description=('Editing a given build123d script: resize its holes, leaving the rest '
                                       'of the part as it is.')))
register_domain(CadDomain("geometry3d.cad_edit_add_hole-v1", addhole_params, addhole_script,
                          addhole_brief, addhole_spec, given=_base_script,
                          description=('Editing a given build123d script: add a hole at a stated place '
                                       'without disturbing the part.')))
register_domain(CadDomain("geometry3d.cad_edit_move_block-v1", move_params,
                          lambda p: asm.stacked_script(p["new"]), move_brief, move_spec,
                          given=lambda p: asm.stacked_script(p["old"]),
                          description=('Editing a given assembly script: move a block along X, in X and Y, or '
                                       'one of two blocks.')))
