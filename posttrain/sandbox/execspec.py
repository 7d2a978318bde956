"""What every backend shares about a command: argv and environment shaping, result mapping.

What it is: :func:`normalize_cmd` (a string runs under ``/bin/sh -c``; a list is an argv),
:func:`build_env` (a fixed, minimal environment plus the caller's variables: nothing from the
harness's own environment is inherited), and :func:`finish_result`, which maps what the pump
and the reaper observed to one :class:`ExecResult` status.

Guarantees: the first budget that fired decides the status; without one, an OOM kill in the
sandbox's cgroup is ``memory_limit``, ``SIGXCPU`` is ``cpu_limit``, exit 0 is ``ok`` and
anything else ``nonzero_exit``; a sandbox failure is ``sandbox_error`` with the reason.

Does not: run anything.
"""

from __future__ import annotations

import signal

from posttrain.core.errors import SandboxError

from .pump import Budgets, PumpOutcome
from .result import ExecResult

BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/home/user",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "USER": "root",
    "TERM": "dumb",
}

_STAGES = {
    "timeout": ("timeout", "wall-clock budget of {wall}s exceeded"),
    "idle": ("timeout", "no output for {idle}s (idle budget)"),
    "cpu_limit": ("cpu_limit", "CPU budget of {cpu}s exceeded"),
    "output_limit": ("output_limit", "output cap exceeded"),
    "lifetime": ("killed", "sandbox lifetime is over"),
}


def normalize_cmd(cmd) -> list[str]:
    if isinstance(cmd, str):
        return ["/bin/sh", "-c", cmd]
    argv = [str(a) for a in cmd]
    if not argv:
        raise SandboxError("empty command")
    if any("\x00" in a for a in argv):
        raise SandboxError("NUL byte in command")
    return argv


def build_env(env: dict | None, base: dict | None = None) -> dict:
    out = dict(base or BASE_ENV)
    for key, value in (env or {}).items():
        if not isinstance(key, str) or "=" in key or "\x00" in key or "\x00" in str(value):
            raise SandboxError(f"invalid environment variable {key!r}")
        out[key] = str(value)
    return out


def finish_result(report: dict, outcome: PumpOutcome, oom: bool, budgets: Budgets) -> ExecResult:
    exit_code, sig = report.get("exit_code"), report.get("signal")
    if report.get("killed"):
        sig = signal.SIGKILL
    common = dict(
        exit_code=exit_code, signal=sig,
        stdout_bytes=outcome.stdout.value(), stderr_bytes=outcome.stderr.value(),
        stdout_truncated=outcome.stdout.truncated, stderr_truncated=outcome.stderr.truncated,
        wall_s=round(outcome.wall_s, 6),
        cpu_s=round(outcome.cpu_s if outcome.cpu_s is not None else report.get("cpu_s", 0.0), 6),
        peak_memory_bytes=int(report.get("maxrss_kb", 0)) * 1024,
    )
    if report.get("error") or report.get("op") == "error":
        return ExecResult("sandbox_error", reason=str(report.get("error") or report.get("message")),
                          **common)
    if outcome.stage is not None:
        status, why = _STAGES[outcome.stage]
        return ExecResult(status, reason=why.format(wall=budgets.wall_s, idle=budgets.idle_s,
                                                    cpu=budgets.cpu_s), **common)
    if oom:
        return ExecResult("memory_limit", reason="memory quota exceeded (OOM kill)", **common)
    over_cpu = budgets.cpu_s is not None and common["cpu_s"] >= budgets.cpu_s
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and over_cpu):
        return ExecResult("cpu_limit", reason="per-process CPU rlimit exceeded", **common)
    if exit_code == 0:
        return ExecResult("ok", **common)
    return ExecResult("nonzero_exit", reason=f"killed by signal {sig}" if sig else "", **common)
