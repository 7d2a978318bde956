"""What the harness stages on the host: owner-only, stamped with its owner, swept when dead.

What it is: :func:`make_dir` creates a host directory (mode 0700) whose name carries the
creating process's pid and start time (``<prefix><pid>-<start>-<random>``); :func:`owner_alive`
tells whether such a stamp's process still runs; :func:`sweep` removes the directories of
owners that are gone. ``cgroups.sweep`` uses the same stamps for cgroup names.

Why: ``atexit`` does not run in a forked child that ``os._exit``s, nor after SIGKILL, and each
such exit used to leave a cache directory in ``/dev/shm`` (hidden tests included). The start
time tells a dead owner from a new process that reuses its pid.

Guarantees: :func:`sweep` removes only plain directories (never through a link) that match
the prefix, are owned by us (or by ``extra_uids``) and whose stamped owner is not running;
a live owner's directory is never touched; errors are swallowed (a sweep never fails the
start that runs it).

Does not: sweep places it was not pointed at, or anything without a stamp it can parse
(names from before stamps carry only a pid: those are removed when that pid is not running);
tell owners apart across pid namespaces: a harness in another pid namespace that shares this
``/dev/shm`` would look dead (harnesses sharing a ``/dev/shm`` must share a pid namespace).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile

_start_cache: dict[int, int | None] = {}


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/pid/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and ')': split after its last ')'
    return int(data[data.rindex(b")") + 2:].split()[19])


def stamp() -> str:
    """``<pid>-<start>`` of this process (recomputed after a fork: the pid changes)."""
    pid = os.getpid()
    if pid not in _start_cache:
        _start_cache[pid] = start_time(pid)
    return f"{pid}-{_start_cache[pid]}"


def owner_alive(pid: int, start: int | None) -> bool:
    now = start_time(pid)
    return now is not None and (start is None or now == start)


def parse_stamp(rest: str) -> tuple[int, int | None] | None:
    """(pid, start or None) from the part of a name after its prefix; None if unparsable."""
    parts = rest.split("-")
    if not parts or not parts[0].isdigit():
        return None
    if len(parts) >= 2 and parts[1].isdigit() and len(parts) >= 3:
        return int(parts[0]), int(parts[1])
    return int(parts[0]), None


def make_dir(prefix: str, base: str | None = None) -> str:
    """A new 0700 directory ``<base>/<prefix><pid>-<start>-<random>``."""
    path = tempfile.mkdtemp(prefix=f"{prefix}{stamp()}-", dir=base)
    os.chmod(path, 0o700)
    return path


def sweep(base: str, prefix: str, extra_uids=()) -> list[str]:
    """Remove ``base/<prefix>*`` directories whose owner process is gone; the removed paths."""
    removed = []
    uids = {os.geteuid(), *extra_uids}
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix):
            continue
        owner = parse_stamp(name[len(prefix):])
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (owner is None or not stat.S_ISDIR(st.st_mode) or st.st_uid not in uids
                or owner_alive(*owner)):
            continue
        shutil.rmtree(path, ignore_errors=True)  # fd-based: never follows a link inside
        if not os.path.lexists(path):
            removed.append(path)
    return removed
