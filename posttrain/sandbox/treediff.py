"""Diff of two plain directory trees (the process backend's snapshots).

Guarantees: files are compared by kind, size and SHA-256; links are compared by target and
never followed; directories are not listed themselves. Reads go through :mod:`safefs`.
Does not: detect permission-only changes.
"""

from __future__ import annotations

import hashlib
import os
import stat

from . import safefs
from .result import FileChange


def _index(root_fd: int) -> dict:
    out = {}
    for rel, st in safefs.walk(root_fd):
        if stat.S_ISDIR(st.st_mode):
            continue
        out[rel] = st
    return out


def _digest(root_fd: int, rel: str, st: os.stat_result, cap: int):
    if not stat.S_ISREG(st.st_mode):
        return None, None
    data, _ = safefs.read_file(root_fd, rel, st.st_size + 1)
    text = None
    if len(data) <= cap:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return hashlib.sha256(data).hexdigest(), text


def diff_trees(old_fd: int, new_fd: int, content_cap: int = 64 * 1024) -> list[FileChange]:
    old, new = _index(old_fd), _index(new_fd)
    changes = []
    for rel in sorted(set(old) | set(new)):
        a, b = old.get(rel), new.get(rel)
        if b is None:
            changes.append(FileChange(rel, "deleted", old_size=a.st_size,
                                      old_sha256=_digest(old_fd, rel, a, 0)[0]))
            continue
        sha, text = _digest(new_fd, rel, b, content_cap)
        if a is None:
            changes.append(FileChange(rel, "added", b.st_size, sha, text))
            continue
        old_sha = _digest(old_fd, rel, a, 0)[0]
        if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode) or a.st_size != b.st_size or old_sha != sha:
            changes.append(FileChange(rel, "changed", b.st_size, sha, text, a.st_size, old_sha))
    return changes
