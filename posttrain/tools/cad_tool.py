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

What it does about that cost: a successful run's exports and summary are kept in a
process-wide LRU keyed by the script's SHA-256 (:data:`RESULTS`, 256 entries, exports up to
8 MiB each); the same script again (the G samples of a group that agree, a conformance
replay) gets them written into its ``/work/out`` without a sandbox run (``data["cached"]``).
Sound for grading: every cached model is one that exactly this script built in a real
sandbox run; what a script reads from its own earlier turns (``/work``, ``/tmp``) may differ
between episodes, so ``cache=False`` turns it off where a script's side effects matter.

Guarantees: a failing script is an ``ok=False`` result whose content says why, never an
exception; the Python the script runs under sees no harness environment (the sandbox's
cleared environment, ``-E -s``); the exports in ``/work/out`` are only the harness's.
Does not: measure against a target (the verifier does) or keep Python state between calls.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path

from posttrain.core.errors import SandboxError
from posttrain.sandbox import Limits, Template

from . import cad_harness
from .cad_packages import cad_site
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


class _Results:
    """Successful runs by script digest: (summary, printed text, {export name: bytes})."""

    def __init__(self, size: int = 256, max_bytes: int = 8 << 20):
        self.size, self.max_bytes = size, max_bytes
        self._d: OrderedDict[str, tuple] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str):
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
            return None

    def put(self, key: str, value: tuple) -> None:
        if sum(len(b) for b in value[2].values()) > self.max_bytes:
            return
        with self._lock:
            self._d[key] = value
            while len(self._d) > self.size:
                self._d.popitem(last=False)


RESULTS = _Results()


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

    def __init__(self, timeout: float = 90.0, max_chars: int = 3000, cache: bool = True):
        self.timeout = timeout
        self.max_chars = max_chars
        self.cache = cache
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
        key = hashlib.sha256(script.encode()).hexdigest()
        hit = RESULTS.get(key) if self.cache else None
        if hit is not None:
            return self._replay(sandbox, *hit)
        argv = ["python3", "-E", "-s", "-B", "-c", _HARNESS_SRC, SITE_IN_SANDBOX,
                f"/work/{OUT_DIR}", f"/work/{MODEL}"]
        res = sandbox.exec(argv, timeout=self.timeout, cpu_time=self.timeout)
        summary, printed = parse_summary(res.stdout)
        data = {"exec": res.to_dict(), "summary": summary, "cached": False}
        if self.cache and summary is not None and summary.get("ok"):
            names = [e.path for e in sandbox.list_files(OUT_DIR) if e.kind == "file"]
            RESULTS.put(key, (summary, printed, {n: sandbox.read_file(n) for n in names}))
        if summary is None:  # killed, out of memory, or the interpreter itself failed
            why = f"[{res.status}: {res.reason}] " if res.status not in ("ok", "nonzero_exit") else ""
            text = f"error: {why}the script did not finish\n{_clip(res.stderr, self.max_chars)}"
            return ToolResult(text.rstrip(), False, data)
        return ToolResult(self._text(summary, printed, res.stderr), bool(summary.get("ok")), data)

    def _text(self, summary: dict, printed: str, stderr: str) -> str:
        parts = [summary_text(summary)]
        if printed.strip():
            parts.append("stdout:\n" + _clip(printed, self.max_chars))
        if stderr.strip():
            parts.append("stderr:\n" + _clip(stderr, self.max_chars // 2))
        return "\n".join(parts)

    def _replay(self, sandbox, summary: dict, printed: str, files: dict) -> ToolResult:
        """A cached run: its exports replace ``/work/out`` as the harness would have left it."""
        res = sandbox.exec(["sh", "-c", f"mkdir -p /work/{OUT_DIR} && find /work/{OUT_DIR} "
                            "-mindepth 1 -maxdepth 1 ! -type d -delete"], timeout=10)
        if res.exit_code != 0:
            raise SandboxError(f"cannot reset /work/{OUT_DIR}: {res.stderr[:200]}")
        for name, data in files.items():
            sandbox.write_file(name, data)
        return ToolResult(self._text(summary, printed, ""), True,
                          {"exec": None, "summary": summary, "cached": True})
