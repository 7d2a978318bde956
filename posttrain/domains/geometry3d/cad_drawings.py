"""Real-tier CAD "match this drawing": the part is given as a dimensioned drawing in text.

- ``geometry3d.cad_drawing_stepped-v1``: a stepped plate drawn in a top and a front view,
  datum at its left-front-bottom corner: one hole in the low part (d1), two (d2), and a
  hole through the full height of the step (d3);
- ``geometry3d.cad_drawing_slot_block-v1``: a block with a through slot (d1), plus a
  through-hole (d2), whose hole is counterbored from the top (d3).

What differs from the parts: the numbers come as view callouts against a corner datum
(not the part's centre), as on a shop drawing, so the policy must convert coordinates.
"""

from __future__ import annotations

from posttrain.domains.base import register_domain

from .cad_kit import CadDomain, hole_probes, num, probe
from .cad_parts import HEAD

CORNER = "(Align.MIN, Align.MIN, Align.MIN)"
FRAME = "DRAWING (units mm; datum = left-front-bottom corner; X right, Y back, Z up)\n"


# ---------------------------------------------------------------- stepped plate
def stepped_params(rng, d: int) -> dict:
    L, W, T1, T2 = rng.randrange(70, 101, 5), rng.randrange(40, 61, 5), rng.randint(5, 8), rng.randint(6, 12)
    Ls = rng.randrange(20, 36, 5)
    r = rng.choice([2.5, 3, 3.5])
    xh = round((Ls + L) / 2, 1)
    holes = [[xh, W / 2]] if d == 1 else [[xh, W / 4], [xh, 3 * W / 4]]
    return {"L": L, "W": W, "T1": T1, "T2": T2, "Ls": Ls, "r": r, "holes": holes,
            "step_hole": [Ls / 2, W / 2, rng.choice([2, 2.5])] if d == 3 else None}


def stepped_script(p) -> str:
    T1, H = p["T1"], p["T1"] + p["T2"]
    s = (HEAD + f"part = Box({p['L']}, {p['W']}, {T1}, align={CORNER})\n"
         f"part = part + Box({p['Ls']}, {p['W']}, {H}, align={CORNER})\n")
    s += "".join(f"part = part - Pos({num(x)}, {num(y)}, {num(T1 / 2)}) * Cylinder({p['r']}, {3 * T1})\n"
                 for x, y in p["holes"])
    if p["step_hole"]:
        x, y, r = p["step_hole"]
        s += f"part = part - Pos({num(x)}, {num(y)}, {num(H / 2)}) * Cylinder({r}, {3 * H})\n"
    return s + "result = part\n"


def stepped_brief(p) -> str:
    H = p["T1"] + p["T2"]
    top = [f"  outline: X 0 .. {p['L']}, Y 0 .. {p['W']}"]
    top += [f"  hole {chr(65 + i)}: dia {num(2 * p['r'])} THRU, centre X {num(x)}, Y {num(y)}"
            for i, (x, y) in enumerate(p["holes"])]
    if p["step_hole"]:
        x, y, r = p["step_hole"]
        top.append(f"  hole S: dia {num(2 * r)} THRU ALL (step and base), centre X {num(x)}, Y {num(y)}")
    front = [f"  base: Z 0 .. {p['T1']} over X 0 .. {p['L']}",
             f"  step: Z 0 .. {H} over X 0 .. {p['Ls']} (full width in Y)"]
    return ("Model the part in this drawing as one solid.\n" + FRAME + "TOP VIEW\n" + "\n".join(top)
            + "\nFRONT VIEW (looking along +Y)\n" + "\n".join(front))


def stepped_spec(p) -> dict:
    T1, H = p["T1"], p["T1"] + p["T2"]
    probes = [q for i, (x, y) in enumerate(p["holes"]) for q in hole_probes(f"hole{i}", (x, y, T1 / 2), p["r"])]
    if p["step_hole"]:
        x, y, r = p["step_hole"]
        probes += hole_probes("step_hole", (x, y, H / 2), r)
    probes += [probe("step", (p["Ls"] - 1.5, 2, H - 1), True, True),
               probe("above_base", (p["Ls"] + 2, 2, T1 + 1), False, True),
               probe("far_end", (p["L"] - 1.5, p["W"] - 1.5, T1 / 2), True, True)]
    return {"probes": probes}


