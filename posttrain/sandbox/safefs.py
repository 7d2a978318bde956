"""File operations on a tree the sandboxed code controls, without ever following its links.

What it is: a component-by-component walk from an already-open directory fd, each step
opened with ``O_NOFOLLOW``; the last step is opened with ``O_NOFOLLOW | O_NONBLOCK`` and
checked with ``fstat`` to be a regular file (or directory) before any byte moves. Writes go to
a fresh temporary name that is renamed over the target, so a planted hard link, symlink, FIFO
or device at the target is replaced, never written through.

Guarantees: a path with ``..``, an absolute path, a NUL byte, or any symlink on the way raises
``PermissionError``; reads never block on a FIFO and never open a device; reads are bounded
by ``max_bytes``.

Does not: protect against a concurrent writer swapping a directory between two calls (each
call walks afresh from the root fd, and every step refuses links, so a swap can only make a
call fail, never escape).

Stdlib-only: the supervisor uses it inside the sandbox for harness writes; the host uses it
for reads through ``/proc/<pid>/root``.
"""

import os
import stat

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split(path: str) -> list:
    """Validated path components of a path relative to the tree root."""
    if "\x00" in path:
        raise PermissionError(f"NUL byte in path {path!r}")
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith("/") and not path.startswith("/work"):
        raise PermissionError(f"absolute path outside the work tree: {path!r}")
    if path.startswith("/work"):
        parts = parts[1:] if parts and parts[0] == "work" else parts
    if any(p == ".." for p in parts):
        raise PermissionError(f"'..' is not allowed in sandbox paths: {path!r}")
    return parts


def open_dir(root_fd: int, parts: list, create: bool = False) -> int:
    """Open the directory ``parts`` under ``root_fd`` refusing links; caller closes the fd."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (40, 20):  # ELOOP: a symlink; ENOTDIR: not a directory
                    raise PermissionError(f"refusing to traverse {part!r}: not a plain directory") from exc
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_file(root_fd: int, path: str, max_bytes: int) -> tuple:
    """(data, truncated) of the regular file at ``path``."""
    parts = split(path)
    if not parts:
        raise IsADirectoryError(path)
    dfd = open_dir(root_fd, parts[:-1])
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dfd)
        except OSError as exc:
            if exc.errno == 40:
                raise PermissionError(f"refusing to read through a symlink: {path!r}") from exc
            raise
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PermissionError(f"not a regular file: {path!r}")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        return data[:max_bytes], len(data) > max_bytes
    finally:
        os.close(fd)


def write_file(root_fd: int, path: str, data: bytes, mode: int = 0o644) -> None:
    """Atomically replace ``path`` with ``data``, creating parent directories."""
    parts = split(path)
    if not parts:
        raise IsADirectoryError(path)
    dfd = open_dir(root_fd, parts[:-1], create=True)
    tmp = f".pt-write-{os.getpid()}-{id(data)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.rename(tmp, parts[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
    finally:
        os.close(dfd)


def remove(root_fd: int, path: str) -> None:
    """Remove a file or link (never what it points to)."""
    parts = split(path)
    dfd = open_dir(root_fd, parts[:-1])
    try:
        os.unlink(parts[-1], dir_fd=dfd)
    finally:
        os.close(dfd)
