"""Real-tier CAD parts (build123d in the sandbox, measured by ``verifiers.cad``).

- ``geometry3d.cad_plate_holes-v1``: a plate with through-holes: two in a row (d1), four at
  the corners (d2), four corners plus a large central hole (d3);
- ``geometry3d.cad_flange-v1``: a disc with a centre bore and a bolt circle of 4 (d1) or 6
  (d2) holes, and (d3) a hub on top that the bore passes through;
- ``geometry3d.cad_l_bracket-v1``: an L bracket with one base hole (d1), plus one hole in
  the upright (d2), two in each leg (d3);
- ``geometry3d.cad_tube-v1``: a standoff tube of given wall thickness (d1), with a collar at
  its foot (d2), and a cross hole through both walls (d3);
- ``geometry3d.cad_pocket_block-v1``: a block with a blind pocket of given wall and floor
  thickness (d1), a drain hole in the floor (d2), two pockets split by a rib (d3).

Every brief states its datum. The spec's probe points check hole positions and sizes and
wall thicknesses (the key ones gate the reward); the target is the reference script below.
"""

from __future__ import annotations

import math

from posttrain.domains.base import register_domain

from .cad_kit import CadDomain, hole_probes, num, probe

HEAD = "from build123d import *\n"
BASE = "(Align.CENTER, Align.CENTER, Align.MIN)"


def _cut_z(holes: list) -> str:
    return "".join(f"part = part - Pos({num(x)}, {num(y)}, {num(z)}) * Cylinder({num(r)}, {num(h)})\n"
                   for x, y, z, r, h in holes)


# ---------------------------------------------------------------- plate with holes
def plate_params(rng, d: int) -> dict:
    # level 3 adds a central hole of radius >= 5 between the corner holes: W >= 50 leaves room
    # (at W = 40 the room could be 1 mm, and generate raised for some seeds)
    L, W = rng.randrange(60, 101, 5), rng.randrange(40 if d < 3 else 50, 71, 5)
    T, r = rng.randint(4, 10), rng.choice([2, 2.5, 3, 3.5])
    a, b = L / 2 - r - rng.randint(5, 9), W / 2 - r - rng.randint(5, 8)
    holes = [[-a, 0, r], [a, 0, r]] if d == 1 else [[x, y, r] for x in (-a, a) for y in (-b, b)]
    if d == 3:
        holes.append([0, 0, rng.randint(5, int(min(a, b) - r - 4))])
    return {"L": L, "W": W, "T": T, "holes": holes}


def plate_script(p) -> str:
    T = p["T"]
    return (HEAD + f"part = Box({p['L']}, {p['W']}, {T}, align={BASE})\n"
            + _cut_z([(x, y, T / 2, r, 3 * T) for x, y, r in p["holes"]]) + "result = part\n")


def plate_brief(p) -> str:
    holes = "; ".join(f"diameter {num(2 * r)} at ({num(x)}, {num(y)})" for x, y, r in p["holes"])
    return (f"Model a flat plate {p['L']} x {p['W']} mm (X by Y), {p['T']} mm thick, lying on "
            f"z = 0 and centred on the origin in X and Y, with through-holes along Z: {holes}.")


def plate_spec(p) -> dict:
    T, L, W = p["T"], p["L"], p["W"]
    probes = [q for i, (x, y, r) in enumerate(p["holes"]) for q in hole_probes(f"hole{i}", (x, y, T / 2), r)]
    probes += [probe("thickness_in", (0, W / 2 - 1.5, 0.8 * T), True),
               probe("thickness_out", (0, W / 2 - 1.5, 1.2 * T), False),
               probe("outline_x", (L / 2 + 1.5, 0, T / 2), False)]
    return {"probes": probes, "symmetry": ["top", 0]}


# ---------------------------------------------------------------- flange
def flange_params(rng, d: int) -> dict:
    D, T = rng.randrange(60, 101, 5), rng.randint(6, 12)
    b = round(D * rng.uniform(0.25, 0.35))
    p = {"D": D, "T": T, "bore": b, "n": 4 if d == 1 else 6, "h": rng.choice([2.5, 3, 3.5, 4]),
         "R": round((D / 2 + b / 2) / 2, 1), "hub": None}
    if d == 3:
        p["hub"] = [b + rng.randrange(12, 19, 2), rng.randint(8, 15)]
    return p


