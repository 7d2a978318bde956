"""Per-sandbox cgroups: memory, process count and CPU quotas, accounting, and tree kill.

What it is: :func:`detect` finds which cgroup controllers this host lets us use (cgroup v1
hierarchies, the v2 unified tree, or both, as on these machines), by creating and removing a
probe group under our *own* cgroup (so sandboxes stay inside whatever budget the harness
itself runs in). :class:`Cgroup` is one sandbox's set of groups.

Guarantees:
- every limit that cannot be applied is recorded in ``CgroupSupport.missing`` with the reason,
  and the sandbox reports it (``IsolatedSandbox.degraded``) instead of silently running without;
- :meth:`Cgroup.kill_all` kills every process in the sandbox, including ones that
  double-forked or called ``setsid`` (v2 ``cgroup.kill`` when the sandbox is in the v2 tree,
  else v1 freezer: freeze, kill, thaw, so a fork bomb cannot outrun the kill). On hybrid
  hosts like these the sandbox joins the v2 tree only when it needs it (a v2 controller, or
  no v1 freezer): joining costs an RCU grace period per sandbox start;
- :meth:`Cgroup.destroy` leaves no group behind, or raises ``SandboxError``;
- group names carry the owner's pid and start time, and :func:`detect` (once per process)
  removes the groups of owners that are gone (a SIGKILLed harness cannot ``destroy``).

Does not: limit disk I/O bandwidth, or account for kernel memory outside the memory
controller.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from posttrain.core.errors import SandboxError

from . import hostdirs

PREFIX = "posttrain-sbx-"
_V1_WANTED = ("memory", "pids", "cpu", "cpuacct", "freezer")
_counter = itertools.count()
_lock = threading.Lock()
_cached: "CgroupSupport | None" = None


@dataclass(frozen=True)
class CgroupSupport:
    """Which controllers are usable: name -> parent directory; ``missing``: name -> reason."""

    parents: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    unified: str | None = None  # v2 parent directory (for cgroup.kill / membership)

    def has(self, name: str) -> bool:
        return name in self.parents


def _mounts() -> dict:
    """controller name -> mount point, and 'unified' -> the cgroup2 mount."""
    found: dict = {}
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fstype, _src, opts = (right.split() + ["", "", ""])[:3]
            mnt = left.split()[4]
            if fstype == "cgroup2":
                found.setdefault("unified", mnt)
            elif fstype == "cgroup":
                for opt in opts.split(","):
                    if opt in _V1_WANTED:
                        found.setdefault(opt, mnt)
    return found


def _own_paths() -> dict:
    """hierarchy key -> our cgroup path within it ('' key for v2)."""
    paths = {}
    with open("/proc/self/cgroup") as fh:
        for line in fh:
            _hid, ctrls, path = line.rstrip("\n").split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                paths[c] = path
    return paths


def _probe(parent: str) -> str | None:
    probe = os.path.join(parent, f"{PREFIX}probe-{hostdirs.stamp()}-{next(_counter)}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
        return None
    except OSError as exc:
        return f"cannot create a group under {parent}: {exc.strerror}"


def detect(refresh: bool = False) -> CgroupSupport:
    """Probe the host once (cached): which controllers can we create groups in?"""
    global _cached
    with _lock:
        if _cached is not None and not refresh:
            return _cached
        mounts, own = _mounts(), _own_paths()
        parents, missing = {}, {}
        for name in _V1_WANTED:
            if name not in mounts:
                missing[name] = "controller not mounted as cgroup v1"
                continue
            parent = os.path.join(mounts[name], own.get(name, "/").lstrip("/"))
            why = _probe(parent)
            (missing.__setitem__(name, why) if why else parents.__setitem__(name, parent))
        unified = None
        if "unified" in mounts:
            parent = os.path.join(mounts["unified"], own.get("", "/").lstrip("/"))
            if _probe(parent) is None:
                unified = parent
                _adopt_v2_controllers(parent, parents, missing)
        _cached = CgroupSupport(parents, missing, unified)
        sweep(_cached)
        return _cached


def sweep(support: CgroupSupport) -> list[str]:
    """Remove the groups of harness processes that are gone (a SIGKILLed harness cannot
    run ``destroy``). Names carry the owner's pid and start time (``hostdirs.stamp``); a
    group whose owner runs is never touched. Processes left in a dead owner's group are
    its sandbox's, and are killed. Only the parents we use are swept (a harness that ran
    in another cgroup left its groups there)."""
    removed = []
    for parent in set(support.parents.values()) | ({support.unified} - {None}):
        try:
            names = [n for n in os.listdir(parent) if n.startswith(PREFIX)]
        except OSError:
            continue
        for name in names:
            rest = name[len(PREFIX):]
            owner = hostdirs.parse_stamp(rest[len("probe-"):] if rest.startswith("probe-") else rest)
            if owner is None or hostdirs.owner_alive(*owner):
                continue
            path = os.path.join(parent, name)
            if _remove_orphan(path):
                removed.append(path)
    return removed


def _remove_orphan(path: str) -> bool:
    for _ in range(50):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return False
        except OSError:
            try:
                pids = [int(p) for p in _read(f"{path}/cgroup.procs").split()]
            except OSError:
                return False
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)
    return False


def _wants_unified(support: CgroupSupport) -> bool:
    """Join the v2 tree only for what v1 does not give: a v2 controller, or a tree kill when
    there is no v1 freezer. Why not always: moving a process into a v2 group takes the
    kernel's global threadgroup lock, an RCU grace period (2-15 ms here) per sandbox start."""
    return support.unified is not None and (support.unified in support.parents.values()
                                            or "freezer" not in support.parents)


