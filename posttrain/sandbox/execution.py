"""Running one command or snippet in an isolated sandbox, from the host's side.

What it is: :func:`run` shapes the request (an argv or a Python snippet, the environment,
the working directory, rlimits), hands it with fresh stdio pipes straight to the process
that waits for it inside the sandbox (a pre-forked command, or the snippet server's next
child), then pumps stdin, stdout and stderr under the budgets (``pump.py``) until the
in-sandbox reaper's status report arrives, and maps all of it to an :class:`ExecResult`.
What it waits for is that report and EOF on stdout and stderr (or ``drain_s`` after the
report), never for a process's exit itself: a snippet's process closes its fds before it
leaves its note (``pychild.py``), so its teardown is on nobody's path.

Guarantees: every pipe end is closed on every path; a request that cannot be handed over
returns ``sandbox_error`` and closes the sandbox (its supervisor is unusable); the report is
written only once nothing the command started can run again: a command's processes are all
reaped (``command.py``); a snippet's are all killed, and all reaped but possibly its own,
which was stopped, killed and alone (``pyserver.py``), so the result describes a finished
command; an OOM kill in the sandbox's cgroup during the command is seen (``memory_limit``).

Does not: check the sandbox's lifetime or serialise commands (``IsolatedSandbox`` does), or
enforce a budget itself (``pump.py`` does, through :meth:`SupervisorChannel.signal_tree`).
"""

from __future__ import annotations

import json
import os

from posttrain.core.errors import SandboxError

from . import native, safefs, wire
from .channel import SupervisorChannel
from .execspec import build_env, finish_result
from .policy import Limits
from .pump import Budgets, pump
from .result import ExecResult

PROXY_ENV = {k: "http://127.0.0.1:3128"
             for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}


def run(ch: SupervisorChannel, cgroup, limits: Limits, proxied: bool, what: dict, stdin,
        env: dict | None, cwd: str | None, budgets: Budgets) -> ExecResult:
    """Run ``what`` (``{"argv": [...]}`` or ``{"python": code}``) and wait for it."""
    snippet = "python" in what
    req = {**what, "env": build_env({**PROXY_ENV, **(env or {})} if proxied else env),
           "cwd": _sandbox_cwd(cwd), "rlimits": _rlimits(limits, budgets),
           "stdin": stdin is not None}
    try:
        if snippet:
            target, sock, done_fd = ch.pyserver_target()
        else:
            target, sock, done_fd, kind = ch.take_zygote()
            if kind == "native":
                req = native.encode_request(req["argv"], req["env"], req["cwd"],
                                            req["rlimits"], req["stdin"])
    except (SandboxError, OSError) as exc:
        ch.dead()
        return ExecResult("sandbox_error", reason=f"no command process: {exc}")
    oom0 = cgroup.oom_kills() if cgroup else 0
    try:
        pipes = _hand_over(sock, req, stdin is not None)
    except OSError as exc:
        ch.after_command(sock, done_fd, snippet)
        return ExecResult("sandbox_error", reason=f"command process is gone: {exc}")
    out_r, err_r, in_w = pipes
    chunks: list[bytes] = []

    def on_done() -> bool:  # one atomic JSON write, or EOF when the reaper was killed
        try:
            data = os.read(done_fd, 65536)
        except ConnectionResetError:  # a snippet server killed with our request unread
            data = b""
        chunks.append(data)
        return not data or data.rstrip().endswith(b"}")

    try:
        outcome = pump(out_fd=out_r, err_fd=err_r, caps=(limits.stdout_bytes, limits.stderr_bytes),
                       stdin=stdin.encode() if isinstance(stdin, str) else stdin, stdin_fd=in_w,
                       done_fd=done_fd, on_done=on_done, budgets=budgets,
                       cpu_probe=cgroup.cpu_s if cgroup else (lambda: None),
                       signal_tree=lambda hard: ch.signal_tree(
                           target, hard, cgroup.kill_all if cgroup else None))
    finally:
        os.close(out_r)
        os.close(err_r)
        ch.after_command(sock, done_fd, snippet)
    raw = b"".join(chunks)
    report = json.loads(raw) if raw else {"killed": True}
    oom = (cgroup.oom_kills() if cgroup else 0) > oom0
    return finish_result(report, outcome, oom, budgets)


def _hand_over(sock, req, with_stdin: bool) -> tuple:
    """Send the request with the command's ends of fresh stdio pipes; ours (read, read, write)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    theirs, in_w = [out_w, err_w], None
    if with_stdin:
        in_r, in_w = os.pipe()
        theirs.append(in_r)
    try:
        if isinstance(req, bytes):
            native.send_request(sock, req, theirs)
        else:
            wire.send(sock, req, theirs)
    except OSError:
        for fd in [out_r, err_r] + ([in_w] if in_w is not None else []):
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return out_r, err_r, in_w


def _sandbox_cwd(cwd: str | None) -> str:
    """Relative working directories are relative to /work; '..' is refused."""
    if not cwd:
        return "/work"
    if cwd.startswith("/"):
        if ".." in cwd.split("/"):
            raise SandboxError(f"'..' is not allowed in cwd {cwd!r}")
        return cwd
    return "/work/" + "/".join(safefs.split(cwd))


def _rlimits(lim: Limits, budgets: Budgets) -> dict:
    cpu = int(budgets.cpu_s) + 1 if budgets.cpu_s else None
    out = {"FSIZE": lim.file_size_bytes, "NOFILE": lim.open_files, "CORE": 0}
    if cpu is not None:
        out["CPU"] = cpu  # per process backstop; the cgroup budget covers the whole tree
    return out
