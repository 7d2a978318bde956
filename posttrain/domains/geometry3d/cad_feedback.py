"""Real-tier CAD with feedback: the tool shows the current model's measurements and renders,
and the policy corrects its model over several turns.

- ``geometry3d.cad_fit_volume-v1``: a drilled plate whose thickness is not given: the
  policy must reach a stated volume (two holes, d1; four, d2; five, d3), reading the volume
  the tool measures and adjusting;
- ``geometry3d.cad_correct_flange-v1``: a flange whose bolt circle is rotated by a stated
  angle (d1: 4 holes, d2: 6, d3: 6 with a hub); the reference trajectory first builds it
  unrotated, reads the render, and corrects it;
- ``geometry3d.cad_look_flange-v1``: the same task for a vision-language policy, "look and
  correct": after each model the policy is shown the PNG renders of its top and front views
  as images (``Observation.images``) beside the measurements, instead of their text art.

:class:`FeedbackCadTool` is the ``cad`` tool plus, after a successful run, what the host
measures on the exported mesh (bodies, closedness, through-holes from the genus, volume)
and a text render of the top and front views (``#`` material), and a PNG of each view
written to ``/work/out/view_<name>.png``; with ``pictures=True`` the views go to the policy
as images instead (:class:`RenderObservingEnv`). The reference trajectories are multi-turn:
a draft, then the corrected model.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from typing import Any

from posttrain.core.types import Completion, Observation, Score, StepResult, Trajectory
from posttrain.domains._vision_kit import b64
from posttrain.domains.base import register_domain
from posttrain.tools.cad_tool import OUT_DIR, CadTool
from posttrain.tools.result import ToolResult
from posttrain.verifiers.cad import MAX_TRIANGLES
from posttrain.verifiers.cad_render import ascii_view, png_bytes, render_views, window

from . import cad_parts as parts
from .cad_kit import CadDomain, exported_model, num, probe


class FeedbackCadTool:
    """``cad`` with the host's measurements and renders of the model appended.

    ``pictures``: the views are not drawn as text; the PNGs of the last successful run wait
    in :meth:`take_views` for the env to show them as images."""

    name = "cad"

    def __init__(self, pictures: bool = False) -> None:
        self.inner = CadTool()
        self.spec = self.inner.spec
        self.pictures = pictures
        self._views: tuple[bytes, ...] = ()

    def take_views(self) -> tuple[bytes, ...]:
        """The PNG views (top, front) of the last call's model, once; () when it built none."""
        views, self._views = self._views, ()
        return views

    def __call__(self, sandbox, script: str) -> ToolResult:
        res = self.inner(sandbox, script)
        if not res.ok:
            return res
        model = exported_model(sandbox)
        if model is None or len(model.tris) > MAX_TRIANGLES:  # the verifier refuses those too
            return res
        views = render_views(model.tris, window(*model.bounds()))
        pngs = tuple(png_bytes(views[name]) for name in ("top", "front"))
        for name, png in zip(("top", "front"), pngs):
            sandbox.write_file(f"{OUT_DIR}/view_{name}.png", png)
        lines = [res.content, "host measurement of the exported mesh: "
                 f"{len(model.bodies)} bod(ies), closed {all(b.closed for b in model.bodies)}, "
                 f"through-holes {sum(b.genus for b in model.bodies)}, volume {model.volume:.1f} mm^3"]
        if self.pictures:
            self._views = pngs
            lines.append("The images show the top view (X right, Y up) and the front view "
                         "(X right, Z up), material bright.")
        else:
            lines += ["top view (X right, Y up):", ascii_view(views["top"]),
                      "front view (X right, Z up):", ascii_view(views["front"])]
        return ToolResult("\n".join(lines), True, dict(res.data))


class RenderObservingEnv:
    """The CAD episode's ToolEnv whose observation after a turn carries the PNG views of the
    model that turn built (none when it built nothing). Everything else — the tool-call
    format, ``verify`` on the live env, checkpoints, ``close`` — is the inner env's."""

    def __init__(self, inner: Any, tool: FeedbackCadTool):
        self.inner, self.tool = inner, tool

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "tool"):  # not set yet (copy/unpickle): no delegation loop
            raise AttributeError(name)
        return getattr(self.inner, name)

    def reset(self) -> Observation:
        self.tool.take_views()  # a restored episode shows only what its own turns build
        return self.inner.reset()

    def step(self, action: Completion) -> StepResult:
        res = self.inner.step(action)
        views = self.tool.take_views()
        if res.observation is None or not views:
            return res
        return replace(res, observation=replace(res.observation, images=tuple(b64(v) for v in views)))

    def verify(self, trajectory: Trajectory) -> Score:
        return self.inner.verify(trajectory)

    def close(self) -> None:
        self.inner.close()


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
                          feedback_tool=FeedbackCadTool, max_turns=6,
                          description=('Reaching a stated volume over several turns: the CAD tool reports '
                                       "each model's measured volume and the policy corrects the plate's thickness.")))
register_domain(CadDomain("geometry3d.cad_correct_flange-v1", rotated_params, rotated_script,
                          rotated_brief, rotated_spec, draft=parts.flange_script,
                          feedback_tool=FeedbackCadTool, max_turns=6,
                          description=('Correcting a rotated bolt circle over several turns from the CAD '
                                       "tool's measurements and text renders of the model.")))


def _look_brief(p) -> str:
    return rotated_brief(p) + (" After each model you build you are shown its top and front "
                               "views: look at where the bolt holes are and correct the model.")


def _look_env(inner: Any) -> RenderObservingEnv:
    return RenderObservingEnv(inner, inner.tools["cad"])


register_domain(CadDomain("geometry3d.cad_look_flange-v1", rotated_params, rotated_script,
                          _look_brief, rotated_spec, draft=parts.flange_script,
                          feedback_tool=lambda: FeedbackCadTool(pictures=True), max_turns=6,
                          vision=True, wrap_env=_look_env,
                          description=('Look and correct (vision): correcting a rotated bolt circle from the '
                                       'top and front renders the CAD tool shows as images after each model.')))
