"""An isolated sandbox's work tree as the host sees it: files, snapshots, rollback, diffs.

What it is: :class:`WorkTree` reads and lists files of a running sandbox's ``/work`` through
its init's root (``/proc/<pid>/root``), has the supervisor write and remove them, and drives
the overlay layer stack (``snapshots.py``): a snapshot freezes the upper layer, a restore
remounts a snapshot's layers under a fresh empty one, a diff compares two stacks by reading
the layer store through the supervisor's fd of it.

Guarantees: no path is resolved through a link planted in the sandbox (every walk goes
through ``safefs``, one ``openat`` per component, ``O_NOFOLLOW``); writes happen inside the
sandbox (by the supervisor), never by the host into sandbox-controlled directories; after a
remount no pre-forked process holds the old mounts (they are dropped and a fresh command
process is asked for). Calls are serialised by the sandbox's lock, shared with commands.

Does not: keep snapshots beyond the sandbox's life, or see files outside ``/work`` except
through snapshots and diffs (which cover ``/tmp``, home and ``/dev/shm`` too).
"""

from __future__ import annotations

import os

from posttrain.core.errors import SandboxError

from . import safefs, snapshots
from .channel import SupervisorChannel
from .result import FileChange, SnapshotId
from .treewalk import FileList, TreeLimits, list_entries


class WorkTree:
    def __init__(self, lock) -> None:
        self.lock = lock
        self.layers = snapshots.LayerStack()
        self._ch: SupervisorChannel | None = None
        self._init_pid: int | None = None
        self._supervisor_pid: int | None = None
        self._store_fd: int | None = None

    def attach(self, ch: SupervisorChannel, init_pid: int, supervisor_pid: int,
               store_fd: int) -> None:
        """Bind to the started sandbox (its init, its supervisor and the supervisor's store fd)."""
        self._ch, self._init_pid = ch, init_pid
        self._supervisor_pid, self._store_fd = supervisor_pid, store_fd

    # --- files ------------------------------------------------------------------------------

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        """Bytes of a regular file under /work (links are refused, never followed)."""
        with self.lock:
            fd = self._work_fd()
            try:
                return safefs.read_file(fd, path, max_bytes)[0]
            finally:
                os.close(fd)

    def write_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        """Atomically create or replace a file under /work (written by the supervisor)."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        safefs.split(path)
        with self.lock:
            self._live().call({"op": "write", "path": path, "mode": mode, "data": raw})

    def remove_file(self, path: str) -> None:
        with self.lock:
            self._live().call({"op": "remove", "path": path})

    def list_files(self, path: str = "", limit: int = 10_000,
                   limits: TreeLimits | None = None) -> FileList:
        """Entries under ``path`` (relative to /work), recursively, links listed not followed;
        ``truncated`` on the result when there are more than ``limit``."""
        with self.lock:
            fd = self._work_fd()
            try:
                return list_entries(fd, path, limit, limits)
            finally:
                os.close(fd)

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> SnapshotId:
        with self.lock:
            sid, req = self.layers.snapshot()
            self._remount(req)
            return sid

    def restore(self, snapshot_id: SnapshotId) -> None:
        with self.lock:
            self._remount(self.layers.restore(snapshot_id))

    def unchanged_since(self, snapshot_id: SnapshotId) -> bool:
        """True when nothing changed since ``snapshot_id`` was taken or last restored: the
        work tree is exactly that snapshot's layers under an *empty* upper layer (overlay
        records every write, copy-up, whiteout and metadata change there), and no snippet
        interpreter is running. A pool may then skip the reset (nothing to undo)."""
        with self.lock:
            ch = self._ch
            if (ch is None or ch.closed or ch.pyserver is not None
                    or self.layers.snapshots.get(snapshot_id) != self.layers.lowers):
                return False
            try:
                store = self._store()
                try:
                    upper = safefs.open_dir(store, ["l", self.layers.upper])
                finally:
                    os.close(store)
                try:
                    return not os.listdir(upper)
                finally:
                    os.close(upper)
            except OSError:
                return False

    def diff(self, since: SnapshotId, content_cap: int = 64 * 1024,
             limits: TreeLimits | None = None) -> list[FileChange]:
        """Files changed since ``since``; raises ``TreeLimitExceeded`` rather than return a
        partial list when the trees exceed ``limits``."""
        with self.lock:
            if since not in self.layers.snapshots:
                raise SandboxError(f"unknown snapshot {since!r}")
            old, new = self.layers.snapshots[since], self.layers.current()
            root = self._proc_root()
            store = self._store()
            fds: dict[str, int] = {}
            try:
                for layer in set(old) | set(new):
                    fds[layer] = (safefs.open_dir(root, [".ptbase"]) if layer == "base"
                                  else safefs.open_dir(store, ["l", layer]))
                return snapshots.diff(fds, old, new, content_cap, limits)
            finally:
                for fd in fds.values():
                    os.close(fd)
                os.close(store)
                os.close(root)

    def _remount(self, req: dict) -> None:
        """A new overlay: pre-forked processes hold private copies of the old mounts, so
        every zygote and the snippet server prepared before it are dropped (the supervisor
        kills the server) and a fresh zygote is asked for."""
        ch = self._live()
        ch.call(req)
        ch.drop_zygote()
        ch.drop_pyserver()
        ch.send_quiet({"op": "prepare"})

    # --- where things are -------------------------------------------------------------------

    def _live(self) -> SupervisorChannel:
        if self._ch is None or self._ch.closed:
            raise SandboxError("sandbox is closed")
        return self._ch

    def _proc_root(self) -> int:
        self._live()
        return os.open(f"/proc/{self._init_pid}/root", os.O_RDONLY | os.O_DIRECTORY)

    def _work_fd(self) -> int:
        root = self._proc_root()
        try:
            return safefs.open_dir(root, ["work"])
        finally:
            os.close(root)

    def _store(self) -> int:
        """The layer store: a tmpfs attached to no path, reachable only through this fd."""
        return os.open(f"/proc/{self._supervisor_pid}/fd/{self._store_fd}",
                       os.O_RDONLY | os.O_DIRECTORY)
