"""Sandbox templates: the read-only base tree every sandbox of a template starts from.

What it is: :class:`Template` = an optional host directory to copy plus a mapping of extra
files (path -> text or bytes), and optional read-only host directories (``ro_dirs``: name ->
host path, seen inside an isolated sandbox at ``/opt/ro/<name>``; e.g. the CAD tool's
packages, which the sandbox's ``/usr`` Python does not have). :func:`materialize` writes it once per process into a cache
directory (on tmpfs when available), owned by the sandbox user; isolated sandboxes mount it
as the lowest, read-only overlay layer under ``/work``; process sandboxes copy it.

The cache root (:func:`cache_root`) is 0700 and owned by us or the sandbox user; each
template tree in it is 0700 too. The files keep the modes the task gives them (they are the
sandbox's view: a repository's executable bits, the modes a terminal task starts from), but
no other user can reach them. A cache outlives a process that dies without ``atexit``
(SIGKILL, ``os._exit``) only until the next process starts one: :func:`cache_root` sweeps
those of dead owners.

Guarantees: a template's ``key`` changes whenever its files or base path change; the
materialized tree is never written by a sandbox (overlay copies up on write); symlinks in a
base directory are copied as links, never followed.

Does not: watch ``base_dir`` or an ``ro_dirs`` directory for later changes (the key includes
their paths, not their contents); expose ``ro_dirs`` on the process backend (it refuses them).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from . import hostdirs, safefs

_lock = threading.Lock()
_cache_root: Path | None = None
_cache_pid: int | None = None
RO_ROOT = "/opt/ro"  # where ro_dirs appear inside a sandbox (both fronts hide their host paths)
_RO_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class Template:
    """Base tree + files for ``/work``; hashable so it can key a pool."""

    files: tuple[tuple[str, bytes], ...] = ()
    base_dir: str | None = None
    name: str = ""
    ro_dirs: tuple[tuple[str, str], ...] = ()  # (name, host dir): read-only at RO_ROOT/name

    @classmethod
    def of(cls, files: Mapping[str, str | bytes] | None = None, base_dir: str | None = None,
           name: str = "", ro_dirs: Mapping[str, str] | None = None) -> "Template":
        items = tuple(sorted((k, v.encode() if isinstance(v, str) else bytes(v))
                             for k, v in (files or {}).items()))
        for path, _ in items:
            safefs.split(path)  # refuse '..' and absolute paths up front
        return cls(items, str(Path(base_dir).resolve()) if base_dir else None, name,
                   _ro_dirs(ro_dirs or {}))

    @property
    def key(self) -> str:
        h = hashlib.sha256((self.base_dir or "").encode())
        for path, data in self.files:
            h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        for name, host in self.ro_dirs:
            h.update(b"ro\0" + name.encode() + b"\0" + host.encode())
        return h.hexdigest()[:16]


def _ro_dirs(dirs: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Validated (name, resolved host dir) pairs: a name is one short path component (it is
    a mount point and goes into overlay options, so no ``:``, ``,`` or ``/``)."""
    out = []
    for name, host in sorted(dirs.items()):
        if not isinstance(name, str) or not _RO_NAME.match(name):
            raise ValueError(f"ro_dirs name {name!r}: must match {_RO_NAME.pattern}")
        path = Path(host).resolve()
        if not path.is_dir():
            raise ValueError(f"ro_dirs[{name!r}] = {host!r}: not a directory")
        if any(c in str(path) for c in ",:\n"):
            raise ValueError(f"ro_dirs[{name!r}] = {host!r}: ',', ':' or a newline in the path")
        out.append((name, str(path)))
    return tuple(out)


CACHE_PREFIX = "posttrain-sbx-cache-"
PROC_PREFIX = "posttrain-sbx-proc-"  # ProcessSandbox roots (hostdirs.make_dir)


def cache_root() -> Path:
    """This process's cache directory: mode 0700, stamped with our pid and start time,
    removed at exit; the first call also sweeps the caches of dead owners (``hostdirs``).
    A forked child gets its own (the parent's belongs to the parent)."""
    global _cache_root, _cache_pid
    with _lock:
        if _cache_root is None or _cache_pid != os.getpid():
            base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
            hostdirs.sweep(base, CACHE_PREFIX, extra_uids=_sandbox_uids())
            hostdirs.sweep(tempfile.gettempdir(), PROC_PREFIX)  # process backends' roots
            _cache_root = Path(hostdirs.make_dir(CACHE_PREFIX, base))
            _cache_pid = os.getpid()
            atexit.register(_remove_own, _cache_root, _cache_pid)
        return _cache_root


def _remove_own(path: Path, pid: int) -> None:
    if os.getpid() == pid:  # a forked child runs its parent's atexit hooks too
        shutil.rmtree(path, ignore_errors=True)


def _sandbox_uids() -> tuple:
    from .launch import SANDBOX_UID  # cache roots are handed to it (share_with)

    return (SANDBOX_UID,) if os.geteuid() == 0 else ()


def share_with(uid: int, gid: int) -> Path:
    """The cache root, owned by ``uid`` (still 0700) so that bubblewrap, started as the
    sandbox user, can reach what is staged in it; root keeps access anyway."""
    root = cache_root()
    if os.geteuid() == 0 and root.stat().st_uid != uid:
        os.chown(root, uid, gid)
    return root


def materialize(template: Template | None, uid: int, gid: int) -> Path:
    """The directory holding ``template``'s tree (``work/`` inside), created once."""
    template = template or Template()
    dest = cache_root() / f"tpl-{template.key}-{uid}"
    if dest.exists():
        return dest
    tmp = Path(tempfile.mkdtemp(dir=cache_root(), prefix="tpl-tmp-"))
    work = tmp / "work"
    if template.base_dir:
        shutil.copytree(template.base_dir, work, symlinks=True)
    else:
        work.mkdir()
    fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for path, data in template.files:
            safefs.write_file(fd, path, data)
    finally:
        os.close(fd)
    for root, dirs, files in os.walk(tmp):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)
    os.chown(tmp, uid, gid)
    os.chmod(tmp, 0o700)  # only the sandbox user (and root) may reach the hidden files
    with _lock:
        if dest.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.rename(tmp, dest)
    return dest
