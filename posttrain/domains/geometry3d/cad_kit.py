"""The kit of the real-tier CAD domains (``geometry3d.cad_*``): one record per domain.

What it is: :class:`CadDomain`, a frozen record of a domain's functions — ``params(rng, d)``
(the task's numbers), ``script(params)`` (posttrain's reference build123d script), ``brief(params)``
(what the policy is asked), ``spec(params)`` (named probe points and symmetry for the
verifier) and optionally ``given(params)`` (a starting script, for edits) and ``draft(params)``
(a flawed first attempt the reference trajectory corrects, for the feedback variant) — that
exposes the Domain protocol with ``tier = "real"`` (composition, DESIGN.md §8; no base class).

The episode: a :class:`~posttrain.envs.tool_env.ToolEnv` with the ``cad`` tool
(:class:`~posttrain.tools.cad_tool.CadTool`) over a pooled isolated sandbox whose
``/opt/ro/cad`` holds the CAD packages. The verifier reads the bodies the *last* tool run
exported (``/work/out/body_*.stl``) and scores them against the target with
:func:`posttrain.verifiers.cad.score_model`. The target is the hidden reference script,
built on the host with the same harness and exporter (:func:`target_model`, cached by
script): generation only writes the script into ``hidden`` (it must stay well under the
conformance limit of 2 s a task; an OCC import alone takes 3-7 s), and the target is built
the first time a task is verified.

Guarantees: the reference trajectory scores 1.0; the probes (empty script, a script that
writes a precomputed STL, the reference's bounding-box block, a script printing PASSED, and
for edits the unchanged starting script) score 0 by the verifier's gates.
Does not: run the policy's script outside the sandbox (only posttrain's own reference
scripts run on the host).
"""

from __future__ import annotations

import random
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import LEASE_TIMEOUT_S, ToolEnv, format_answer, format_call, shared_pool
from posttrain.tools import cad_harness
from posttrain.tools.cad_tool import CAD_LIMITS, OUT_DIR, CadTool, cad_template
from posttrain.verifiers.cad import Model, measure, score_model

HOW = ("Model it with build123d (OpenCASCADE) through the `cad` tool: "
       "<tool_call>{\"name\": \"cad\", \"arguments\": {\"script\": \"...\"}}</tool_call>. "
       "The script must assign the finished part to `result` (a list of parts for an "
       "assembly); units are mm. The last model you build is graded. Reply <answer>done</answer> "
       "when finished.")
_BUILD_LOCK = threading.Lock()


@lru_cache(maxsize=512)
def target_model(script: str) -> Model:
    """The target built from posttrain's own reference ``script`` on the host (trusted code)."""
    with _BUILD_LOCK, tempfile.TemporaryDirectory(prefix="cad-target-") as out:
        summary = cad_harness.build(script, out)
        if not summary.get("ok"):
            raise RuntimeError(f"reference script failed: {summary.get('error')}")
        return measure([p.read_bytes() for p in sorted(Path(out).glob("body_*.stl"))])


def exported_model(sb: Any) -> Model | None:
    """The bodies the last ``cad`` run exported into the sandbox (None when there are none)."""
    try:
        names = sorted(e.path for e in sb.list_files(OUT_DIR)
                       if e.kind == "file" and e.path.rsplit("/", 1)[-1].startswith("body_")
                       and e.path.endswith(".stl"))
    except Exception:  # no out/ directory: nothing was exported
        return None
    if not names:
        return None
    return measure([sb.read_file(n, max_bytes=32 << 20) for n in names[:16]])


def cad_lease() -> Any:
    """A clean pooled isolated sandbox with the CAD packages at ``/opt/ro/cad``."""
    return shared_pool().lease(template=cad_template(), limits=CAD_LIMITS, timeout=LEASE_TIMEOUT_S)


def cad_call(script: str) -> str:
    return format_call("cad", {"script": script})


def verify_with(domain_id: str) -> Callable[[ToolEnv, Any], Score]:
    def verify(env: ToolEnv, trajectory: Any) -> Score:
        got = exported_model(env.sandbox) if env.sandbox_opened else None
        want = target_model(env.task.hidden["script"])
        return score_model(got, want, env.task.hidden["spec"], domain_id)
    return verify


def block_probe(script: str) -> str:
    """A script that builds the reference, then outputs only its bounding-box block(s)."""
    return (script + "\nfrom build123d import Box, Pos, Compound\n"
            "_shapes = result if isinstance(result, list) else [result]\n"
            "def _block(s):\n    b = s.bounding_box()\n"
            "    return Pos(b.center().X, b.center().Y, b.center().Z) * Box(b.size.X, b.size.Y, b.size.Z)\n"
            "result = [_block(s) for s in _shapes]\n")


