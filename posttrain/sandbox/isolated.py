"""The isolated backend: a bubblewrap'd supervisor per sandbox, cgroup quotas, seccomp.

What it is: :class:`IsolatedSandbox` starts one supervisor inside new user/pid/net/mount/ipc/
uts namespaces, places it in its own cgroups before it runs any code, and then runs each
command in a process the supervisor pre-forked, so a warm command pays no namespace set-up.
The supervisor is the native front ``ptinit`` (``native.py``) while only commands are run,
and becomes the Python supervisor (``supervisor.py``, same process) the first time files,
snapshots, snippets or the network forwarder are needed; without a C compiler the Python
supervisor serves from the start. Output, stdin and every budget are handled on the host
(``pump.py``); Python snippets go to a pre-started, confined interpreter.

This module is the sandbox's life cycle and its public face. The parts it is made of:
``launch.py`` (bubblewrap, cgroups), ``channel.py`` (requests to the supervisor and the
processes it hands over), ``execution.py`` (one command or snippet, host side) and
``worktree.py`` (files, snapshots, diffs).

Guarantees (see the package docstring for the threat model):
- the command runs as root *of a user namespace* mapped to an unprivileged host uid, with
  no capabilities, ``no_new_privs``, the seccomp filter, rlimits, and a pid namespace of its
  own: when it exits, everything it started is killed;
- memory, process count and CPU bandwidth are cgroup quotas when the host allows them; each
  missing controller is listed in ``degraded`` with the reason;
- the kill ladder is TERM to the command's whole tree, then KILL after the grace; if the
  supervisor itself stops answering, the whole cgroup is killed and the sandbox is closed
  (status ``sandbox_error``);
- ``close()`` leaves no process, cgroup, mount or file behind (it raises if it cannot).

Does not: protect against kernel exploits, or share one sandbox between concurrent
commands (calls are serialised by a lock).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

from posttrain.core.errors import SandboxError

from . import cgroups, execution, native, seccomp
from .asyncio_twins import AsyncTwins
from .channel import SupervisorChannel
from .control import Control
from .execspec import normalize_cmd
from .launch import launch
from .policy import Limits, NetworkPolicy, Timeouts
from .pump import Budgets
from .result import ExecResult, FileChange, FileInfo, SnapshotId
from .template import Template
from .worktree import WorkTree


class IsolatedSandbox(AsyncTwins):
    """One isolated sandbox. Use as a context manager or call :meth:`close`."""

    backend = "isolated"
    is_security_boundary = True

    def __init__(self, template: Template | None = None, limits: Limits | None = None,
                 timeouts: Timeouts | None = None, network: NetworkPolicy | None = None,
                 proxy=None, proxy_socket: str | None = None):
        self.template = template or Template()
        self.limits = limits or Limits()
        self.timeouts = timeouts or Timeouts()
        self.network = network or NetworkPolicy()
        self._proxy, self._own_proxy = proxy, False
        if self.network.mode == "allowlist" and proxy is None and proxy_socket is None:
            from .netproxy import EgressProxy

            self._proxy, self._own_proxy = EgressProxy(self.network.allow_hosts), True
        self._proxy_socket = proxy_socket or (self._proxy.path if self._proxy else None)
        self._lock = threading.RLock()
        self._tree = WorkTree(self._lock)
        self._closed = False
        self._words: str | None = None  # the supervisor's stderr, read at close
        self.proc = None
        self.cgroup = None
        self.ch: SupervisorChannel | None = None
        self.init_pid: int | None = None
        self.created_at = time.monotonic()
        support = cgroups.detect()
        self.degraded = dict(support.missing)
        try:
            self._start(support)
        except BaseException:
            self.close()
            raise

    # --- life cycle -------------------------------------------------------------------------

    def _start(self, support: cgroups.CgroupSupport) -> None:
        filt = seccomp.compiled(self.network.allow_inet)
        self.seccomp_rules = filt.rules
        self._launch = launch(self.template, self.limits, support, self._proxy_socket,
                              self.timeouts.create_s, native=native.binary(), bpf=filt.program)
        self.proc, self.cgroup = self._launch.proc, self._launch.cgroup
        self.init_pid = self._launch.init_pid
        self.ch = SupervisorChannel(Control(self._launch.ctl, self._launch.native), self.close,
                                    self.timeouts.create_s)
        self.ch.last_words = self._last_words
        try:
            if self._launch.native:  # ptinit mounted the work tree itself (lower base, upper 1)
                if self._tree.layers.mount_request() != {"lowers": ["base"], "upper": "1"}:
                    raise SandboxError("layer stack does not start where ptinit does")
                reply, fds = self.ch.recv_one(self.timeouts.create_s)
                for fd in fds:
                    os.close(fd)
                if reply.get("op") != "ready":
                    raise SandboxError(f"sandbox did not start: {reply.get('message', reply)}")
            else:
                reply = self.ch.call({"op": "init", "bpf": filt.program,
                                      "store_bytes": self.limits.store_bytes,
                                      **self._tree.layers.mount_request()}, self.timeouts.create_s)
        except (SandboxError, EOFError, OSError) as exc:  # say what failed, not just "EOF"
            front = "ptinit" if self._launch.native else "python supervisor"
            raise SandboxError(f"sandbox {front} failed to start: {exc}; its stderr: "
                               f"{self._last_words()}") from exc
        if self.network.mode == "allowlist":
            self.ch.call({"op": "forwarder"})
        self.supervisor_pid = _only_child(self.init_pid)
        self._tree.attach(self.ch, self.init_pid, self.supervisor_pid, int(reply["store_fd"]))

    @property
    def front(self) -> str:
        """Which supervisor serves the sandbox now: ``native`` (ptinit) or ``python``."""
        return "native" if self.ch is not None and self.ch.native else "python"

    def _last_words(self) -> str:
        """What bubblewrap and the supervisor wrote to stderr (kept past ``close``)."""
        launched = getattr(self, "_launch", None)
        if self._words is None and launched is not None:
            return launched.stderr_tail()
        return self._words or "(no log)"

    def close(self) -> None:
        """Kill everything inside and remove every trace on the host. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if getattr(self, "_launch", None) is not None:
                self._words = self._launch.stderr_tail()
                self._launch.close_log()
            if self.ch is not None:
                self.ch.close()
            if self.cgroup is not None:
                self.cgroup.kill_all()
            if self.proc is not None:
                if self.cgroup is None:
                    _kill_quiet(self.proc.pid)
                if not _wait_exit(self.proc, 5.0):
                    _kill_quiet(self.proc.pid)
                    self.proc.wait(timeout=5)
            if self.cgroup is not None:
                self.cgroup.destroy()
            if self._own_proxy:
                self._proxy.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # a forgotten sandbox must not leak processes or cgroups
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def ping(self, timeout: float = 2.0) -> bool:
        """Health check: the supervisor answers and the sandbox is within its lifetime."""
        with self._lock:
            try:
                reply = self.ch.call({"op": "ping"}, timeout) if self.ch is not None else {}
                return reply.get("op") == "pong"
            except SandboxError:
                return False

    # --- commands ---------------------------------------------------------------------------

    def exec(self, cmd, *, stdin: bytes | str | None = None, env: dict | None = None,
             cwd: str | None = None, timeout: float | None = None,
             cpu_time: float | None = None, idle_timeout: float | None = None) -> ExecResult:
        """Run ``cmd`` (a shell string or an argv list) and wait for it."""
        return self._run({"argv": normalize_cmd(cmd)}, stdin, env, cwd, timeout, cpu_time,
                         idle_timeout)

    def run_python(self, code: str, *, stdin: bytes | str | None = None,
                   env: dict | None = None, cwd: str | None = None,
                   timeout: float | None = None, cpu_time: float | None = None) -> ExecResult:
        """Run a Python snippet in the pre-started interpreter (no interpreter start-up)."""
        return self._run({"python": code}, stdin, env, cwd, timeout, cpu_time, None)

    def _run(self, what, stdin, env, cwd, timeout, cpu_time, idle_timeout) -> ExecResult:
        with self._lock:
            if self._closed:
                return ExecResult("sandbox_error", reason="sandbox is closed")
            t = self.timeouts
            lifetime = None if t.lifetime_s is None else self.created_at + t.lifetime_s
            if lifetime is not None and time.monotonic() >= lifetime:
                return ExecResult("killed", reason=f"sandbox lifetime {t.lifetime_s}s is over")
            budgets = Budgets(timeout or t.wall_s, cpu_time or t.cpu_s,
                              idle_timeout or t.idle_s, lifetime, t.kill_grace_s)
            return execution.run(self.ch, self.cgroup, self.limits,
                                 self.network.mode == "allowlist", what, stdin, env, cwd, budgets)

    # --- files and snapshots (worktree.py) --------------------------------------------------

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        """Bytes of a regular file under /work (links are refused, never followed)."""
        return self._tree.read_file(path, max_bytes)

    def write_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Atomically create or replace a file under /work (written by the supervisor)."""
        self._tree.write_file(path, data, mode)

    def remove_file(self, path: str) -> None:
        self._tree.remove_file(path)

    def list_files(self, path: str = "", limit: int = 10_000, limits=None) -> list[FileInfo]:
        """Entries under ``path`` (relative to /work), recursively, links listed not followed
        (``.truncated`` when more than ``limit``; ``TreeLimitExceeded`` past ``limits``)."""
        return self._tree.list_files(path, limit, limits)

    def snapshot(self) -> SnapshotId:
        return self._tree.snapshot()

    def restore(self, snapshot_id: SnapshotId) -> None:
        self._tree.restore(snapshot_id)

    def unchanged_since(self, snapshot_id: SnapshotId) -> bool:
        """True when a reset to ``snapshot_id`` would undo nothing (see ``WorkTree``)."""
        return self._tree.unchanged_since(snapshot_id)

    def diff(self, since: SnapshotId, content_cap: int = 64 * 1024, limits=None) -> list[FileChange]:
        """Raises ``TreeLimitExceeded`` (never a partial list) past ``limits``."""
        return self._tree.diff(since, content_cap, limits)


def _only_child(pid: int) -> int:
    """Host pid of the supervisor: the single child of the sandbox's init."""
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    if len(kids) != 1:
        raise SandboxError(f"expected one supervisor under the sandbox init, found {kids}")
    return int(kids[0])


def _wait_exit(proc, timeout: float) -> bool:
    """Reap bubblewrap as soon as it exits; False after ``timeout``. Why a pidfd:
    ``Popen.wait(timeout)`` polls with sleeps that double from 1 ms, which adds up to a few
    milliseconds to every close."""
    if proc.poll() is not None:
        return True
    try:
        fd = os.pidfd_open(proc.pid)  # a zombie we have not reaped keeps its pid: no reuse race
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        if not select.select([fd], [], [], timeout)[0]:
            return False
    finally:
        os.close(fd)
    proc.wait()
    return True


def _kill_quiet(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
