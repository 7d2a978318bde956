"""Real-tier CAD assemblies: separate solids placed relative to each other (mates).

- ``geometry3d.cad_stacked-v1``: a drilled plate with a drilled block sitting on its top
  face, centred (d1), at a given offset (d2), or two blocks at given offsets (d3);
- ``geometry3d.cad_shaft_bushing-v1``: a bushing and a shaft through it, concentric with a
  radial clearance and protruding equally at both ends (d1), a collar at the bushing's foot
  (d2), a cross pin hole through the shaft's top end (d3).

The verifier scores each body against the target body of the same rank by volume
(``placement``: its bounding box), so a mate off by a few millimetres loses reward and a
fused single solid fails the ``bodies`` gate.
"""

from __future__ import annotations

from posttrain.domains.base import register_domain

from .cad_kit import CadDomain, hole_probes, num, probe
from .cad_parts import BASE, HEAD


# ---------------------------------------------------------------- block(s) on a plate
def stacked_params(rng, d: int) -> dict:
    L, W, T = rng.randrange(70, 101, 5), rng.randrange(50, 71, 5), rng.randint(5, 8)
    r = rng.choice([2.5, 3])
    a = L / 2 - r - 5
    n = 2 if d == 3 else 1
    size = [rng.randrange(14, 21, 2), rng.randrange(14, 21, 2), rng.randrange(10, 21, 5)]
    if d == 1:
        offs = [[0, 0]]
    elif d == 2:
        offs = [[rng.choice([-1, 1]) * rng.randint(5, 12), rng.choice([-1, 1]) * rng.randint(3, 8)]]
    else:
        dx = rng.randint(13, 18)
        offs = [[-dx, rng.randint(-6, 6)], [dx, rng.randint(-6, 6)]]
    return {"L": L, "W": W, "T": T, "r": r, "a": a, "block": size, "offsets": offs[:n],
            "bore": rng.choice([2, 2.5, 3])}


def stacked_script(p) -> str:
    T, (l, w, h) = p["T"], p["block"]
    s = (HEAD + f"plate = Box({p['L']}, {p['W']}, {T}, align={BASE})\n"
         f"for x in (-{num(p['a'])}, {num(p['a'])}):\n"
         f"    plate = plate - Pos(x, 0, {num(T / 2)}) * Cylinder({p['r']}, {3 * T})\n"
         "result = [plate]\n")
    for x, y in p["offsets"]:
        s += (f"block = Pos({x}, {y}, {T}) * Box({l}, {w}, {h}, align={BASE})\n"
              f"block = block - Pos({x}, {y}, {num(T + h / 2)}) * Cylinder({p['bore']}, {3 * h})\n"
              "result.append(block)\n")
    return s


def stacked_brief(p) -> str:
    (l, w, h), T = p["block"], p["T"]
    where = " and ".join(f"({x}, {y})" for x, y in p["offsets"])
    n = len(p["offsets"])
    return (f"Model an assembly of {n + 1} separate solids (do not fuse them; `result` is a list). "
            f"A plate {p['L']} x {p['W']} x {T} mm on z = 0, centred on the origin, with two "
            f"through-holes of diameter {num(2 * p['r'])} at (±{num(p['a'])}, 0). "
            f"{'A block' if n == 1 else 'Two blocks'} {l} x {w} x {h} mm (X, Y, Z) sit{'s' if n == 1 else ''} on the "
            f"plate's top face, centred in X/Y at {where}; each block has a vertical through-hole "
            f"of diameter {num(2 * p['bore'])} on its own centre axis.")


def stacked_spec(p) -> dict:
    T, (l, w, h) = p["T"], p["block"]
    probes = [q for i, x in enumerate((-p["a"], p["a"])) for q in hole_probes(f"plate_hole{i}", (x, 0, T / 2), p["r"])]
    for i, (x, y) in enumerate(p["offsets"]):
        probes += hole_probes(f"block{i}_bore", (x, y, T + h / 2), p["bore"], rim=False)
        probes += [probe(f"block{i}_wall", (x + l / 2 - 1.5, y, T + h / 2), True, True),
                   probe(f"block{i}_seated", (x + l / 2 - 1.5, y, T + 0.5), True, True),
                   probe(f"block{i}_top", (x + l / 2 - 1.5, y, T + h + 1), False)]
    return {"probes": probes}


