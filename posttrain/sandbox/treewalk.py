"""Bounded, linear walks of trees the sandboxed code controls (host side).

What it is: :class:`DirChain` is the depth-first stack of a walk over one tree or several
parallel trees (the layers of an overlay stack), holding each directory as an fd opened with
``openat(parent_fd, name, O_NOFOLLOW | O_DIRECTORY)``; :func:`walk` lists one tree with it;
:class:`Budget` charges every listed entry, every byte read and the clock against
:class:`TreeLimits`.

Why a chain of fds: re-walking ``root/a/b/...`` from the root for every directory is
quadratic in depth (a 3,000-deep chain made in 0.05 s cost 25 s to list). Here each
directory is opened once from its parent. A directory's fd is closed as soon as its last
subdirectory has been opened, so a chain holds O(1) fds; when a wide-and-deep tree would
hold more than ``fd_budget`` fds, the shallowest are closed and reopened later from the
nearest open ancestor, a window at a time (cost ~depth²/window, only for trees built to
defeat the window, and bounded by the entry limit and the deadline anyway).

Guarantees: no link is followed (every step ``O_NOFOLLOW``); every entry counts against
``max_entries``, every byte read against ``max_bytes``, and the deadline is checked as the
walk goes: exceeding one raises :class:`TreeLimitExceeded` naming its ``status``
(``entry_limit``, ``byte_limit``, ``time_limit``): a walk is complete or it fails, never
silently short.

Does not: protect against a concurrent writer (callers hold the sandbox lock and no command
runs meanwhile); a directory that vanishes or turns into a link between listing and opening
raises ``OSError`` rather than being skipped.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

from posttrain.core.errors import SandboxError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class TreeLimits:
    """What one ``list_files`` or ``diff`` may cost before it fails with a status."""

    max_entries: int = 100_000  # directory entries listed (all layers together)
    max_bytes: int = 256 << 20  # file bytes read or hashed for content comparison
    time_s: float = 20.0  # wall clock of the whole call
    hash_max_file: int = 16 << 20  # files larger than this get no sha256 (compared instead)
    fd_budget: int = 256  # directory fds a walk may hold at once


class TreeLimitExceeded(SandboxError):
    """A walk or diff hit a limit: the result would be incomplete, so there is none.

    ``status`` is ``entry_limit``, ``byte_limit`` or ``time_limit``. A verifier must treat
    this as a failed check (the policy made the tree too large to inspect), never as "no
    change found"."""

    def __init__(self, status: str, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status


class Budget:
    """Counters of one call against its :class:`TreeLimits`."""

    def __init__(self, limits: TreeLimits | None = None):
        self.limits = limits or TreeLimits()
        self.entries = self.bytes = 0
        self.deadline = time.monotonic() + self.limits.time_s

    def entry(self, n: int = 1) -> None:
        self.entries += n
        if self.entries > self.limits.max_entries:
            raise TreeLimitExceeded("entry_limit", f"more than {self.limits.max_entries} entries")
        if self.entries & 1023 < n:
            self.clock()

    def read(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_bytes:
            raise TreeLimitExceeded("byte_limit", f"more than {self.limits.max_bytes} bytes "
                                    "of file content to compare")
        self.clock()

    def clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise TreeLimitExceeded("time_limit", f"took longer than {self.limits.time_s}s")


def kind_of(st: os.stat_result) -> str:
    """``file``, ``dir``, ``link`` or ``other`` (as ``FileInfo.kind`` and ``FileChange`` use)."""
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "other"


class _Frame:
    __slots__ = ("parts", "keys", "fds", "data", "pending")

    def __init__(self, parts: list, keys: tuple, fds: dict | None, data=None):
        self.parts, self.keys, self.fds, self.data = parts, keys, fds, data
        self.pending: list = []  # (name, keys, data) of subdirectories to visit, last first


class DirChain:
    """Depth-first traversal over parallel trees keyed by ``roots`` (key -> open dir fd).

    ``visit(parts, fds, data)`` lists one directory (``fds``: key -> fd of it in each tree
    that has it) and returns its subdirectories to descend into as ``[(name, keys, data)]``,
    in order; ``keys`` must be a subset of the directory's own keys and ``data`` is handed
    to the child's visit. The root fds stay the caller's.
    """

    def __init__(self, roots: dict, visit, fd_budget: int = 256, data=None):
        self.visit, self.budget = visit, max(8, fd_budget)
        self.root = _Frame([], tuple(roots), dict(roots), data)
        self.stack = [self.root]
        self.open = 0

    def run(self) -> None:
        try:
            self._expand(self.stack[0])
            while self.stack:
                top = self.stack[-1]
                if not top.pending:
                    self._close(self.stack.pop())
                    continue
                name, keys, data = top.pending.pop()
                parent = self._ensure_open(len(self.stack) - 1)
                child = _Frame(top.parts + [name], tuple(keys), None, data)
                child.fds = {k: os.open(name, DIR_FLAGS, dir_fd=parent[k]) for k in keys}
                self.open += len(child.fds)
                if not top.pending:
                    self._close(top)  # no more children: a chain holds O(1) fds
                self.stack.append(child)
                self._trim()
                self._expand(child)
        finally:
            for frame in self.stack:
                self._close(frame)
            self.stack = []

    def _expand(self, frame: _Frame) -> None:
        frame.pending = list(reversed(self.visit(frame.parts, frame.fds, frame.data)))

    def _close(self, frame: _Frame) -> None:
        if frame.fds is None or frame is self.root:
            return
        for fd in frame.fds.values():
            os.close(fd)
        self.open -= len(frame.fds)
        frame.fds = None

    def _trim(self) -> None:
        """Close the shallowest open frames (never the root, the top or its parent)."""
        i = 1
        while self.open > self.budget and i < len(self.stack) - 2:
            if self.stack[i].fds is not None and self.stack[i].pending:
                self._close(self.stack[i])
            i += 1

    def _ensure_open(self, i: int) -> dict:
        frame = self.stack[i]
        if frame.fds is not None:
            return frame.fds
        j = i - 1
        while self.stack[j].fds is None:
            j -= 1
        window = max(2, self.budget // (2 * max(1, len(frame.keys))))
        fds = self.stack[j].fds
        for k in range(j + 1, i + 1):  # reopen down the chain, keeping the last window open
            here, prev = self.stack[k], self.stack[k - 1]
            opened = {key: os.open(here.parts[-1], DIR_FLAGS, dir_fd=fds[key]) for key in here.keys}
            self.open += len(opened)
            if k - 1 > j and (k - 1 <= i - window or not prev.pending):
                self._close(prev)
            here.fds = fds = opened
        self._trim()
        return frame.fds


def listdir_stat(fd: int, budget: Budget, cap: int | None = None) -> dict:
    """name -> lstat of every entry of the open directory ``fd`` (each charged as one entry),
    or of the first ``cap`` the kernel returns."""
    budget.clock()
    out = {}
    with os.scandir(fd) as it:
        for entry in it:
            if cap is not None and len(out) >= cap:
                break
            budget.entry()
            try:
                out[entry.name] = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
    return out


class FileList(list):
    """``list_files``'s result: a list of ``FileInfo``; ``truncated`` says that more entries
    exist than the ``limit`` asked for (the list then holds the first ``limit``)."""

    truncated: bool = False


def walk(root_fd: int, parts: list | None = None, budget: Budget | None = None,
         out: list | None = None, stop: int | None = None) -> list:
    """``[(relpath, lstat)]`` of every entry under ``parts`` of the tree, links not followed.

    The directory asked for must be a plain directory (else ``PermissionError`` or
    ``FileNotFoundError``, as :func:`safefs.open_dir`). Raises :class:`TreeLimitExceeded`
    (``entry_limit`` too once more than ``stop`` entries are found); entries found before
    that are in ``out`` when one is given."""
    from . import safefs

    budget = budget or Budget()
    top = safefs.open_dir(root_fd, list(parts or []))
    prefix = "/".join(parts or [])
    found: list = [] if out is None else out

    def visit(rel_parts, fds, _data):
        entries = listdir_stat(fds[0], budget, None if stop is None else stop + 1 - len(found))
        base = "/".join(([prefix] if prefix else []) + rel_parts)
        subdirs = []
        for name in sorted(entries):
            st = entries[name]
            found.append((f"{base}/{name}" if base else name, st))
            if stat.S_ISDIR(st.st_mode):
                subdirs.append((name, (0,), None))
        if stop is not None and len(found) > stop:
            raise TreeLimitExceeded("entry_limit", f"more than {stop} entries")
        return subdirs

    try:
        DirChain({0: top}, visit, budget.limits.fd_budget).run()
    finally:
        os.close(top)
    return found


def list_entries(root_fd: int, path: str, limit: int, limits: TreeLimits | None = None) -> FileList:
    """``list_files`` for both backends: at most ``limit`` entries, ``truncated`` when more."""
    from . import safefs
    from .result import FileInfo

    budget = Budget(limits)
    cap = min(limit, budget.limits.max_entries)
    found: list = []
    truncated = False
    try:
        walk(root_fd, safefs.split(path), budget, found, stop=cap)
    except TreeLimitExceeded as exc:
        if exc.status != "entry_limit":
            raise
        truncated = True
    out = FileList(FileInfo(rel, kind_of(st), st.st_size) for rel, st in found[:cap])
    out.truncated = truncated or len(found) > cap
    return out
