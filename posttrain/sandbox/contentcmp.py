"""Bounded reads of files in a sandbox-controlled tree: digests and content comparison.

What it is: :func:`digest` gives a file's SHA-256 (and its text when small), :func:`same`
tells whether two files hold the same bytes; both read through an fd opened from an open
directory fd with ``O_NOFOLLOW | O_NONBLOCK`` and checked to be the regular file that was
listed (same inode), in 1 MiB chunks charged to a :class:`treewalk.Budget`.

Why it looks at holes: a policy can make sixteen 256 MiB sparse files in no time; reading
them whole cost 11 s and 512 MiB of host memory. Here files over ``hash_max_file`` get no
digest; two big files are compared by size first, then only over the union of their data
extents (``SEEK_DATA``/``SEEK_HOLE``): where both are holes both read as zeros, so two
sparse files compare in microseconds. Memory is one chunk per side, whatever the size.

Guarantees: never follows a link, never blocks on a FIFO, never reads a device; every byte
read is charged (``TreeLimitExceeded("byte_limit")`` past the budget).

Does not: hash files over ``hash_max_file`` (``sha256`` is then ``None``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat

from .treewalk import Budget

CHUNK = 1 << 20
_ZEROS = bytes(CHUNK)
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _open(dir_fd: int, name: str, st: os.stat_result) -> int:
    fd = os.open(name, _OPEN, dir_fd=dir_fd)
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise PermissionError(f"{name!r} changed while it was being compared")
    return fd


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """[(start, end)] of the data regions of an open file (the whole file if unsupported)."""
    out, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole remains
                break
            return [(0, size)]
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        out.append((start, end))
        pos = end
    return out


def _union(a: list, b: list) -> list[tuple[int, int]]:
    merged: list = []
    for start, end in sorted(a + b):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def digest(dir_fd: int, name: str, st: os.stat_result, budget: Budget,
           text_cap: int) -> tuple[str | None, str | None]:
    """(sha256 hex or None when over ``hash_max_file``, UTF-8 text when size <= text_cap)."""
    if st.st_size > budget.limits.hash_max_file:
        return None, None
    fd = _open(dir_fd, name, st)
    try:
        h, pos, head, keep = hashlib.sha256(), 0, [], st.st_size <= text_cap
        for start, end in _extents(fd, st.st_size) + [(st.st_size, st.st_size)]:
            while pos < start:  # a hole: zeros, hashed without reading
                n = min(CHUNK, start - pos)
                budget.read(n)
                h.update(_ZEROS[:n])
                head += [_ZEROS[:n]] if keep else []
                pos += n
            while pos < end:
                data = os.pread(fd, min(CHUNK, end - pos), pos)
                if not data:
                    break
                budget.read(len(data))
                h.update(data)
                head += [data] if keep else []
                pos += len(data)
    finally:
        os.close(fd)
    text = None
    if keep:
        try:
            text = b"".join(head).decode("utf-8")
        except UnicodeDecodeError:
            text = None
    return h.hexdigest(), text


def same(a: tuple, b: tuple, budget: Budget) -> bool:
    """Whether files ``a`` and ``b`` (each ``(dir_fd, name, lstat)``) hold the same bytes."""
    (a_dir, a_name, a_st), (b_dir, b_name, b_st) = a, b
    if a_st.st_size != b_st.st_size:
        return False
    fa = _open(a_dir, a_name, a_st)
    try:
        fb = _open(b_dir, b_name, b_st)
        try:
            size = a_st.st_size
            for start, end in _union(_extents(fa, size), _extents(fb, size)):
                for pos in range(start, end, CHUNK):
                    n = min(CHUNK, end - pos)
                    budget.read(2 * n)
                    if os.pread(fa, n, pos) != os.pread(fb, n, pos):
                        return False
            return True
        finally:
            os.close(fb)
    finally:
        os.close(fa)
