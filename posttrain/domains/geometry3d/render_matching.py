"""Render matching, "look and correct": adjust a part's parameters until its silhouettes match.

Three visual multi-turn domains (``vision = True``, env kind ``tool``, light tier):

- ``geometry3d.match_plate-v1`` — a plate with a through hole (top and front views);
- ``geometry3d.match_bracket-v1`` — an L bracket, its profile extruded along y (front, top);
- ``geometry3d.match_turned-v1`` — a turned part, a stack of cylinders on the z axis (side, top).

Episode: the first observation is a picture of every view with the *target* part as a red
outline and the *current* part filled blue, plus the current parameter values in the text.
The policy calls ``set_params`` (any subset, whole millimetres within the stated ranges; a
combination that does not make a valid part is refused with the reason); every call returns
a *new* picture. A turn without a tool call ends the episode (``<answer>done</answer>``).
Levels: 1 = two parameters, 2 = four, 3 = six; the target's values are never in the text.

Score (on the final parameters): ``match × iou`` where ``match`` is the share of parameters
within ``TOL_MM`` of the target and ``iou`` the mean silhouette IoU over the views. Every
start value is at least ``START_GAP_MM`` off, so submitting at once scores 0.
Probes: submit at once, move away from the target, every parameter at its maximum, an
out-of-range call, a burst of guesses that ends where it started.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains._vision_kit import LookDomain
from posttrain.domains.base import register_domain
from posttrain.domains.geometry3d._silhouettes import draw_match, view_iou
from posttrain.domains.tools._api import FunctionTool
from posttrain.envs.tool_env import format_answer, format_call

TOL_MM = 2
START_GAP_MM = 6
SUBMIT = format_answer("done")

Params = Mapping[str, int]


@dataclass(frozen=True)
class Part:
    """A parametric part: its parameters per level, the others' fixed values, its views."""

    name: str
    ranges: Mapping[str, tuple[int, int]]  # every parameter's (lo, hi) in mm
    levels: Mapping[int, tuple[str, ...]]  # the parameters a level lets the policy change
    fixed: Params  # values of the parameters a level does not vary
    views: Callable[[Params], dict[str, list[tuple]]]
    axes: Mapping[str, str]
    valid: Callable[[Params], str | None]  # None, or why the part is not buildable


def _plate_valid(p: Params) -> str | None:
    r = p["hole_d"] / 2
    if not (r + 3 <= p["hole_x"] <= p["width"] - r - 3 and r + 3 <= p["hole_y"] <= p["depth"] - r - 3):
        return "the hole must lie inside the plate with 3 mm of material around it"
    return None


PLATE = Part(
    "plate", {"width": (30, 95), "depth": (30, 95), "thickness": (5, 40), "hole_d": (6, 30),
              "hole_x": (10, 80), "hole_y": (10, 80)},
    {1: ("width", "depth"), 2: ("width", "depth", "thickness", "hole_d"),
     3: ("width", "depth", "thickness", "hole_d", "hole_x", "hole_y")},
    {"width": 60, "depth": 50, "thickness": 12, "hole_d": 12, "hole_x": 25, "hole_y": 20},
    lambda p: {"top": [("rect", 1, 0, 0, p["width"], p["depth"]),
                       ("circle", -1, p["hole_x"], p["hole_y"], p["hole_d"] / 2)],
               "front": [("rect", 1, 0, 0, p["width"], p["thickness"])]},
    {"top": "x-y", "front": "x-z"}, _plate_valid)


def _bracket_valid(p: Params) -> str | None:
    if p["web"] + 5 > p["base"] or p["flange"] + 5 > p["height"]:
        return "each leg must be at least 5 mm longer than the other leg's thickness"
    return None


BRACKET = Part(
    "bracket", {"base": (30, 95), "height": (30, 95), "flange": (4, 25), "web": (4, 25),
                "depth": (20, 90), "slot": (0, 20)},
    {1: ("base", "height"), 2: ("base", "height", "flange", "web"),
     3: ("base", "height", "flange", "web", "depth", "slot")},
    {"base": 60, "height": 50, "flange": 10, "web": 10, "depth": 40, "slot": 0},
    lambda p: {"front": [("rect", 1, 0, 0, p["base"], p["flange"]),
                         ("rect", 1, 0, 0, p["web"], p["height"])],
               "top": [("rect", 1, 0, 0, p["base"], p["depth"]),
                       ("rect", -1, p["base"] - p["slot"], p["depth"] * 0.35,
                        p["base"] + 1, p["depth"] * 0.65)]},
    {"front": "x-z", "top": "x-y"}, _bracket_valid)


def _turned_valid(p: Params) -> str | None:
    if p["h1"] + p["h2"] + p["h3"] > 95:
        return "the total height must stay within 95 mm"
    return None


TURNED = Part(
    "turned", {"d1": (20, 90), "h1": (5, 40), "d2": (10, 90), "h2": (5, 40), "d3": (6, 90),
               "h3": (5, 40)},
    {1: ("d1", "d2"), 2: ("d1", "h1", "d2", "h2"), 3: ("d1", "h1", "d2", "h2", "d3", "h3")},
    {"d1": 60, "h1": 15, "d2": 30, "h2": 25, "d3": 20, "h3": 0},
    lambda p: {"side": [("rect", 1, 50 - p["d1"] / 2, 0, 50 + p["d1"] / 2, p["h1"]),
                        ("rect", 1, 50 - p["d2"] / 2, p["h1"], 50 + p["d2"] / 2, p["h1"] + p["h2"]),
                        ("rect", 1, 50 - p["d3"] / 2, p["h1"] + p["h2"], 50 + p["d3"] / 2,
                         p["h1"] + p["h2"] + p["h3"])],
               "top": [("circle", 1, 50, 50, max(p["d1"], p["d2"], p["d3"] if p["h3"] else 0) / 2)]},
    {"side": "x-z", "top": "x-y"}, _turned_valid)