# ---------------------------------------------------------------- shaft through a bushing
def bushing_params(rng, d: int) -> dict:
    Ro, Ri, Lb = rng.randint(10, 16), rng.randint(5, 8), rng.randrange(20, 41, 5)
    p = {"Ro": Ro, "Ri": Ri, "Lb": Lb, "c": rng.choice([0.5, 1.0]), "e": rng.randint(5, 12),
         "collar": None, "pin": None}
    if d >= 2:
        p["collar"] = [Ro + rng.randint(4, 8), rng.randint(3, 5)]
    if d == 3:
        p["pin"] = rng.choice([1.0, 1.5])
    return p


def bushing_script(p) -> str:
    Ro, Ri, Lb, e = p["Ro"], p["Ri"], p["Lb"], p["e"]
    rs = Ri - p["c"]
    s = HEAD + f"bushing = Cylinder({Ro}, {Lb}, align={BASE})\n"
    if p["collar"]:
        s += f"bushing = bushing + Cylinder({p['collar'][0]}, {p['collar'][1]}, align={BASE})\n"
    s += (f"bushing = bushing - Pos(0, 0, {num(Lb / 2)}) * Cylinder({Ri}, {3 * Lb})\n"
          f"shaft = Pos(0, 0, {-e}) * Cylinder({num(rs)}, {Lb + 2 * e}, align={BASE})\n")
    if p["pin"]:
        s += f"shaft = shaft - Pos(0, 0, {num(Lb + e / 2)}) * Rot(0, 90, 0) * Cylinder({p['pin']}, {4 * Ri})\n"
    return s + "result = [bushing, shaft]\n"


def bushing_brief(p) -> str:
    s = (f"Model two separate solids (`result` = [bushing, shaft]). The bushing stands on z = 0 "
         f"on the Z axis: outer diameter {2 * p['Ro']}, bore diameter {2 * p['Ri']}, length {p['Lb']} mm. "
         f"A solid shaft passes through it on the same axis with {p['c']} mm radial clearance and "
         f"protrudes {p['e']} mm beyond each end of the bushing.")
    if p["collar"]:
        s += f" The bushing has a collar at its foot: diameter {2 * p['collar'][0]}, height {p['collar'][1]} mm."
    if p["pin"]:
        s += (f" A pin hole of diameter {num(2 * p['pin'])} goes through the shaft along X, "
              f"{num(p['e'] / 2)} mm above the bushing's top.")
    return s


def bushing_spec(p) -> dict:
    Ri, Lb, e = p["Ri"], p["Lb"], p["e"]
    rs = Ri - p["c"]
    probes = [probe("clearance", (0, Ri - p["c"] / 2, Lb / 2), False, True),
              probe("shaft_core", (0, rs * 0.7, Lb / 2), True, True),
              probe("shaft_bottom", (0, rs * 0.7, -e / 2), True, True),
              probe("shaft_end", (0, rs * 0.7, -e - 1), False),
              probe("bushing_wall", (0, (p["Ro"] + Ri) / 2, Lb / 2), True, True)]
    if p["pin"]:
        probes += [probe("pin_hole", (rs * 0.5, 0, Lb + e / 2), False, True),
                   probe("pin_size", (rs * 0.5, 0, Lb + e / 2 + 1.5 * p["pin"]), True)]
    return {"probes": probes, "symmetry": ["top", 0]}


register_domain(CadDomain("geometry3d.cad_stacked-v1", stacked_params, stacked_script, stacked_brief, stacked_spec,
                          description=('Assembling a block on a plate with a stated mate (centred / offset / '
                                       'two blocks) as a build123d script.')))
register_domain(CadDomain("geometry3d.cad_shaft_bushing-v1", bushing_params, bushing_script, bushing_brief, bushing_spec,
                          description=('Assembling a shaft in a bushing with clearance, concentric (+ a '
                                       'collar / + a pin hole), as a build123d script.')))
