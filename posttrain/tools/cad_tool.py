"""The ``cad`` tool: run a build123d script in the sandbox and export the solid it builds.

What it is: :class:`CadTool` takes ``script`` (Python using build123d; the finished part goes
in ``result``, a list of parts for an assembly), writes it to ``/work/model.py`` and runs
:mod:`posttrain.tools.cad_harness` inside the sandbox with the sandbox's own
``/usr/bin/python3``: the CAD packages (build123d, cadquery-ocp/OpenCASCADE and their
dependencies) are this interpreter's site-packages, bound read-only at
``/opt/ro/cad`` through :func:`cad_template` (``Template.ro_dirs``). The harness exports
``/work/out/body_<i>.stl`` (one per solid) and ``/work/out/model.step``; the verifier reads
them from there. The observation is the kernel's measurements (solids, volume, bounding box,
faces, validity) or the script's error (traceback tail, "no solid"), plus its stdout.

Why build123d over CadQuery: both sit on the same OCP/OpenCASCADE kernel; build123d's
algebra mode (``Box(...) - Cylinder(...)``, ``Pos(x, y) * Hole``) is plain Python
expressions with explicit locations, which a policy writes and edits in small diffs, where
CadQuery's fluent workplane chains carry hidden state (the stack, the current workplane)
that makes a one-feature edit touch the whole chain; build123d also ships typed, documented
shapes and exports without VTK (the ``cadquery-ocp-novtk`` wheel; no GL in the sandbox).

Why not a warm interpreter: the sandbox's snippet server forks each snippet from a pristine
interpreter that holds capabilities; preloading a 400 MB C++ kernel into it would widen
what that privileged process runs, so each call pays a cold import of build123d (about
3-7 s here, measured in the tests; most of it is build123d's own imports: scipy, sklearn,
IPython) in a fresh confined process.

Guarantees: a failing script is an ``ok=False`` result whose content says why, never an
exception; the Python the script runs under sees no harness environment (the sandbox's
cleared environment, ``-E -s``); the exports in ``/work/out`` are only the harness's.
Does not: measure against a target (the verifier does) or keep Python state between calls.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path

from posttrain.core.errors import SandboxError
from posttrain.sandbox import Limits, Template

from . import cad_harness
from .exec_tools import _clip
from .result import ToolResult
from .schema import function_spec

SITE_IN_SANDBOX = "/opt/ro/cad"
OUT_DIR = "out"  # under /work
MODEL = "model.py"
# OCC plus build123d's imports peak near 450 MB; a boolean-heavy part adds to that
CAD_LIMITS = Limits(memory_bytes=1536 << 20, pids=64, stdout_bytes=256 << 10,
                    stderr_bytes=256 << 10, store_bytes=256 << 20)
_HARNESS_SRC = Path(cad_harness.__file__).read_text()


@lru_cache(maxsize=1)
def cad_site() -> str:
    """The site-packages directory holding build123d (found without importing it: 5 s)."""
    spec = importlib.util.find_spec("build123d")
    if spec is None or not spec.origin:
        raise SandboxError("build123d is not installed: install the 'cad' extra (make setup)")
    return str(Path(spec.origin).resolve().parent.parent)


def cad_template(files: dict | None = None) -> Template:
    """A sandbox template whose ``/opt/ro/cad`` is the CAD packages, read-only."""
    return Template.of(files or {}, ro_dirs={"cad": cad_site()}, name="cad")


def summary_text(summary: dict) -> str:
    if not summary.get("ok"):
        return f"error: {summary.get('error', 'the script failed')}"
    lo, hi = summary["bbox_min"], summary["bbox_max"]
    size = [round(b - a, 3) for a, b in zip(lo, hi)]
    return (f"model built: {summary['solids']} solid(s), volume {summary['volume']:.3f}, "
            f"bounding box min {lo} max {hi} (size {size}), {summary['faces']} B-rep faces, "
            f"kernel-valid {summary['valid']}; exported /work/{OUT_DIR}/body_*.stl and model.step")


def parse_summary(stdout: str) -> tuple[dict | None, str]:
    """The harness's summary (the last marked line) and the script's own output before it."""
    head, sep, tail = stdout.rpartition(cad_harness.MARK)
    if not sep:
        return None, stdout
    try:
        return json.loads(tail.strip().splitlines()[0]), head.rstrip("\n")
    except (ValueError, IndexError):
        return None, stdout


class CadTool:
    name = "cad"

    def __init__(self, timeout: float = 90.0, max_chars: int = 3000):
        self.timeout = timeout
        self.max_chars = max_chars
        self.spec = function_spec(
            self.name,
            "Run a build123d (OpenCASCADE) Python script that models the part; assign the "
            "finished part to `result` (a list of parts for an assembly). Units are mm. "
            "Returns the kernel's measurements or the error.",
            {"script": {"type": "string", "maxLength": 20000,
                        "description": "Python source, e.g. `from build123d import *` then "
                                       "`result = Box(40, 20, 5) - Cylinder(3, 5)`."}},
            ["script"])

    def __call__(self, sandbox, script: str) -> ToolResult:
        sandbox.write_file(MODEL, script)
        argv = ["python3", "-E", "-s", "-B", "-c", _HARNESS_SRC, SITE_IN_SANDBOX,
                f"/work/{OUT_DIR}", f"/work/{MODEL}"]
        res = sandbox.exec(argv, timeout=self.timeout, cpu_time=self.timeout)
        summary, printed = parse_summary(res.stdout)
        data = {"exec": res.to_dict(), "summary": summary}
        if summary is None:  # killed, out of memory, or the interpreter itself failed
            why = f"[{res.status}: {res.reason}] " if res.status not in ("ok", "nonzero_exit") else ""
            text = f"error: {why}the script did not finish\n{_clip(res.stderr, self.max_chars)}"
            return ToolResult(text.rstrip(), False, data)
        parts = [summary_text(summary)]
        if printed.strip():
            parts.append("stdout:\n" + _clip(printed, self.max_chars))
        if res.stderr.strip():
            parts.append("stderr:\n" + _clip(res.stderr, self.max_chars // 2))
        return ToolResult("\n".join(parts), bool(summary.get("ok")), data)