def _full(part: Part, level: int, chosen: Params) -> dict[str, int]:
    out = dict(part.fixed)
    if level < 3 and part is TURNED:
        out["h3"] = 0  # levels 1-2 turn two cylinders only
    out.update(chosen)
    return out


def _sample(part: Part, level: int, rng: random.Random, away: Params | None = None) -> dict[str, int]:
    names = part.levels[level]
    for _ in range(1000):
        chosen = {}
        for n in names:
            lo, hi = part.ranges[n]
            chosen[n] = rng.randint(lo, hi - 3)  # never at the maximum: a probe sets that
            if away is not None and abs(chosen[n] - away[n]) < START_GAP_MM:
                break
        else:
            full = _full(part, level, chosen)
            if part.valid(full) is None:
                return full
    raise RuntimeError(f"no valid {part.name} found for level {level}")


def _build(part: Part, domain_id: str) -> Callable[[random.Random, int], Task]:
    def build(rng: random.Random, level: int) -> Task:
        target = _sample(part, level, rng)
        start = _sample(part, level, rng, away=target)
        names = part.levels[level]
        ranges = ", ".join(f"{n} {part.ranges[n][0]}-{part.ranges[n][1]}" for n in names)
        current = ", ".join(f"{n}={start[n]}" for n in names)
        fixed = ", ".join(f"{n}={v}" for n, v in start.items() if n not in names) or "none"
        text = (f"Look and correct: the picture shows the views of a {part.name} part: the target "
                f"as a red outline, the current part filled blue. Change the parameters with "
                f"set_params (whole millimetres; ranges: {ranges}) until the current part matches "
                f"the target; each call shows a new picture. Current values: {current}. Fixed: "
                f"{fixed}. When it matches, reply {SUBMIT} without a tool call.")
        return make_task(domain_id, level, text, public={"start": start, "names": list(names)},
                         hidden={"target": target})
    return build


def _tools(part: Part) -> Callable[[dict[str, Any]], list[FunctionTool]]:
    def tools(state: dict[str, Any]) -> list[FunctionTool]:
        names = state["names"]

        def set_params(st: dict[str, Any], **kw: int) -> dict[str, int]:
            new = {**st["params"], **{k: int(v) for k, v in kw.items()}}
            why = part.valid(new)
            if why is not None:
                raise ValueError(f"{why}; parameters unchanged")
            st["params"] = new
            return {n: new[n] for n in names}

        props = {n: {"type": "integer", "minimum": part.ranges[n][0], "maximum": part.ranges[n][1]}
                 for n in names}
        return [FunctionTool("set_params", f"Set some of the {part.name}'s parameters (mm); "
                             "returns the current values and a new picture.", props, set_params,
                             state, required=[])]
    return tools


def _judge(part: Part) -> Callable[[Task, dict[str, Any], str | None], Score]:
    def judge(task: Task, state: dict[str, Any], answer: str | None) -> Score:
        got, want = state["params"], task.hidden["target"]
        names = task.public["names"]
        match = sum(abs(got[n] - want[n]) <= TOL_MM for n in names) / len(names)
        fit = view_iou(part.views(got), part.views(want))
        return Score(match * fit, components={"params_within_tol": (match, 1.0),
                                              "silhouette_iou": (fit, 1.0)},
                     reason=f"{match:.0%} of parameters within {TOL_MM} mm, IoU {fit:.3f}",
                     verifier_version=task.domain)
    return judge


def _call(values: Params) -> str:
    return format_call("set_params", dict(values))


def _probes(part: Part) -> Callable[[Task], dict[str, list[str]]]:
    def probes(task: Task) -> dict[str, list[str]]:
        names, start, target = task.public["names"], task.public["start"], task.hidden["target"]
        lo = {n: part.ranges[n][0] for n in names}
        hi = {n: part.ranges[n][1] for n in names}
        away = {n: min(hi[n], max(lo[n], 2 * start[n] - target[n])) for n in names}
        return {
            "submit_at_once": [SUBMIT],
            "move_away": [_call(away), SUBMIT],
            "all_at_maximum": [_call(hi), SUBMIT],
            "out_of_range": [_call({n: hi[n] + 50 for n in names}), SUBMIT],
            "guess_then_undo": [_call(lo), _call(hi), _call({n: start[n] for n in names}), SUBMIT],
        }
    return probes


def _start(task: Task) -> dict[str, Any]:
    return {"params": dict(task.public["start"]), "names": list(task.public["names"])}


def _draw(part: Part) -> Callable[[Task, dict[str, Any]], list[bytes]]:
    def draw(task: Task, state: dict[str, Any]) -> list[bytes]:
        return [draw_match(part.views(state["params"]), part.views(task.hidden["target"]), part.axes)]
    return draw


def _reference(task: Task) -> list[str]:
    target = task.hidden["target"]
    return [_call({n: target[n] for n in task.public["names"]}), SUBMIT]


for _part, _what in ((PLATE, "a plate with a hole"), (BRACKET, "an L bracket"),
                     (TURNED, "a turned part")):
    _id = f"geometry3d.match_{_part.name}-v1"
    register_domain(LookDomain(
        _id, "geometry3d", _build(_part, _id), _start, _tools(_part), _draw(_part), _judge(_part),
        _reference, _probes(_part), max_turns=8,
        description=f"Render matching (visual, look and correct): fit {_what} to its target "
                    f"silhouettes, a new render after every change.",
        extra={"part": json.dumps(_part.name)}))