# ---------------------------------------------------------------- block with a slot
def slot_params(rng, d: int) -> dict:
    L, W, H = rng.randrange(60, 91, 5), rng.randrange(40, 61, 5), rng.randint(10, 20)
    sw, sl = rng.randint(6, 10), rng.randrange(20, 31, 5)
    p = {"L": L, "W": W, "H": H, "slot": [15, round((W - sw) / 2), sl, sw], "hole": None, "cbore": None}
    if d >= 2:
        p["hole"] = [L - 15, W / 2, rng.choice([2.5, 3, 3.5])]
    if d == 3:
        p["cbore"] = [p["hole"][2] + rng.choice([2, 2.5, 3]), rng.randint(3, H // 2)]
    return p


def slot_script(p) -> str:
    H, (x0, y0, sl, sw) = p["H"], p["slot"]
    s = (HEAD + f"part = Box({p['L']}, {p['W']}, {H}, align={CORNER})\n"
         f"part = part - Pos({x0}, {y0}, {-H}) * Box({sl}, {sw}, {3 * H}, align={CORNER})\n")
    if p["hole"]:
        x, y, r = p["hole"]
        s += f"part = part - Pos({num(x)}, {num(y)}, {num(H / 2)}) * Cylinder({r}, {3 * H})\n"
    if p["cbore"]:
        x, y, _ = p["hole"]
        R, depth = p["cbore"]
        s += f"part = part - Pos({num(x)}, {num(y)}, {H - depth}) * Cylinder({num(R)}, {2 * depth}, align=(Align.CENTER, Align.CENTER, Align.MIN))\n"
    return s + "result = part\n"


def slot_brief(p) -> str:
    x0, y0, sl, sw = p["slot"]
    top = [f"  outline: X 0 .. {p['L']}, Y 0 .. {p['W']}; thickness (Z) {p['H']}",
           f"  slot: rectangular, THRU, X {x0} .. {x0 + sl}, Y {y0} .. {y0 + sw}"]
    if p["hole"]:
        x, y, r = p["hole"]
        line = f"  hole: dia {num(2 * r)} THRU, centre X {num(x)}, Y {num(y)}"
        if p["cbore"]:
            line += f"; counterbore dia {num(2 * p['cbore'][0])}, depth {p['cbore'][1]} from the top face"
        top.append(line)
    return "Model the part in this drawing as one solid.\n" + FRAME + "TOP VIEW\n" + "\n".join(top)


def slot_spec(p) -> dict:
    H, (x0, y0, sl, sw) = p["H"], p["slot"]
    probes = [probe("slot", (x0 + sl / 2, y0 + sw / 2, H / 2), False, True),
              probe("slot_end", (x0 + sl - 1, y0 + sw / 2, H / 2), False, True),
              probe("past_slot", (x0 + sl + 1.5, y0 + sw / 2, H / 2), True, True),
              probe("thickness", (p["L"] / 2, p["W"] - 2, H + 1), False)]
    if p["hole"]:
        x, y, r = p["hole"]
        probes += hole_probes("hole", (x, y, H / 2 if not p["cbore"] else (H - p["cbore"][1]) / 2), r, rim=not p["cbore"])
    if p["cbore"]:
        R, depth = p["cbore"]
        ring = (p["hole"][2] + R) / 2
        probes += [probe("counterbore", (x + ring, y, H - depth / 2), False, True),
                   probe("counterbore_floor", (x + ring, y, (H - depth) / 2), True, True)]
    return {"probes": probes}


register_domain(CadDomain("geometry3d.cad_drawing_stepped-v1", stepped_params, stepped_script, stepped_brief, stepped_spec,
                          description=("Modelling a stepped plate from a dimensioned drawing's view callouts "
                                       'against a corner datum.')))
register_domain(CadDomain("geometry3d.cad_drawing_slot_block-v1", slot_params, slot_script, slot_brief, slot_spec,
                          description=("Modelling a slotted block from a dimensioned drawing's view callouts "
                                       '(+ a hole / a counterbored hole).')))
