"""Starting an isolated sandbox's supervisor under bubblewrap, inside its cgroups.

What it is: :func:`launch` materialises the template, creates the sandbox's cgroups, starts
bubblewrap (as the unprivileged sandbox uid when we are root) with ``--block-fd``/
``--info-fd``, and only once the sandbox's init is in every group lets it run its payload:
the native front ``ptinit`` (given the seccomp program in a sealed memfd) when ``native``
names a binary, else the Python supervisor. With ``ptinit``, bubblewrap is started through
``ptinit enter``, so it is born in the cgroup v1 groups (see ``spawner.py`` for why); any
other group (the v2 tree, or all of them without ``ptinit``) gets the init moved into it.

Guarantees: no code of the sandbox runs before its process is in its cgroups, so every fork
inside is accounted and limited; on any failure the caller's ``close()`` reclaims what was
started (the returned parts are set as they are created). Everything bound into the sandbox
comes from this process's cache root (``staging.py``), never from the installed package, so
a package under a directory the sandbox user cannot traverse works; what bubblewrap and the
supervisor write to stderr is kept (``Launched.stderr_tail``) so a failed start says why.

Does not: talk the supervisor protocol (``IsolatedSandbox`` does).
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
from dataclasses import dataclass

from posttrain.core.errors import SandboxError

from . import bwrap, cgroups, staging
from .policy import Limits
from .spawner import spawn
from .template import Template, materialize, share_with

SANDBOX_UID = int(os.environ.get("POSTTRAIN_SANDBOX_UID", "993000001"))
SUPERVISOR_OVERHEAD = 48 * 1024 * 1024  # supervisor + reaper share of the memory quota
SUPERVISOR_PIDS = 5  # bubblewrap (outside and as init), supervisor, a zygote's reaper


@dataclass
class Launched:
    proc: object
    ctl: socket.socket
    init_pid: int
    cgroup: cgroups.Cgroup | None
    native: bool = False
    errlog: int | None = None  # memfd holding bubblewrap's and the supervisor's stderr

    def stderr_tail(self) -> str:
        return stderr_tail(self.errlog)

    def close_log(self) -> None:
        if self.errlog is not None:
            os.close(self.errlog)
            self.errlog = None


def host_ids() -> tuple[int, int]:
    if os.geteuid() == 0:
        return SANDBOX_UID, SANDBOX_UID
    return os.getuid(), os.getgid()  # unprivileged: bubblewrap maps our own uid


def bpf_memfd(program: bytes) -> int:
    """The seccomp program in a sealed memfd (ptinit reads it with pread; nobody can change it)."""
    fd = os.memfd_create("ptseccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, program)
    import fcntl

    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW
                | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
    return fd


def launch(template: Template, limits: Limits, support: cgroups.CgroupSupport,
           proxy_socket: str | None, create_s: float, native: str | None = None,
           bpf: bytes | None = None) -> Launched:
    uid, gid = host_ids()
    base = materialize(template, uid, gid)
    etc = bwrap.synth_etc(share_with(uid, gid))
    sources, native = staging.supervisor_dir(), staging.ptinit(native)
    errlog = os.memfd_create("ptsup-stderr", os.MFD_CLOEXEC)  # what bwrap/supervisor say
    host_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    block_r, block_w = os.pipe()
    info_r, info_w = os.pipe()
    cgroup = proc = None
    bpf_fd = bpf_memfd(bpf) if native and bpf else None
    try:
        try:
            argv = bwrap.bwrap_argv(
                base_dir=base, etc_dir=etc, supervisor_dir=sources, python=bwrap.system_python(),
                store_bytes=limits.store_bytes, block_fd=block_r, info_fd=info_w,
                ctl_fd=child_sock.fileno(), proxy_socket=proxy_socket, native=native,
                bpf_fd=bpf_fd, ro_dirs=template.ro_dirs if template else ())
            fds = (block_r, info_w, child_sock.fileno()) + ((bpf_fd,) if bpf_fd is not None else ())
            if support.parents or support.unified:  # before bubblewrap: it is born in them
                cgroup = cgroups.Cgroup(support, pids=limits.pids + SUPERVISOR_PIDS,
                                        memory_bytes=limits.memory_bytes + SUPERVISOR_OVERHEAD,
                                        cpus=limits.cpus)
            joined = cgroup.v1_dirs() if cgroup is not None and native else []
            proc = spawn(argv, pass_fds=fds, uid=uid, gid=gid, helper=native, join=joined,
                         stderr=errlog)
        finally:
            os.close(block_r)
            os.close(info_w)
            child_sock.close()
            if bpf_fd is not None:
                os.close(bpf_fd)
        info = _read_all(info_r, create_s, errlog)
        try:
            init_pid = int(json.loads(info)["child-pid"])
        except (ValueError, KeyError) as exc:
            raise SandboxError(f"bubblewrap did not start: {info[:200]!r}; it said: "
                               f"{stderr_tail(errlog)}") from exc
        if cgroup is not None:
            cgroup.add(init_pid, skip=joined)  # before it runs anything: all code is accounted
        try:
            os.write(block_w, b"1")
        except BrokenPipeError as exc:  # it reported its child, then died before the go-ahead
            raise SandboxError(f"bubblewrap exited before its sandbox started; it said: "
                               f"{stderr_tail(errlog)}") from exc
        return Launched(proc, host_sock, init_pid, cgroup, bpf_fd is not None, errlog)
    except BaseException:
        os.close(errlog)
        host_sock.close()
        if proc is not None:
            proc.kill()
            proc.wait()
        if cgroup is not None:
            cgroup.destroy()
        raise
    finally:
        os.close(info_r)
        os.close(block_w)


def stderr_tail(errlog: int | None, limit: int = 2000) -> str:
    """The last ``limit`` bytes bubblewrap and the supervisor wrote to their stderr."""
    if errlog is None:
        return "(no log)"
    try:
        size = os.fstat(errlog).st_size
        text = os.pread(errlog, limit, max(0, size - limit)).decode("utf-8", "replace").strip()
    except OSError as exc:
        return f"(log unreadable: {exc})"
    return text or "(nothing on stderr)"


def _read_all(fd: int, timeout: float, errlog: int | None = None) -> bytes:
    chunks, deadline = [], time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise SandboxError(f"bubblewrap did not start within {timeout:.1f}s; it said: "
                               f"{stderr_tail(errlog)}")
        data = os.read(fd, 4096)
        if not data:
            return b"".join(chunks)
        chunks.append(data)
        if b"}" in data:
            return b"".join(chunks)
