"""Diff of two directory trees, each a stack of layers: overlay snapshots or plain copies.

What it is: :func:`diff_stacks` walks the old and the new stack together, directory by
directory (:class:`treewalk.DirChain`: each directory opened once from its parent, linear
in the number of entries). With ``overlay=True`` a stack is resolved as overlayfs does it
(topmost layer wins; a ``0/0`` character device is a whiteout; a directory marked opaque,
or a non-directory, hides what lies below). A directory whose contributing layers are the
same in both stacks is identical and not entered, so a diff after a snapshot reads only
what the upper layers touched. :func:`diff_trees` is the one-layer case (the process
backend's copies).

Guarantees: files are compared by kind, size, then content (:mod:`contentcmp`: bounded,
sparse-aware, never a whole file in memory); links by target, never followed; directories
are not listed themselves; the result is sorted by path. A diff that would exceed its
:class:`treewalk.TreeLimits` (entries, bytes, time) raises :class:`TreeLimitExceeded`:
it is never silently partial.

Does not: detect permission-only or timestamp-only changes; give ``sha256`` for files over
``hash_max_file`` (their change is still detected by comparison).
"""

from __future__ import annotations

import os
import stat

from . import contentcmp
from .result import FileChange
from .treewalk import Budget, DirChain, TreeLimits, kind_of as _kind, listdir_stat

OPAQUE_XATTR = "user.overlay.opaque"


def _opaque(dir_fd: int, name: str) -> bool:
    try:  # one component below an open fd: /proc/self/fd resolves no path of the sandbox's
        return os.getxattr(f"/proc/self/fd/{dir_fd}/{name}", OPAQUE_XATTR,
                           follow_symlinks=False) == b"y"
    except OSError:
        return False


def _stat_one(dir_fd: int, name: str) -> dict:
    try:
        return {name: os.stat(name, dir_fd=dir_fd, follow_symlinks=False)}
    except FileNotFoundError:
        return {}


def _resolve(contrib: tuple, listings: dict, fds: dict, name: str, overlay: bool):
    """None, ``("dir", layers)`` or ``("ent", layer, lstat)`` for ``name`` in one stack."""
    layers: list = []
    for i, layer in enumerate(contrib):
        st = listings[layer].get(name)
        if st is None:
            continue
        whiteout = overlay and stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
        if whiteout or not stat.S_ISDIR(st.st_mode):
            if layers or whiteout:
                break
            return ("ent", layer, st)
        layers.append(layer)
        if overlay and i + 1 < len(contrib) and _opaque(fds[layer], name):
            break
    return ("dir", tuple(layers)) if layers else None


class _Differ:
    def __init__(self, old: tuple, new: tuple, overlay: bool, under: str | None,
                 content_cap: int, budget: Budget):
        self.old, self.new, self.overlay, self.under = old, new, overlay, under
        self.cap, self.budget = content_cap, budget
        self.changes: list[FileChange] = []

    def visit(self, parts: list, fds: dict, contrib: tuple) -> list:
        c_old, c_new = contrib
        top = not parts and self.under is not None
        if top:  # the layer roots: only ``under`` matters, no need to list them
            listings = {layer: _stat_one(fd, self.under) for layer, fd in fds.items()}
        else:
            listings = {layer: listdir_stat(fd, self.budget) for layer, fd in fds.items()}
        names = set().union(*listings.values())
        rel_dir = "/".join(parts[1:] if self.under is not None else parts)
        subdirs = []
        for name in sorted(names):
            a = _resolve(c_old, listings, fds, name, self.overlay)
            b = _resolve(c_new, listings, fds, name, self.overlay)
            co = a[1] if a is not None and a[0] == "dir" else ()
            cn = b[1] if b is not None and b[0] == "dir" else ()
            if co != cn:  # the same layers below a directory: the same subtree
                subdirs.append((name, tuple(dict.fromkeys(co + cn)), (co, cn)))
            if top:
                continue
            ea = (fds[a[1]], name, a[2]) if a is not None and a[0] == "ent" else None
            eb = (fds[b[1]], name, b[2]) if b is not None and b[0] == "ent" else None
            if ea is not None and eb is not None and a[1] == b[1]:
                continue  # the very same entry of one layer
            if ea is not None or eb is not None:
                self.compare(f"{rel_dir}/{name}" if rel_dir else name, ea, eb)
        return subdirs

    def _sha(self, ent) -> tuple[str | None, str | None]:
        if _kind(ent[2]) != "file":
            return None, None
        return contentcmp.digest(*ent, self.budget, self.cap)

    def compare(self, rel: str, a, b) -> None:
        if b is None:
            self.changes.append(FileChange(rel, "deleted", old_size=a[2].st_size,
                                           old_sha256=self._sha(a)[0]))
            return
        sha, text = self._sha(b)
        if a is None:
            self.changes.append(FileChange(rel, "added", b[2].st_size, sha, text))
            return
        if not self._same(a, b, sha):
            self.changes.append(FileChange(rel, "changed", b[2].st_size, sha, text,
                                           a[2].st_size, self._sha(a)[0]))

    def _same(self, a, b, b_sha: str | None) -> bool:
        ka, kb = _kind(a[2]), _kind(b[2])
        if ka != kb:
            return False
        if ka == "link":
            return os.readlink(a[1], dir_fd=a[0]) == os.readlink(b[1], dir_fd=b[0])
        if ka == "other":
            return (a[2].st_mode, a[2].st_rdev) == (b[2].st_mode, b[2].st_rdev)
        if a[2].st_size != b[2].st_size:
            return False
        if b_sha is not None:
            return self._sha(a)[0] == b_sha
        return contentcmp.same(a, b, self.budget)


def diff_stacks(roots: dict, old: tuple, new: tuple, *, overlay: bool, under: str | None,
                content_cap: int = 64 * 1024, limits: TreeLimits | None = None) -> list[FileChange]:
    """Files that differ between two layer stacks (layer names, topmost first) whose layer
    roots are the open dir fds ``roots``; only entries under the top-level ``under``."""
    budget = Budget(limits)
    differ = _Differ(old, new, overlay, under, content_cap, budget)
    wanted = {layer: roots[layer] for layer in dict.fromkeys(old + new)}
    DirChain(wanted, differ.visit, budget.limits.fd_budget, (tuple(old), tuple(new))).run()
    return sorted(differ.changes, key=lambda c: c.path)


def diff_trees(old_fd: int, new_fd: int, content_cap: int = 64 * 1024,
               limits: TreeLimits | None = None) -> list[FileChange]:
    """Files that differ between two plain trees (no overlay semantics)."""
    return diff_stacks({"old": old_fd, "new": new_fd}, ("old",), ("new",), overlay=False,
                       under=None, content_cap=content_cap, limits=limits)