def flange_script(p) -> str:
    T, H = p["T"], p["T"] + (p["hub"][1] if p["hub"] else 0)
    s = HEAD + f"part = Cylinder({num(p['D'] / 2)}, {T}, align={BASE})\n"
    if p["hub"]:
        s += f"part = part + Pos(0, 0, {T}) * Cylinder({num(p['hub'][0] / 2)}, {p['hub'][1]}, align={BASE})\n"
    s += f"part = part - Pos(0, 0, {num(H / 2)}) * Cylinder({num(p['bore'] / 2)}, {3 * H})\n"
    s += (f"for i in range({p['n']}):\n    a = 2 * 3.141592653589793 * i / {p['n']}\n"
          f"    part = part - Pos({p['R']} * cos(a), {p['R']} * sin(a), {num(T / 2)}) * Cylinder({p['h']}, {3 * T})\n")
    return s.replace(HEAD, HEAD + "from math import cos, sin\n") + "result = part\n"


def flange_brief(p) -> str:
    hub = (f" On top, a concentric hub of diameter {p['hub'][0]} and height {p['hub'][1]} mm; the "
           "bore goes through disc and hub." if p["hub"] else "")
    return (f"Model a flange: a disc of diameter {p['D']} mm and thickness {p['T']} mm on z = 0, "
            f"centred on the Z axis, with a centre bore of diameter {p['bore']} mm and {p['n']} "
            f"bolt holes of diameter {num(2 * p['h'])} mm equally spaced on a {num(2 * p['R'])} mm "
            f"bolt circle, the first on the +X axis.{hub}")


def flange_spec(p) -> dict:
    T = p["T"]
    probes = hole_probes("bore", (0, 0, T / 2), p["bore"] / 2, rim=False)
    for i in range(p["n"]):
        a = 2 * math.pi * i / p["n"]
        probes += hole_probes(f"bolt{i}", (p["R"] * math.cos(a), p["R"] * math.sin(a), T / 2), p["h"])
    probes.append(probe("rim", (0, p["D"] / 2 - 1.5, T / 2), True))
    if p["hub"]:
        probes += [probe("hub_wall", (0, (p["hub"][0] + p["bore"]) / 4, T + p["hub"][1] / 2), True, True),
                   probe("hub_top", (0, (p["hub"][0] + p["bore"]) / 4, T + p["hub"][1] + 1.5), False)]
    return {"probes": probes, "symmetry": ["top", 0]}


# ---------------------------------------------------------------- L bracket
def bracket_params(rng, d: int) -> dict:
    L, W, H, T = rng.randrange(50, 81, 5), rng.randrange(30, 51, 5), rng.randrange(40, 71, 5), rng.randint(5, 8)
    r = rng.choice([2.5, 3, 3.5])
    xm, zm = (T + L) / 2 + 2, (T + H) / 2 + 2
    c = round(W / 4, 1)
    base = [[xm, 0, r]] if d < 3 else [[xm, -c, r], [xm, c, r]]
    up = [] if d == 1 else ([[0, zm, r]] if d == 2 else [[-c, zm, r], [c, zm, r]])
    return {"L": L, "W": W, "H": H, "T": T, "base": base, "up": up}


def bracket_script(p) -> str:
    T = p["T"]
    s = (HEAD + f"part = Box({p['L']}, {p['W']}, {T}, align=(Align.MIN, Align.CENTER, Align.MIN))\n"
         f"part = part + Box({T}, {p['W']}, {p['H']}, align=(Align.MIN, Align.CENTER, Align.MIN))\n")
    s += _cut_z([(x, y, T / 2, r, 3 * T) for x, y, r in p["base"]])
    s += "".join(f"part = part - Pos({num(T / 2)}, {num(y)}, {num(z)}) * Rot(0, 90, 0) * Cylinder({r}, {3 * T})\n"
                 for y, z, r in p["up"])
    return s + "result = part\n"