PRECOMPUTED_STL = (
    "import struct\n"
    "tri = [((0,0,0),(10,0,0),(0,10,0)), ((0,0,0),(0,10,0),(0,0,10)), ((0,0,0),(0,0,10),(10,0,0)),"
    " ((10,0,0),(0,0,10),(0,10,0))]\n"
    "data = b'\\0' * 80 + struct.pack('<I', len(tri))\n"
    "for t in tri:\n    data += struct.pack('<12fH', 0, 0, 0, *[c for v in t for c in v], 0)\n"
    "import os\nos.makedirs('/work/out', exist_ok=True)\n"
    "open('/work/out/body_0.stl', 'wb').write(data)\nopen('/work/model.stl', 'wb').write(data)\n")


@dataclass(frozen=True)
class CadDomain:
    """One real-tier CAD domain assembled from its functions (see the module docstring)."""

    id: str
    params: Callable[[random.Random, int], dict]
    script: Callable[[Mapping[str, Any]], str]
    brief: Callable[[Mapping[str, Any]], str]
    spec: Callable[[Mapping[str, Any]], dict]
    given: Callable[[Mapping[str, Any]], str] | None = None
    draft: Callable[[Mapping[str, Any]], str] | None = None
    feedback_tool: Callable[[], Any] | None = None
    max_turns: int = 4
    vision: bool = False  # its observations carry images (then wrap_env puts them there)
    description: str = ""  # one line: the skill (``domains list``, the catalogue)
    wrap_env: Callable[[ToolEnv], Any] | None = None
    family: str = "geometry3d"
    tier: str = "real"
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "sandbox"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        p = self.params(rng, difficulty)
        text = self.brief(p)
        if self.given is not None:
            text += "\nThe current model script:\n```python\n" + self.given(p) + "\n```"
        return make_task(self.id, difficulty, text + "\n" + HOW, public={"params": p},
                         hidden={"script": self.script(p), "spec": self.spec(p)},
                         metadata={"tier": "real"})

    def make_env(self, task: Task) -> ToolEnv:
        tool = self.feedback_tool() if self.feedback_tool else CadTool()
        env = ToolEnv(task, [tool], cad_lease, verify_with(self.id), max_turns=self.max_turns,
                      verifier_version=self.id)
        return self.wrap_env(env) if self.wrap_env is not None else env

    def reference_actions(self, task: Task) -> list[str]:
        first = [cad_call(self.draft(task.public["params"]))] if self.draft else []
        return first + [cad_call(task.hidden["script"]), format_answer("done")]

    def solve(self, task: Task) -> str:
        return format_answer("done")

    def probes(self, task: Task) -> dict[str, list[str]]:
        done = format_answer("done")
        out = {"empty_script": [cad_call(""), done],
               "precomputed_stl": [cad_call(PRECOMPUTED_STL), done],
               "bounding_box_block": [cad_call(block_probe(task.hidden["script"])), done],
               "prints_passed": [cad_call("print('PASSED')\nprint('All tests passed')"), done]}
        if self.given is not None:
            out["unchanged_model"] = [cad_call(self.given(task.public["params"])), done]
        return out


def probe(name: str, at: tuple[float, float, float], inside: bool, key: bool = False) -> dict:
    """A named point the verifier tests for material (``inside``) or empty space."""
    return {"name": name, "at": [round(float(c), 4) for c in at], "inside": inside, "key": key}


def hole_probes(name: str, centre: tuple[float, float, float], r: float, axis: str = "z",
                key: bool = True, rim: bool = True) -> list[dict]:
    """A through-hole of radius ``r`` along ``axis`` at ``centre``: its axis and a point at
    0.8 r are empty (the hole is there and at least that wide), a point at 1.3 r is material
    (it is no wider), unless ``rim`` is False (another feature is that close)."""
    off = (0.0, 1.0, 0.0) if axis == "x" else (1.0, 0.0, 0.0)
    at = lambda k: tuple(c + k * r * o for c, o in zip(centre, off))  # noqa: E731
    out = [probe(f"{name}_axis", centre, False, key), probe(f"{name}_size", at(0.8), False, key)]
    if rim:
        out.append(probe(f"{name}_rim", at(1.3), True))
    return out


def num(x: float) -> str:
    """A dimension as it appears in briefs and scripts (at most 2 decimals, no trailing 0)."""
    return f"{round(float(x), 2):g}"
