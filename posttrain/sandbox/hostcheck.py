"""Is the host left clean? Evidence a sandbox leaves nothing behind.

What it is: :func:`capture` records what a sandbox could leave on the host (the mount table,
this process's sandbox cgroups, processes carrying a marker in their environment, files
matching a marker under the usual writable places); :func:`leftovers` compares a later
capture with an earlier one and lists every difference that is ours.

Guarantees: processes are found by a marker the caller put in the command's environment, so
a double-forked or ``setsid`` orphan is found wherever it was re-parented; cgroups are found
by this process's name prefix, so parallel test workers do not see each other's.

Does not: detect changes to files it was not told about, or kernel state (keys, semaphores).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from . import cgroups

_PLACES = ("/tmp", "/dev/shm", "/var/tmp", "/root", "/run")


@dataclass(frozen=True)
class HostState:
    mounts: frozenset
    cgroups: frozenset
    marked_pids: frozenset
    marked_files: frozenset


def _mounts() -> frozenset:
    with open("/proc/self/mountinfo") as fh:
        return frozenset(" ".join(line.split()[3:5]) for line in fh)


def _cgroups() -> frozenset:
    support = cgroups.detect()
    found = set()
    for parent in set(support.parents.values()) | ({support.unified} if support.unified else set()):
        found.update(glob.glob(os.path.join(parent, f"{cgroups.PREFIX}{os.getpid()}-*")))
    return frozenset(found)


def marked_pids(marker: str) -> frozenset:
    needle = marker.encode()
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read():
                    pids.add(int(entry))
        except OSError:
            continue
    return frozenset(pids)


def _files(marker: str) -> frozenset:
    found = set()
    for place in _PLACES:
        found.update(glob.glob(os.path.join(place, f"*{marker}*")))
    return frozenset(found)


def capture(marker: str) -> HostState:
    return HostState(_mounts(), _cgroups(), marked_pids(marker), _files(marker))


def leftovers(before: HostState, after: HostState) -> list[str]:
    problems = []
    for name in ("mounts", "cgroups", "marked_pids", "marked_files"):
        extra = getattr(after, name) - getattr(before, name)
        if extra:
            problems.append(f"{name}: {sorted(map(str, extra))[:5]}")
    return problems