def bracket_brief(p) -> str:
    base = "; ".join(f"diameter {num(2 * r)} at x={num(x)}, y={num(y)}" for x, y, r in p["base"])
    up = "; ".join(f"diameter {num(2 * r)} at y={num(y)}, z={num(z)}" for y, z, r in p["up"])
    return (f"Model an L bracket of {p['T']} mm plate, {p['W']} mm wide in Y (centred on y = 0): "
            f"the base leg spans x = 0..{p['L']}, z = 0..{p['T']}; the upright leg spans x = 0..{p['T']}, "
            f"z = 0..{p['H']}. Vertical through-holes in the base: {base}."
            + (f" Horizontal through-holes (along X) in the upright: {up}." if up else ""))


def bracket_spec(p) -> dict:
    T = p["T"]
    probes = [q for i, (x, y, r) in enumerate(p["base"]) for q in hole_probes(f"base{i}", (x, y, T / 2), r)]
    probes += [q for i, (y, z, r) in enumerate(p["up"]) for q in hole_probes(f"up{i}", (T / 2, y, z), r, axis="x")]
    probes += [probe("corner", (T / 2, 0, T / 2), True, True),
               probe("upright_top", (T / 2, p["W"] / 2 - 1.5, p["H"] - 1), True, True),
               probe("inside_corner", (T + 2, 0, T + 2), False, True)]
    return {"probes": probes, "symmetry": ["top", 1]}


# ---------------------------------------------------------------- tube / standoff
def tube_params(rng, d: int) -> dict:
    Ro, w, L = rng.randint(8, 16), rng.choice([1.5, 2, 2.5, 3]), rng.randrange(30, 61, 5)
    p = {"Ro": Ro, "w": w, "L": L, "collar": None, "cross": None}
    if d >= 2:
        p["collar"] = [Ro + rng.randint(5, 10), rng.randint(3, 5)]
    if d == 3:
        p["cross"] = [round(L * rng.uniform(0.55, 0.75)), rng.choice([1.5, 2, 2.5])]
    return p


def tube_script(p) -> str:
    Ro, L = p["Ro"], p["L"]
    s = HEAD + f"part = Cylinder({Ro}, {L}, align={BASE})\n"
    if p["collar"]:
        s += f"part = part + Cylinder({p['collar'][0]}, {p['collar'][1]}, align={BASE})\n"
    s += f"part = part - Pos(0, 0, {num(L / 2)}) * Cylinder({num(Ro - p['w'])}, {3 * L})\n"
    if p["cross"]:
        s += f"part = part - Pos(0, 0, {p['cross'][0]}) * Rot(0, 90, 0) * Cylinder({p['cross'][1]}, {4 * Ro})\n"
    return s + "result = part\n"


def tube_brief(p) -> str:
    s = (f"Model a standoff tube standing on z = 0 on the Z axis: outer diameter {2 * p['Ro']} mm, "
         f"wall thickness {p['w']} mm, length {p['L']} mm, open at both ends.")
    if p["collar"]:
        s += f" At its foot, a collar of diameter {2 * p['collar'][0]} mm and height {p['collar'][1]} mm (the bore goes through it)."
    if p["cross"]:
        s += f" A cross hole of diameter {num(2 * p['cross'][1])} mm along X through both walls at z = {p['cross'][0]}."
    return s


def tube_spec(p) -> dict:
    Ro, w, zm = p["Ro"], p["w"], p["L"] * 0.3 + (p["collar"][1] if p["collar"] else 0) / 2
    probes = [probe("bore", (0, 0, zm), False, True),
              probe("wall_mid", (0, Ro - w / 2, zm), True, True),
              probe("wall_not_thicker", (0, Ro - 1.4 * w, zm), False, True),
              probe("outer_not_larger", (0, Ro + 0.4 * w, zm), False, True),
              probe("length", (0, Ro - w / 2, p["L"] + 1), False)]
    if p["collar"]:
        probes.append(probe("collar", (0, (Ro + p["collar"][0]) / 2, p["collar"][1] / 2), True, True))
    if p["cross"]:
        z, r = p["cross"]
        probes += [probe("cross_hole", (Ro - w / 2, 0, z), False, True),
                   probe("cross_hole_far", (-(Ro - w / 2), 0, z), False, True),
                   probe("cross_size", (Ro - w / 2, 0, z + 0.7 * r), False)]
    return {"probes": probes, "symmetry": ["top", 0]}


