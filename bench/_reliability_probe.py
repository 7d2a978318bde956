"""What the soak and the chaos loop read off the host: a process tree, its resources, leftovers.

What it is: plain readers of ``/proc`` (no psutil: it is not a dependency), a robust slope fit,
and the host-side leftovers a sandbox can leave (stamped directories in ``/dev/shm`` and the
temp dir, see ``posttrain/sandbox/hostdirs.py``).

Guarantees: every reader tolerates processes that exit while being read (a vanished pid counts
as absent, never as an error); a process is identified by (pid, start time), so a recycled pid
is never mistaken for one seen before; :func:`theil_sen` is the median of pairwise slopes, so
one spike (a producer thread that starts and ends, a GC pause) does not make a flat series
look like growth, while a steady leak of any size shows in full.

Does not: read processes of other users (their ``/proc`` files are closed to us: counted as
absent), or see inside a sandbox's pid namespace beyond what the host's ``/proc`` shows (all
of it, from the host side).
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

Proc = tuple[int, int]  # (pid, start time in clock ticks): a process, never a recycled pid


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, start time, comm) of ``pid`` or None when it is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    close = data.rindex(b")")  # comm may hold spaces and ')'
    comm = data[data.index(b"(") + 1:close].decode(errors="replace")
    fields = data[close + 2:].split()
    return int(fields[1]), int(fields[19]), comm


def all_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def tree(root: int) -> dict[int, tuple[int, str, int]]:
    """``{pid: (start, comm, ppid)}`` of ``root`` and every live descendant."""
    parent: dict[int, int] = {}
    info: dict[int, tuple[int, str, int]] = {}
    for pid in all_pids():
        st = _stat(pid)
        if st is not None:
            parent[pid], info[pid] = st[0], (st[1], st[2], st[0])
    if root not in info:
        return {}
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        out[pid] = info[pid]
        todo.extend(children.get(pid, ()))
    return out


def alive(proc: Proc) -> bool:
    st = _stat(proc[0])
    return st is not None and st[1] == proc[1]


def cmdline(pid: int) -> list[str]:
    try:
        return [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []


def _status_field(pid: int, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def tree_resources(root: int) -> dict[str, float]:
    """RSS (MiB), open fds, threads and processes summed over ``root``'s tree, and its live
    isolated sandboxes: bubblewrap processes whose parent is not bubblewrap (a sandbox is an
    outer bwrap and the inner one it forks as the namespace's init)."""
    procs = tree(root)
    comm = {pid: c for pid, (_, c, _) in procs.items()}
    return {"rss_mb": sum(_status_field(p, "VmRSS") for p in procs) / 1024.0,
            "fds": float(sum(_fd_count(p) for p in procs)),
            "threads": float(sum(_status_field(p, "Threads") for p in procs)),
            "processes": float(len(procs)),
            "live_sandboxes": float(sum(1 for _, c, ppid in procs.values()
                                        if c == "bwrap" and comm.get(ppid) != "bwrap"))}


def dir_bytes(path: Path) -> int:
    """Bytes of the regular files under ``path`` (never through a link; vanished files skipped)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if not os.path.islink(os.path.join(dirpath, name)):
                total += st.st_size
    return total


def stamped_dirs(bases: list[str], owners: set[int] | None = None) -> list[str]:
    """Entries of ``bases`` named ``posttrain-*<pid>-<start>-*`` (hostdirs' stamps), optionally
    only those whose stamped pid is in ``owners``; paths."""
    out = []
    for base in bases:
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            if not name.startswith("posttrain"):
                continue
            pid = next((int(p) for p in name.split("-") if p.isdigit()), None)
            if owners is None or pid in owners:
                out.append(os.path.join(base, name))
    return out


def theil_sen(ts: list[float], ys: list[float]) -> float:
    """Median of the slopes between every pair of samples (0.0 with fewer than two)."""
    slopes = [(ys[j] - ys[i]) / (ts[j] - ts[i]) for i in range(len(ts)) for j in range(i + 1, len(ts))
              if ts[j] > ts[i]]
    return statistics.median(slopes) if slopes else 0.0
