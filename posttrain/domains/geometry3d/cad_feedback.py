"""Real-tier CAD with feedback: the tool shows the current model's measurements and renders,
and the policy corrects its model over several turns.

- ``geometry3d.cad_fit_volume-v1``: a drilled plate whose thickness is not given: the
  policy must reach a stated volume (two holes, d1; four, d2; five, d3), reading the volume
  the tool measures and adjusting;
- ``geometry3d.cad_correct_flange-v1``: a flange whose bolt circle is rotated by a stated
  angle (d1: 4 holes, d2: 6, d3: 6 with a hub); the reference trajectory first builds it
  unrotated, reads the render, and corrects it.

:class:`FeedbackCadTool` is the ``cad`` tool plus, after a successful run, what the host
measures on the exported mesh (bodies, closedness, through-holes from the genus, volume)
and a text render of the top and front views (``#`` material), and a PNG of each view
written to ``/work/out/view_<name>.png`` (the image observation comes with issue 16).
The reference trajectories are multi-turn: a draft, then the corrected model.
"""

from __future__ import annotations

import copy
import math

from posttrain.domains.base import register_domain
from posttrain.tools.cad_tool import OUT_DIR, CadTool
from posttrain.tools.result import ToolResult
from posttrain.verifiers.cad import MAX_TRIANGLES
from posttrain.verifiers.cad_render import ascii_view, png_bytes, render_views, window

from . import cad_parts as parts
from .cad_kit import CadDomain, exported_model, num, probe


class FeedbackCadTool:
    """``cad`` with the host's measurements and renders of the model appended."""

    name = "cad"

    def __init__(self) -> None:
        self.inner = CadTool()
        self.spec = self.inner.spec

    def __call__(self, sandbox, script: str) -> ToolResult:
        res = self.inner(sandbox, script)
        if not res.ok:
            return res
        model = exported_model(sandbox)
        if model is None or len(model.tris) > MAX_TRIANGLES:  # the verifier refuses those too
            return res
        views = render_views(model.tris, window(*model.bounds()))
        for name in ("top", "front"):
            sandbox.write_file(f"{OUT_DIR}/view_{name}.png", png_bytes(views[name]))
        lines = [res.content, "host measurement of the exported mesh: "
                 f"{len(model.bodies)} bod(ies), closed {all(b.closed for b in model.bodies)}, "
                 f"through-holes {sum(b.genus for b in model.bodies)}, volume {model.volume:.1f} mm^3",
                 "top view (X right, Y up):", ascii_view(views["top"]),
                 "front view (X right, Z up):", ascii_view(views["front"])]
        return ToolResult("\n".join(lines), True, dict(res.data))


# ---------------------------------------------------------------- plate to a volume
def volume_params(rng, d: int) -> dict:
    p = parts.plate_params(rng, d)
    T = p["T"] + rng.choice([0.25, 0.5, 0.75])
    area = p["L"] * p["W"] - sum(math.pi * r * r for _, _, r in p["holes"])
    p["V"] = round(area * T)
    del p["T"]  # public: the thickness is what the policy must find
    return p


def _with_thickness(p, T: float) -> dict:
    q = copy.deepcopy(p)
    q["T"] = T
    return q


def _solved(p) -> dict:
    area = p["L"] * p["W"] - sum(math.pi * r * r for _, _, r in p["holes"])
    return _with_thickness(p, round(p["V"] / area, 4))


def volume_brief(p) -> str:
    holes = "; ".join(f"diameter {num(2 * r)} at ({num(x)}, {num(y)})" for x, y, r in p["holes"])
    return (f"Model a flat plate {p['L']} x {p['W']} mm (X by Y) lying on z = 0, centred on the "
            f"origin in X and Y, with through-holes along Z: {holes}. Its thickness is not given: "
            f"choose it so that the part's volume is {p['V']} mm^3 (within 0.5 %). The tool reports "
            "the volume of each model you build; correct the thickness until it matches.")


# ---------------------------------------------------------------- rotated bolt circle
def rotated_params(rng, d: int) -> dict:
    p = parts.flange_params(rng, d)
    p["phase"] = rng.choice([15, 20, 30, 40]) if p["n"] == 4 else rng.choice([10, 15, 20])
    return p


def rotated_script(p) -> str:
    s = parts.flange_script(p)
    return s.replace(f"a = 2 * 3.141592653589793 * i / {p['n']}",
                     f"a = 2 * 3.141592653589793 * i / {p['n']} + {math.radians(p['phase'])!r}")


def rotated_brief(p) -> str:
    return parts.flange_brief(p).replace(
        "the first on the +X axis", f"the first at {p['phase']} degrees from +X towards +Y")


def rotated_spec(p) -> dict:
    spec = parts.flange_spec({**p, "n": 0})  # the bolt probes are rotated: added below
    T = p["T"]
    for i in range(p["n"]):
        a = 2 * math.pi * i / p["n"] + math.radians(p["phase"])
        c, s = math.cos(a), math.sin(a)
        spec["probes"] += [probe(f"bolt{i}_axis", (p["R"] * c, p["R"] * s, T / 2), False, True),
                           probe(f"bolt{i}_size", ((p["R"] - 0.8 * p["h"]) * c, (p["R"] - 0.8 * p["h"]) * s, T / 2), False, True)]
    spec.pop("symmetry", None)
    return spec


register_domain(CadDomain("geometry3d.cad_fit_volume-v1", volume_params,
                          lambda p: parts.plate_script(_solved(p)), volume_brief,
                          lambda p: parts.plate_spec(_solved(p)),
                          draft=lambda p: parts.plate_script(_with_thickness(p, round(p["V"] / (p["L"] * p["W"]), 2))),
                          feedback_tool=FeedbackCadTool, max_turns=6))
register_domain(CadDomain("geometry3d.cad_correct_flange-v1", rotated_params, rotated_script,
                          rotated_brief, rotated_spec, draft=parts.flange_script,
                          feedback_tool=FeedbackCadTool, max_turns=6))
