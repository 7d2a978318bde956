"""Overlay layer bookkeeping: snapshots as frozen layers, restores as fresh uppers, and diffs.

What it is: a sandbox's ``/work`` (with ``/tmp``, home and ``/dev/shm``) is an overlay of
immutable layers under one writable upper layer. :class:`LayerStack` decides the layer lists
the supervisor mounts:

- ``snapshot()`` freezes the current upper (it becomes the topmost lower layer) and mounts a
  new empty upper: nothing is copied, so it costs one remount whatever the tree size;
- ``restore(id)`` mounts the snapshot's layers under a new empty upper; layers no snapshot
  refers to any more are deleted;
- ``diff(since=id)`` compares the two layer stacks directory by directory, entering only
  directories the differing layers touch, and resolving overlay whiteouts and opaque
  directories itself (``treediff.py``; bounded by ``TreeLimits``, linear in entries).

Guarantees: snapshot ids are opaque strings valid for the sandbox's lifetime; frozen layers
are never written (overlay only writes its upper, and commands cannot see the layer store);
every read of a layer goes from an open directory fd with ``O_NOFOLLOW`` (no link is
followed); a diff too large for its limits raises ``TreeLimitExceeded``, never a partial list.

Does not: persist snapshots beyond the sandbox (they live on its private tmpfs).
"""

from __future__ import annotations

import itertools

from posttrain.core.errors import SandboxError

from .result import FileChange
from .treediff import diff_stacks
from .treewalk import TreeLimits

MAX_DEPTH = 120  # overlay accepts up to 500 lower layers; stay well inside the option size


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


def diff(layer_fds: dict, old: tuple[str, ...], new: tuple[str, ...],
         content_cap: int = 64 * 1024, limits: TreeLimits | None = None) -> list[FileChange]:
    """Files under work/ that differ between two layer stacks (directories are not listed);
    ``layer_fds``: layer name -> open fd of its root. See :mod:`treediff`."""
    return diff_stacks(layer_fds, old, new, overlay=True, under="work", content_cap=content_cap,
                       limits=limits)