# ---------------------------------------------------------------- pocketed block
def pocket_params(rng, d: int) -> dict:
    L, W, H = rng.randrange(50, 81, 5), rng.randrange(35, 56, 5), rng.randrange(15, 26, 5)
    wall, floor = rng.choice([3, 4, 5]), rng.choice([3, 4, 5])
    p = {"L": L, "W": W, "H": H, "wall": wall, "floor": floor, "rib": None, "drain": None}
    if d >= 2:
        p["drain"] = rng.choice([2, 2.5, 3])
    if d == 3:
        p["rib"] = rng.choice([3, 4])
    return p


def _pockets(p) -> list:
    """(x centre, length) of each pocket along X."""
    inner = p["L"] - 2 * p["wall"]
    if not p["rib"]:
        return [(0.0, inner)]
    each = (inner - p["rib"]) / 2
    return [(-(p["rib"] + each) / 2, each), ((p["rib"] + each) / 2, each)]


def pocket_script(p) -> str:
    depth = p["H"] - p["floor"]
    s = HEAD + f"part = Box({p['L']}, {p['W']}, {p['H']}, align={BASE})\n"
    for x, ln in _pockets(p):
        s += (f"part = part - Pos({num(x)}, 0, {p['floor']}) * Box({num(ln)}, {p['W'] - 2 * p['wall']}, "
              f"{depth + 1}, align={BASE})\n")
    if p["drain"]:
        s += _cut_z([(x, 0, p["floor"] / 2, p["drain"], 3 * p["floor"]) for x, _ in _pockets(p)])
    return s + "result = part\n"


def pocket_brief(p) -> str:
    s = (f"Model a block {p['L']} x {p['W']} x {p['H']} mm (X, Y, Z) on z = 0, centred in X and Y, "
         f"hollowed from the top by a rectangular blind pocket leaving {p['wall']} mm walls on all "
         f"four sides and a {p['floor']} mm floor.")
    if p["rib"]:
        s = s.replace("by a rectangular blind pocket", "by two rectangular blind pockets")
        s += f" A {p['rib']} mm rib at x = 0 splits the pocket in two equal halves (full height)."
    if p["drain"]:
        s += f" Each pocket has a {num(2 * p['drain'])} mm drain hole through the floor at its centre."
    return s


def pocket_spec(p) -> dict:
    H, wall, fl = p["H"], p["wall"], p["floor"]
    probes = []
    for i, (x, ln) in enumerate(_pockets(p)):
        probes.append(probe(f"pocket{i}", (x + ln / 4, 0, (fl + H) / 2), False, True))
        if p["drain"]:
            probes += hole_probes(f"drain{i}", (x, 0, fl / 2), p["drain"])
    probes += [probe("wall", (p["L"] / 2 - wall / 2, 0, H - 1), True, True),
               probe("wall_not_thicker", (p["L"] / 2 - 1.4 * wall, 0, H - 1), False, True),
               probe("floor", (p["L"] / 4, p["W"] / 4, fl / 2), True, True),
               probe("floor_not_thicker", (p["L"] / 4, p["W"] / 4, 1.3 * fl), False)]
    if p["rib"]:
        probes.append(probe("rib", (0, 0, H - 1), True, True))
    return {"probes": probes, "symmetry": ["top", 0]}


SKILLS = {
    'plate_holes': ('Modelling a drilled plate as a build123d script run on a CAD kernel '
                    '(2 holes / 4 corner holes / + a large centre hole).'),
    'flange': ('Modelling a flange with a bore and a bolt circle as a build123d '
               'script (4 bolts / 6 bolts / + a hub).'),
    'l_bracket': 'Modelling an L bracket with holes in its base and upright as a build123d script.',
    'tube': ('Modelling a tube to a wall thickness as a build123d script (+ a '
             'collar / + a cross hole).'),
    'pocket_block': ('Modelling a block with blind pockets as a build123d script (+ a drain '
                     'hole / two pockets and a rib).'),
}


for _name, _fns in {"plate_holes": (plate_params, plate_script, plate_brief, plate_spec),
                    "flange": (flange_params, flange_script, flange_brief, flange_spec),
                    "l_bracket": (bracket_params, bracket_script, bracket_brief, bracket_spec),
                    "tube": (tube_params, tube_script, tube_brief, tube_spec),
                    "pocket_block": (pocket_params, pocket_script, pocket_brief, pocket_spec)}.items():
    register_domain(CadDomain(f"geometry3d.cad_{_name}-v1", *_fns, description=SKILLS[_name]))
