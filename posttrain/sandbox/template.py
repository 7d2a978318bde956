"""Sandbox templates: the read-only base tree every sandbox of a template starts from.

What it is: :class:`Template` = an optional host directory to copy plus a mapping of extra
files (path -> text or bytes). :func:`materialize` writes it once per process into a cache
directory (on tmpfs when available), owned by the sandbox user; isolated sandboxes mount it
as the lowest, read-only overlay layer under ``/work``; process sandboxes copy it.

Guarantees: a template's ``key`` changes whenever its files or base path change; the
materialized tree is never written by a sandbox (overlay copies up on write); symlinks in a
base directory are copied as links, never followed.

Does not: watch ``base_dir`` for later changes (the key includes its path, not its contents).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from . import safefs

_lock = threading.Lock()
_cache_root: Path | None = None


@dataclass(frozen=True)
class Template:
    """Base tree + files for ``/work``; hashable so it can key a pool."""

    files: tuple[tuple[str, bytes], ...] = ()
    base_dir: str | None = None
    name: str = ""

    @classmethod
    def of(cls, files: Mapping[str, str | bytes] | None = None, base_dir: str | None = None,
           name: str = "") -> "Template":
        items = tuple(sorted((k, v.encode() if isinstance(v, str) else bytes(v))
                             for k, v in (files or {}).items()))
        for path, _ in items:
            safefs.split(path)  # refuse '..' and absolute paths up front
        return cls(items, str(Path(base_dir).resolve()) if base_dir else None, name)

    @property
    def key(self) -> str:
        h = hashlib.sha256((self.base_dir or "").encode())
        for path, data in self.files:
            h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()[:16]


def cache_root() -> Path:
    """This process's cache directory (removed at exit)."""
    global _cache_root
    with _lock:
        if _cache_root is None:
            base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
            _cache_root = Path(tempfile.mkdtemp(prefix=f"posttrain-sbx-cache-{os.getpid()}-", dir=base))
            os.chmod(_cache_root, 0o755)
            atexit.register(shutil.rmtree, _cache_root, True)
        return _cache_root


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
    os.chmod(tmp, 0o755)
    with _lock:
        if dest.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.rename(tmp, dest)
    return dest
