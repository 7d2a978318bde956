"""The process backend: rlimits only. NOT a security boundary.

What it is: :class:`ProcessSandbox` runs commands as ordinary child processes of the harness
in a private work directory, with rlimits (address space, CPU, file size, open files, no core
dumps), a new session per command, the same staged timeouts, output caps and kill ladder as
the isolated backend (TERM then KILL to the command's process group), and snapshots as
copies of the work directory. It exists for platforms without user namespaces or bubblewrap.

Guarantees: the same API and ExecResult statuses as the isolated backend; a cleared
environment; harness file operations never follow links.

Does NOT: isolate the file system, the network, other processes or the host's users: code run
here can read anything the harness can, open sockets, and escape the process group with
``setsid`` (its orphans are not tracked). Never use it for untrusted code;
``open_sandbox`` warns once when it is selected for untrusted code.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

from posttrain.core.errors import SandboxError

from . import hostdirs, safefs, treediff
from .asyncio_twins import AsyncTwins
from .execspec import build_env, finish_result, normalize_cmd
from .policy import Limits, NetworkPolicy, Timeouts
from .pump import Budgets, pump
from .result import ExecResult, FileChange, FileInfo, SnapshotId
from .treewalk import list_entries
from .template import PROC_PREFIX, Template, materialize


class ProcessSandbox(AsyncTwins):
    backend = "process"
    is_security_boundary = False

    def __init__(self, template: Template | None = None, limits: Limits | None = None,
                 timeouts: Timeouts | None = None, network: NetworkPolicy | None = None,
                 **_ignored):
        self.template = template or Template()
        if self.template.ro_dirs:  # no mount namespace: /opt/ro/<name> cannot exist here
            raise SandboxError("Template.ro_dirs needs the isolated backend (bubblewrap)")
        self.limits = limits or Limits()
        self.timeouts = timeouts or Timeouts()
        self.network = network or NetworkPolicy()
        self.degraded = {"isolation": "process backend: rlimits only, not a security boundary"}
        self._lock = threading.RLock()
        self._closed = False
        self.root = hostdirs.make_dir(PROC_PREFIX)  # 0700, owner-stamped: swept if we die
        # a forgotten sandbox still removes its directory when collected or at exit
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True)
        self.work = os.path.join(self.root, "work")
        self.tmp = os.path.join(self.root, "tmp")
        base = materialize(self.template, os.getuid(), os.getgid())
        shutil.copytree(base / "work", self.work, symlinks=True)
        os.mkdir(self.tmp)
        self._snaps: dict[str, str] = {}
        self.created_at = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._cleanup()

    def ping(self, timeout: float = 2.0) -> bool:
        return not self._closed and os.path.isdir(self.work)

    def exec(self, cmd, *, stdin=None, env=None, cwd=None, timeout=None, cpu_time=None,
             idle_timeout=None) -> ExecResult:
        return self._run(normalize_cmd(cmd), stdin, env, cwd, timeout, cpu_time, idle_timeout)

    def run_python(self, code: str, *, stdin=None, env=None, cwd=None, timeout=None,
                   cpu_time=None) -> ExecResult:
        return self._run([sys.executable, "-I", "-c", code], stdin, env, cwd, timeout,
                         cpu_time, None)

    def _cwd(self, cwd: str | None) -> str:
        parts = safefs.split(cwd or "")
        root = os.open(self.work, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.close(safefs.open_dir(root, parts))  # refuses links on the way
        finally:
            os.close(root)
        return os.path.join(self.work, *parts)

    def _run(self, argv, stdin, env, cwd, timeout, cpu_time, idle_timeout) -> ExecResult:
        with self._lock:
            if self._closed:
                return ExecResult("sandbox_error", reason="sandbox is closed")
            t, lim = self.timeouts, self.limits
            lifetime = None if t.lifetime_s is None else self.created_at + t.lifetime_s
            budgets = Budgets(timeout or t.wall_s, cpu_time or t.cpu_s, idle_timeout or t.idle_s,
                              lifetime, t.kill_grace_s)
            env2 = build_env(env)
            env2.update(HOME=self.work, TMPDIR=self.tmp)
            cpu = int(budgets.cpu_s) + 1 if budgets.cpu_s else None

            def limits_in_child() -> None:
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                resource.setrlimit(resource.RLIMIT_FSIZE, (lim.file_size_bytes,) * 2)
                resource.setrlimit(resource.RLIMIT_AS, (lim.memory_bytes,) * 2)
                if cpu:  # SIGXCPU at the soft limit; SIGKILL one second later
                    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

            try:
                proc = subprocess.Popen(
                    argv, cwd=self._cwd(cwd), env=env2, start_new_session=True,
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limits_in_child)
            except FileNotFoundError as exc:  # same contract as a shell: 127, not a sandbox fault
                return ExecResult("nonzero_exit", exit_code=127, stderr_bytes=f"{exc}\n".encode(),
                                  reason="command not found")
            except OSError as exc:
                return ExecResult("sandbox_error", reason=f"cannot start: {exc}")
            return self._wait(proc, stdin, budgets)

    def _wait(self, proc, stdin, budgets: Budgets) -> ExecResult:
        done_r, done_w = os.pipe()
        report: dict = {}

        def waiter() -> None:
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            report.update(exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                          signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                          cpu_s=ru.ru_utime + ru.ru_stime, maxrss_kb=ru.ru_maxrss)
            os.write(done_w, b"x")

        threading.Thread(target=waiter, daemon=True).start()

        def signal_tree(hard: bool) -> None:
            try:
                os.killpg(proc.pid, signal.SIGKILL if hard else signal.SIGTERM)
            except ProcessLookupError:
                pass

        data = stdin.encode() if isinstance(stdin, str) else stdin
        stdin_fd = os.dup(proc.stdin.fileno()) if proc.stdin else None
        if proc.stdin:
            proc.stdin.close()
        try:
            outcome = pump(out_fd=proc.stdout.fileno(), err_fd=proc.stderr.fileno(),
                           caps=(self.limits.stdout_bytes, self.limits.stderr_bytes),
                           stdin=data, stdin_fd=stdin_fd, done_fd=done_r,
                           on_done=lambda: bool(os.read(done_r, 1)), budgets=budgets,
                           cpu_probe=lambda: None, signal_tree=signal_tree)
        finally:
            signal_tree(True)  # orphans left in the command's session
            proc.stdout.close()
            proc.stderr.close()
            os.close(done_r)
            os.close(done_w)
        return finish_result(report, outcome, False, budgets)

    def _root_fd(self, path: str) -> int:
        if self._closed:
            raise SandboxError("sandbox is closed")
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        fd = self._root_fd(self.work)
        try:
            return safefs.read_file(fd, path, max_bytes)[0]
        finally:
            os.close(fd)

    def write_file(self, path: str, data, mode: int = 0o644) -> None:
        fd = self._root_fd(self.work)
        try:
            safefs.write_file(fd, path, data.encode() if isinstance(data, str) else bytes(data), mode)
        finally:
            os.close(fd)

    def remove_file(self, path: str) -> None:
        fd = self._root_fd(self.work)
        try:
            safefs.remove(fd, path)
        finally:
            os.close(fd)

    def list_files(self, path: str = "", limit: int = 10_000, limits=None) -> list[FileInfo]:
        fd = self._root_fd(self.work)
        try:
            return list_entries(fd, path, limit, limits)  # .truncated when more than limit
        finally:
            os.close(fd)

    def snapshot(self) -> SnapshotId:
        with self._lock:
            sid = f"s{len(self._snaps) + 1}"
            dest = os.path.join(self.root, f"snap-{sid}")
            shutil.copytree(self.work, dest, symlinks=True)
            self._snaps[sid] = dest
            return sid

    def restore(self, snapshot_id: SnapshotId) -> None:
        with self._lock:
            if snapshot_id not in self._snaps:
                raise SandboxError(f"unknown snapshot {snapshot_id!r}")
            shutil.rmtree(self.work)
            shutil.copytree(self._snaps[snapshot_id], self.work, symlinks=True)
            shutil.rmtree(self.tmp, ignore_errors=True)
            os.mkdir(self.tmp)

    def diff(self, since: SnapshotId, content_cap: int = 64 * 1024, limits=None) -> list[FileChange]:
        if since not in self._snaps:
            raise SandboxError(f"unknown snapshot {since!r}")
        old, new = self._root_fd(self._snaps[since]), self._root_fd(self.work)
        try:
            return treediff.diff_trees(old, new, content_cap, limits)
        finally:
            os.close(old)
            os.close(new)
