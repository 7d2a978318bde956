"""The ``shell`` and ``python`` tools: run a command or a snippet inside the sandbox.

Guarantees: the policy sees the exit status, stdout and stderr (each clipped to
``max_chars`` with a note saying how much was cut) and why a budget stopped the command;
``data`` carries the full ExecResult as a dict. A command that fails is ``ok=False`` but is
still a normal result (the policy should see its own errors), never an exception.
Does not: keep shell state between calls (each call is a fresh process in the same sandbox;
files persist, environment variables and ``cd`` do not).
"""

from __future__ import annotations

import math

from .result import ToolResult
from .schema import function_spec


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def render(r, max_chars: int) -> ToolResult:
    parts = []
    if r.status not in ("ok", "nonzero_exit"):
        parts.append(f"[{r.status}: {r.reason}]")
    parts.append(f"exit code: {r.exit_code if r.exit_code is not None else 'none (signal %s)' % r.signal}")
    if r.stdout:
        parts.append("stdout:\n" + _clip(r.stdout, max_chars) + (" [truncated by sandbox]" if r.stdout_truncated else ""))
    if r.stderr:
        parts.append("stderr:\n" + _clip(r.stderr, max_chars) + (" [truncated by sandbox]" if r.stderr_truncated else ""))
    return ToolResult("\n".join(parts), r.status == "ok", r.to_dict())


class ShellTool:
    name = "shell"

    def __init__(self, timeout: float = 30.0, max_chars: int = 8000):
        self.timeout = timeout
        self.max_chars = max_chars
        self.spec = function_spec(
            self.name, "Run a shell command (/bin/sh -c) in the sandbox's /work directory.",
            {"command": {"type": "string", "description": "The command line to run."},
             "timeout": {"type": "number", "minimum": 0.1, "maximum": timeout,
                         "description": f"Seconds before the command is killed (max {timeout})."}},
            ["command"])

    def __call__(self, sandbox, command: str, timeout: float | None = None) -> ToolResult:
        # the schema bounds it; clamp again for callers that skip validation (NaN fails
        # every comparison, so min/max alone would let it through)
        wall = float(timeout) if isinstance(timeout, (int, float)) and math.isfinite(timeout) else self.timeout
        wall = min(max(wall, 0.1), self.timeout)
        return render(sandbox.exec(command, timeout=wall), self.max_chars)


class PythonTool:
    name = "python"

    def __init__(self, timeout: float = 30.0, max_chars: int = 8000):
        self.timeout = timeout
        self.max_chars = max_chars
        self.spec = function_spec(
            self.name, "Run a Python 3 program in the sandbox (cwd /work); print what you need to see.",
            {"code": {"type": "string", "description": "Python source to execute."}},
            ["code"])

    def __call__(self, sandbox, code: str) -> ToolResult:
        return render(sandbox.run_python(code, timeout=self.timeout), self.max_chars)
