"""Overlay layer bookkeeping: snapshots as frozen layers, restores as fresh uppers, and diffs.

What it is: a sandbox's ``/work`` (with ``/tmp``, home and ``/dev/shm``) is an overlay of
immutable layers under one writable upper layer. :class:`LayerStack` decides the layer lists
the supervisor mounts:

- ``snapshot()`` freezes the current upper (it becomes the topmost lower layer) and mounts a
  new empty upper: nothing is copied, so it costs one remount whatever the tree size;
- ``restore(id)`` mounts the snapshot's layers under a new empty upper; layers no snapshot
  refers to any more are deleted;
- ``diff(since=id)`` compares the two layer stacks path by path, reading only the layers that
  differ, and resolving overlay whiteouts and opaque directories itself.

Guarantees: snapshot ids are opaque strings valid for the sandbox's lifetime; frozen layers
are never written (overlay only writes its upper, and commands cannot see the layer store);
every read of a layer goes through :mod:`safefs` (no link is followed).

Does not: persist snapshots beyond the sandbox (they live on its private tmpfs).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
from dataclasses import dataclass

from posttrain.core.errors import SandboxError

from . import safefs
from .result import FileChange

MAX_DEPTH = 120  # overlay accepts up to 500 lower layers; stay well inside the option size
OPAQUE_XATTR = "user.overlay.opaque"


@dataclass(frozen=True)
class Entry:
    layer: str
    kind: str  # file | dir | link | other
    size: int


class LayerStack:
    """Which layers make up the work tree now and at every snapshot."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.upper = str(next(self._ids))
        self.lowers: tuple[str, ...] = ("base",)
        self.snapshots: dict[str, tuple[str, ...]] = {}
        self._snap_ids = itertools.count(1)

    def mount_request(self) -> dict:
        return {"lowers": list(self.lowers), "upper": self.upper}

    def snapshot(self) -> tuple[str, dict]:
        frozen = (self.upper,) + self.lowers
        if len(frozen) > MAX_DEPTH:
            raise SandboxError(f"snapshot depth {len(frozen)} exceeds {MAX_DEPTH}; restore an "
                               "earlier snapshot instead of stacking more")
        sid = f"s{next(self._snap_ids)}"
        self.snapshots[sid] = frozen
        self.lowers, self.upper = frozen, str(next(self._ids))
        return sid, {"op": "mount", **self.mount_request(), "drop": []}

    def restore(self, sid: str) -> dict:
        if sid not in self.snapshots:
            raise SandboxError(f"unknown snapshot {sid!r}; known: {sorted(self.snapshots)}")
        old = (self.upper,) + self.lowers
        self.lowers, self.upper = self.snapshots[sid], str(next(self._ids))
        live = set(self.lowers).union(*self.snapshots.values())
        drop = [layer for layer in old if layer not in live and layer != "base"]
        return {"op": "mount", **self.mount_request(), "drop": drop}

    def current(self) -> tuple[str, ...]:
        return (self.upper,) + self.lowers


def _kind(st: os.stat_result) -> str:
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "other"


def _is_whiteout(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


class LayerReader:
    """Resolves paths through a layer stack; ``layer_fds`` maps layer name -> open dir fd."""

    def __init__(self, layer_fds: dict[str, int]):
        self.fds = layer_fds

    def _lookup(self, layer: str, parts: list[str]):
        """(stat of the path in this layer or None, whether a parent dir is opaque/whiteout)."""
        fd = self.fds[layer]
        try:
            dfd = safefs.open_dir(fd, parts[:-1])
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            return None, self._blocked(fd, parts)
        try:
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        finally:
            os.close(dfd)
        return st, self._blocked(fd, parts)

    def _blocked(self, fd: int, parts: list[str]) -> bool:
        """True when some parent of ``parts`` in this layer hides lower layers."""
        cur = os.dup(fd)
        try:
            for part in parts[:-1]:
                try:
                    st = os.stat(part, dir_fd=cur, follow_symlinks=False)
                except FileNotFoundError:
                    return False
                if not stat.S_ISDIR(st.st_mode):
                    return True  # a whiteout or a file replaces the directory
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=cur)
                os.close(cur)
                cur = nxt
                try:
                    if os.getxattr(cur, OPAQUE_XATTR) == b"y":
                        return True
                except OSError:
                    pass
            return False
        finally:
            os.close(cur)

    def resolve(self, stack: tuple[str, ...], rel: str) -> Entry | None:
        parts = rel.split("/")
        for layer in stack:
            st, blocked = self._lookup(layer, parts)
            if st is not None:
                return None if _is_whiteout(st) else Entry(layer, _kind(st), st.st_size)
            if blocked:
                return None
        return None

    def paths(self, layer: str, under: str = "work") -> list[str]:
        """Paths present in one layer under ``under`` (none when the layer lacks it)."""
        try:
            return [rel for rel, _ in safefs.walk(self.fds[layer], under.split("/"))]
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return []

    def digest(self, entry: Entry, rel: str, cap: int) -> tuple[str, str | None]:
        data, _ = safefs.read_file(self.fds[entry.layer], rel, entry.size + 1)
        text = None
        if len(data) <= cap:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        return hashlib.sha256(data).hexdigest(), text


def diff(reader: LayerReader, old: tuple[str, ...], new: tuple[str, ...],
         content_cap: int = 64 * 1024) -> list[FileChange]:
    """Files under work/ that differ between two layer stacks (directories are not listed)."""
    changed_layers = (set(old) ^ set(new)) - {"base"}
    found = {p for layer in changed_layers for p in reader.paths(layer)}
    for rel in list(found):  # a whiteout or opaque dir hides whole subtrees of the old stack
        entry = reader.resolve(old, rel)
        if entry is not None and entry.kind == "dir":
            for layer in old:
                found.update(reader.paths(layer, rel))
    candidates = sorted(found)
    changes = []
    for rel in candidates:
        a, b = reader.resolve(old, rel), reader.resolve(new, rel)
        a = a if a is not None and a.kind != "dir" else None
        b = b if b is not None and b.kind != "dir" else None
        if a is None and b is None:
            continue
        name = rel[len("work/"):]
        if b is None:
            changes.append(FileChange(name, "deleted", old_size=a.size,
                                      old_sha256=_hash(reader, a, rel)))
            continue
        sha, text = reader.digest(b, rel, content_cap) if b.kind == "file" else (None, None)
        if a is None:
            changes.append(FileChange(name, "added", b.size, sha, text))
            continue
        old_sha = _hash(reader, a, rel)
        if (a.kind, a.size, old_sha) != (b.kind, b.size, sha):
            changes.append(FileChange(name, "changed", b.size, sha, text, a.size, old_sha))
    return changes


def _hash(reader: LayerReader, entry: Entry, rel: str) -> str | None:
    return reader.digest(entry, rel, 0)[0] if entry.kind == "file" else None
