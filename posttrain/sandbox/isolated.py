"""The isolated backend: a bubblewrap'd supervisor per sandbox, cgroup quotas, seccomp.

What it is: :class:`IsolatedSandbox` starts one supervisor inside new user/pid/net/mount/ipc/
uts namespaces, places it in its own cgroups before it runs any code, and then runs each
command in a process the supervisor pre-forked, so a warm command pays no namespace set-up.
The supervisor is the native front ``ptinit`` (``native.py``) while only commands are run,
and becomes the Python supervisor (``supervisor.py``, same process) the first time files,
snapshots, snippets or the network forwarder are needed; without a C compiler the Python
supervisor serves from the start. Output, stdin and every budget are handled on the host
(``pump.py``); Python snippets go to a pre-started, confined interpreter.

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

import json
import os
import select
import signal
import socket
import threading
import time
from pathlib import Path

from posttrain.core.errors import SandboxError

from . import cgroups, native, safefs, seccomp, snapshots, wire
from .asyncio_twins import AsyncTwins
from .control import Control
from .execspec import build_env, finish_result, normalize_cmd
from .policy import Limits, NetworkPolicy, Timeouts
from .pump import Budgets, pump
from .result import ExecResult, FileChange, FileInfo, SnapshotId
from .launch import launch
from .template import Template

PROXY_ENV = {k: "http://127.0.0.1:3128" for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}


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
        self._layers = snapshots.LayerStack()
        self._closed = False
        self.proc = None
        self.cgroup = None
        self.ctl = None
        self.init_pid: int | None = None
        self._zygote = None  # (reaper pid, request socket, report fd, kind)
        self._pyserver = None  # (server pid, socket): the pre-started snippet interpreter
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
        self.ctl = Control(self._launch.ctl, self._launch.native)
        if self._launch.native:  # ptinit mounted the work tree itself (lower base, upper 1)
            if self._layers.mount_request() != {"lowers": ["base"], "upper": "1"}:
                raise SandboxError("layer stack does not start where ptinit does")
            reply, fds = self._recv_one(self.timeouts.create_s)
            for fd in fds:
                os.close(fd)
            if reply.get("op") != "ready":
                raise SandboxError(f"sandbox did not start: {reply.get('message', reply)}")
        else:
            reply = self._call({"op": "init", "bpf": filt.program,
                                "store_bytes": self.limits.store_bytes,
                                **self._layers.mount_request()}, self.timeouts.create_s)
        self._store_fd = int(reply["store_fd"])
        if self.network.mode == "allowlist":
            self._call({"op": "forwarder"})
        self.supervisor_pid = _only_child(self.init_pid)

    @property
    def front(self) -> str:
        """Which supervisor serves the sandbox now: ``native`` (ptinit) or ``python``."""
        return "native" if self.ctl is not None and self.ctl.native else "python"

    def _ensure_python(self) -> None:
        """Upgrade the native front to the Python supervisor (once; same process)."""
        if self.ctl is not None and self.ctl.native and not self._closed:
            try:
                self.ctl.send({"op": "upgrade"})
            except OSError as exc:
                self.close()
                raise SandboxError(f"sandbox supervisor is gone: {exc}") from exc
            reply = self._recv(self.timeouts.create_s)
            if reply.get("op") != "ok":
                raise SandboxError(f"sandbox supervisor did not start: {reply}")

    def close(self) -> None:
        """Kill everything inside and remove every trace on the host. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._drop_zygote()
            self._drop_pyserver()
            if self.ctl is not None:
                self.ctl.close()
            if self.cgroup is not None:
                self.cgroup.kill_all()
            if self.proc is not None:
                if self.cgroup is None:
                    _kill_quiet(self.proc.pid)
                try:
                    self.proc.wait(timeout=5)
                except Exception:  # noqa: BLE001
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

    # --- supervisor RPC ---------------------------------------------------------------------

    _PYTHON_OPS = ("write", "remove", "mkdir", "mount", "forwarder", "pyserver")

    def _call(self, msg: dict, timeout: float = 10.0) -> dict:
        if self._closed:
            raise SandboxError("sandbox is closed")
        if msg.get("op") in self._PYTHON_OPS:
            self._ensure_python()
        try:
            self.ctl.send(msg)
            reply = self._recv(timeout)
        except (OSError, EOFError) as exc:
            self.close()
            raise SandboxError(f"sandbox supervisor is gone: {exc}") from exc
        if reply.get("op") == "error":
            raise SandboxError(f"sandbox refused {msg.get('op')}: {reply.get('message')}")
        return reply

    def _recv_one(self, timeout: float) -> tuple[dict, list]:
        if not select.select([self.ctl], [], [], timeout)[0]:
            self.close()
            raise SandboxError(f"sandbox supervisor did not answer within {timeout:.1f}s")
        return self.ctl.recv()

    def _recv(self, timeout: float) -> dict:
        """Next reply; a pre-forked command ("zygote") arriving meanwhile is kept."""
        deadline = time.monotonic() + timeout
        while True:
            msg, fds = self._recv_one(max(0.0, deadline - time.monotonic()))
            if msg.get("op") == "zygote" and len(fds) == 2:
                self._drop_zygote()
                self._zygote = (int(msg["pid"]), socket.socket(fileno=fds[0]), fds[1],
                                msg.get("kind", "python"))
                if self._want_zygote:
                    return msg
                continue
            if msg.get("op") == "pyserver" and len(fds) == 1:
                self._drop_pyserver()
                self._pyserver = (int(msg["pid"]), socket.socket(fileno=fds[0]))
                return msg
            for fd in fds:
                os.close(fd)
            return msg

    _want_zygote = False

    def _drop_zygote(self) -> None:
        if self._zygote is not None:
            _pid, sock, report, _kind = self._zygote
            sock.close()  # the waiting command sees EOF and exits
            os.close(report)
            self._zygote = None

    def _drop_pyserver(self) -> None:
        if self._pyserver is not None:
            self._pyserver[1].close()  # the server sees EOF and exits (if still alive)
            self._pyserver = None

    def _take_zygote(self):
        if self._zygote is None:
            self._want_zygote = True
            try:
                self._recv(self.timeouts.create_s)
            finally:
                self._want_zygote = False
        zyg, self._zygote = self._zygote, None
        return zyg

    def ping(self, timeout: float = 2.0) -> bool:
        """Health check: the supervisor answers and the sandbox is within its lifetime."""
        with self._lock:
            try:
                return self._call({"op": "ping"}, timeout).get("op") == "pong"
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
            return self._run_locked(what, stdin, env, cwd, budgets)

    def _run_locked(self, what: dict, stdin, env, cwd, budgets: Budgets) -> ExecResult:
        lim = self.limits
        if self.network.mode == "allowlist":
            env = {**PROXY_ENV, **(env or {})}
        req = {**what, "env": build_env(env), "cwd": _sandbox_cwd(cwd),
               "rlimits": _rlimits(lim, budgets), "stdin": stdin is not None}
        try:
            if "python" in what:
                target, sock, done_fd = self._pyserver_target()
            else:
                target, sock, done_fd, kind = self._take_zygote()
                if kind == "native":
                    req = native.encode_request(req["argv"], req["env"], req["cwd"],
                                                req["rlimits"], req["stdin"])
        except (SandboxError, OSError) as exc:
            self.close()
            return ExecResult("sandbox_error", reason=f"no command process: {exc}")
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_w = None
        fds = [out_w, err_w]
        if stdin is not None:
            in_r, in_w = os.pipe()
            fds.append(in_r)
        oom0 = self.cgroup.oom_kills() if self.cgroup else 0
        try:
            if isinstance(req, bytes):
                native.send_request(sock, req, fds)
            else:
                wire.send(sock, req, fds)
        except OSError as exc:
            for fd in [out_r, err_r] + ([in_w] if in_w else []):
                os.close(fd)
            self._after_command(sock, done_fd, "python" in what)
            return ExecResult("sandbox_error", reason=f"command process is gone: {exc}")
        finally:
            for fd in fds:
                os.close(fd)
        chunks: list[bytes] = []

        def on_done() -> bool:  # one atomic JSON write, or EOF when the reaper was killed
            data = os.read(done_fd, 65536)
            chunks.append(data)
            return not data or data.rstrip().endswith(b"}")

        data = stdin.encode() if isinstance(stdin, str) else stdin
        try:
            outcome = pump(out_fd=out_r, err_fd=err_r, caps=(lim.stdout_bytes, lim.stderr_bytes),
                           stdin=data, stdin_fd=in_w, done_fd=done_fd,
                           on_done=on_done, budgets=budgets,
                           cpu_probe=self.cgroup.cpu_s if self.cgroup else (lambda: None),
                           signal_tree=lambda hard: self._signal_tree(target, hard))
        finally:
            os.close(out_r)
            os.close(err_r)
            self._after_command(sock, done_fd, "python" in what)
        raw = b"".join(chunks)
        report = json.loads(raw) if raw else {"killed": True}
        oom = (self.cgroup.oom_kills() if self.cgroup else 0) > oom0
        return finish_result(report, outcome, oom, budgets)

    def _pyserver_target(self):
        """(pid, socket, fd) of the snippet interpreter, starting it when there is none."""
        if self._pyserver is None:
            self._call({"op": "pyserver"}, self.timeouts.create_s)
        pid, sock = self._pyserver
        return pid, sock, sock.fileno()

    def _after_command(self, sock, done_fd: int, snippet: bool) -> None:
        if snippet:  # the server lives on; a killed one (EOF) is restarted on demand
            if self._pyserver is not None and _peer_closed(sock):
                self._drop_pyserver()
            return
        sock.close()
        os.close(done_fd)
        try:  # fork the next command process now, off the next command's critical path
            self.ctl.send({"op": "prepare"})
        except OSError:
            pass

    def _signal_tree(self, pid: int, hard: bool) -> None:
        sig = int(signal.SIGKILL if hard else signal.SIGTERM)
        try:
            self.ctl.send({"op": "signal", "pid": pid, "sig": sig})
        except OSError:
            if self.cgroup is not None and hard:
                self.cgroup.kill_all()

    # --- files ------------------------------------------------------------------------------

    def _proc_root(self) -> int:
        if self._closed or self.init_pid is None:
            raise SandboxError("sandbox is closed")
        return os.open(f"/proc/{self.init_pid}/root", os.O_RDONLY | os.O_DIRECTORY)

    def _work_fd(self) -> int:
        root = self._proc_root()
        try:
            return safefs.open_dir(root, ["work"])
        finally:
            os.close(root)

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        """Bytes of a regular file under /work (links are refused, never followed)."""
        with self._lock:
            fd = self._work_fd()
            try:
                return safefs.read_file(fd, path, max_bytes)[0]
            finally:
                os.close(fd)

    def write_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Atomically create or replace a file under /work (written by the supervisor)."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        safefs.split(path)
        with self._lock:
            self._call({"op": "write", "path": path, "mode": mode, "data": raw})

    def remove_file(self, path: str) -> None:
        with self._lock:
            self._call({"op": "remove", "path": path})

    def list_files(self, path: str = "", limit: int = 10_000) -> list[FileInfo]:
        """Entries under ``path`` (relative to /work), recursively, links listed not followed."""
        with self._lock:
            fd = self._work_fd()
            try:
                return [FileInfo(rel, snapshots._kind(st), st.st_size)
                        for rel, st in safefs.walk(fd, safefs.split(path), limit)]
            finally:
                os.close(fd)

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> SnapshotId:
        with self._lock:
            sid, req = self._layers.snapshot()
            self._remount(req)
            return sid

    def restore(self, snapshot_id: SnapshotId) -> None:
        with self._lock:
            self._remount(self._layers.restore(snapshot_id))

    def unchanged_since(self, snapshot_id: SnapshotId) -> bool:
        """True when nothing changed since ``snapshot_id`` was taken or last restored: the
        work tree is exactly that snapshot's layers under an *empty* upper layer (overlay
        records every write, copy-up, whiteout and metadata change there), and no snippet
        interpreter is running. A pool may then skip the reset (nothing to undo)."""
        with self._lock:
            if (self._closed or self._pyserver is not None
                    or self._layers.snapshots.get(snapshot_id) != self._layers.lowers):
                return False
            try:
                store = os.open(f"/proc/{self.supervisor_pid}/fd/{self._store_fd}",
                                os.O_RDONLY | os.O_DIRECTORY)
                try:
                    upper = safefs.open_dir(store, ["l", self._layers.upper])
                finally:
                    os.close(store)
                try:
                    return not os.listdir(upper)
                finally:
                    os.close(upper)
            except OSError:
                return False

    def _remount(self, req: dict) -> None:
        """A new overlay: pre-forked processes hold private copies of the old mounts, so
        every zygote and the snippet server prepared before it are dropped (the supervisor
        kills the server) and a fresh zygote is asked for."""
        self._call(req)
        self._drop_zygote()
        self._drop_pyserver()
        try:
            self.ctl.send({"op": "prepare"})
        except OSError:
            pass

    def diff(self, since: SnapshotId, content_cap: int = 64 * 1024) -> list[FileChange]:
        with self._lock:
            if since not in self._layers.snapshots:
                raise SandboxError(f"unknown snapshot {since!r}")
            old, new = self._layers.snapshots[since], self._layers.current()
            root = self._proc_root()
            store = os.open(f"/proc/{self.supervisor_pid}/fd/{self._store_fd}",
                            os.O_RDONLY | os.O_DIRECTORY)
            fds: dict[str, int] = {}
            try:
                for layer in set(old) | set(new):
                    fds[layer] = (safefs.open_dir(root, [".ptbase"]) if layer == "base"
                                  else safefs.open_dir(store, ["l", layer]))
                return snapshots.diff(snapshots.LayerReader(fds), old, new, content_cap)
            finally:
                for fd in fds.values():
                    os.close(fd)
                os.close(store)
                os.close(root)


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


def _only_child(pid: int) -> int:
    """Host pid of the supervisor: the single child of the sandbox's init."""
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    if len(kids) != 1:
        raise SandboxError(f"expected one supervisor under the sandbox init, found {kids}")
    return int(kids[0])


def _peer_closed(sock) -> bool:
    """True when the other end of ``sock`` is gone (a killed snippet server)."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _kill_quiet(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