def _adopt_v2_controllers(parent: str, parents: dict, missing: dict) -> None:
    """On a v2-only host, use the controllers delegated to our subtree."""
    try:
        enabled = Path(parent, "cgroup.subtree_control").read_text().split()
    except OSError:
        return
    for name, v2 in (("memory", "memory"), ("pids", "pids"), ("cpu", "cpu"), ("cpuacct", "cpu")):
        if name not in parents and v2 in enabled:
            parents[name] = parent
            missing.pop(name, None)


def _write(path: str, value: str) -> None:
    """One write(2) to a control file (a dozen per sandbox start: no buffered file object)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


class Cgroup:
    """The groups of one sandbox. Create, :meth:`add` its first process, use, :meth:`destroy`."""

    def __init__(self, support: CgroupSupport, *, memory_bytes: int | None,
                 pids: int | None, cpus: float | None):
        self.support = support
        self.name = f"{PREFIX}{hostdirs.stamp()}-{next(_counter)}"  # owner stamp: see sweep
        self.dirs: dict = {}
        self.notes: list = []
        self._stat_fds: dict = {}  # counters read around every command: kept open, pread
        try:
            for ctrl, parent in support.parents.items():
                path = os.path.join(parent, self.name)
                if path not in self.dirs.values():  # co-mounted controllers share a directory
                    os.mkdir(path)
                self.dirs[ctrl] = path
            if _wants_unified(support):
                path = os.path.join(support.unified, self.name)
                if path not in self.dirs.values():
                    os.mkdir(path)
                self.dirs["unified"] = path
            self._limit(memory_bytes, pids, cpus)
        except OSError as exc:
            self.destroy()
            raise SandboxError(f"cannot set up cgroups: {exc}") from exc

    def _v2(self, ctrl: str) -> bool:
        return self.dirs.get(ctrl) == self.dirs.get("unified")

    def _limit(self, memory_bytes, pids, cpus) -> None:
        if memory_bytes and "memory" in self.dirs:
            d = self.dirs["memory"]
            if self._v2("memory"):
                _write(f"{d}/memory.max", str(memory_bytes))
                _write(f"{d}/memory.swap.max", "0")
            else:
                _write(f"{d}/memory.limit_in_bytes", str(memory_bytes))
                if os.path.exists(f"{d}/memory.memsw.limit_in_bytes"):
                    _write(f"{d}/memory.memsw.limit_in_bytes", str(memory_bytes))
        if pids and "pids" in self.dirs:
            _write(f"{self.dirs['pids']}/pids.max", str(pids))
        if cpus and "cpu" in self.dirs:
            d, period = self.dirs["cpu"], 100_000
            if self._v2("cpu"):
                _write(f"{d}/cpu.max", f"{int(cpus * period)} {period}")
            else:
                _write(f"{d}/cpu.cfs_period_us", str(period))
                _write(f"{d}/cpu.cfs_quota_us", str(int(cpus * period)))

    def v1_dirs(self) -> list[str]:
        """The groups in cgroup v1 hierarchies (a process can join them itself: ``tasks``)."""
        return sorted(set(self.dirs.values()) - {self.dirs.get("unified")})

    def add(self, pid: int, skip=()) -> None:
        """Move ``pid`` into every group but ``skip`` (its future children follow)."""
        for path in set(self.dirs.values()) - set(skip):
            _write(f"{path}/cgroup.procs", str(pid))

    def _stat(self, path: str) -> str:
        """A counter file's current text. Why pread on a kept fd: these are read twice per
        command, and open+read+close through ``open()`` costs ~40 us here against ~3 us."""
        fd = self._stat_fds.get(path)
        if fd is None:
            fd = self._stat_fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        return os.pread(fd, 4096, 0).decode()

    def cpu_s(self) -> float | None:
        d = self.dirs.get("cpuacct")
        if d is None:
            return None
        if self._v2("cpuacct"):
            for line in self._stat(f"{d}/cpu.stat").splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6
            return None
        return int(self._stat(f"{d}/cpuacct.usage")) / 1e9

    def oom_kills(self) -> int:
        d = self.dirs.get("memory")
        if d is None:
            return 0
        name = "memory.events" if self._v2("memory") else "memory.oom_control"
        for line in self._stat(f"{d}/{name}").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def pids(self) -> list[int]:
        for key in ("unified", "pids", "memory", "freezer"):
            if key in self.dirs:
                try:
                    return [int(x) for x in _read(f"{self.dirs[key]}/cgroup.procs").split()]
                except FileNotFoundError:
                    return []
        return []

    def kill_all(self) -> None:
        """SIGKILL every process in the sandbox, forks in flight included."""
        if "unified" in self.dirs and os.path.exists(f"{self.dirs['unified']}/cgroup.kill"):
            _write(f"{self.dirs['unified']}/cgroup.kill", "1")
            return
        frozen = "freezer" in self.dirs
        if frozen:
            _write(f"{self.dirs['freezer']}/freezer.state", "FROZEN")
        try:
            for _ in range(100):
                pids = self.pids()
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                if frozen:
                    break
        finally:
            if frozen:
                _write(f"{self.dirs['freezer']}/freezer.state", "THAWED")

    def destroy(self, timeout: float = 5.0) -> None:
        """Remove every group, killing stragglers first; raises if one cannot be removed."""
        deadline = time.monotonic() + timeout
        for fd in self._stat_fds.values():
            os.close(fd)
        self._stat_fds = {}
        for path in sorted(set(self.dirs.values())):
            while True:
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        raise SandboxError(f"cannot remove cgroup {path}: {exc}") from exc
                    self.kill_all()
                    time.sleep(0.005)
        self.dirs = {}
