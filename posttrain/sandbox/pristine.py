"""The snippet server's pristine process state: recorded once, restored before every fork.

What it is: :class:`Pristine` records what the snippet server (``pyserver.py``) looks like
when it starts — every resource limit, its nice value, scheduling policy and priority, CPU
affinity, I/O priority, ``oom_score_adj``, umask and working directory — and
:meth:`Pristine.restore` puts all of it back. The server calls it after the last snippet's
processes are gone and before it forks the next one, so each snippet starts from the same
state, whatever the snippets before it did.

Why it is needed although each snippet runs in a forked child: the child shares the server's
uid and sees it as pid 1, and the kernel lets a process change another of the same uid
without any capability — ``prlimit`` (a lowered ``RLIMIT_NOFILE`` made every later snippet
fail with exit 126), ``setpriority`` (also for a whole user or process group),
``sched_setscheduler``/``sched_setaffinity``, ``ioprio_set``, raising
``/proc/1/oom_score_adj`` — and every child forked later inherits the change. Three layers
stop that: seccomp refuses ``prlimit64`` on another process (a lowered hard limit could not
be raised again: that takes ``CAP_SYS_RESOURCE`` of the initial user namespace); the kernel
refuses the priority, scheduling, affinity and I/O-priority calls against a process holding
capabilities the caller lacks, and the server keeps its user-namespace capabilities while
each snippet's process drops them; and this restore undoes the rest (``oom_score_adj``)
and anything a future kernel lets through. The server's own signal dispositions, signal
mask and environment are beyond a snippet's reach (that would take ptrace, which seccomp,
the server's missing dumpable flag and its capabilities all refuse); the child resets the
dispositions it changes itself.

Guarantees: after :meth:`Pristine.restore` returns, each item above equals its recorded
value; if any cannot be restored it raises (``OSError``/``ValueError``; the server then exits, and the host
starts a fresh one from the supervisor, which no snippet can reach).

Does not: restore utilisation clamps set with ``sched_setattr`` (scheduling hints, no
limit), or stop a snippet from changing the server while that snippet runs (which can only
hurt the snippet's own run and report).

Stdlib-only and import-light: bound read-only into the sandbox, imported by the server.
"""

import ctypes
import os
import resource

_LIMITS = tuple(getattr(resource, n) for n in (
    "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_RSS",
    "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_MEMLOCK", "RLIMIT_AS", "RLIMIT_LOCKS",
    "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO", "RLIMIT_RTTIME")
    if hasattr(resource, n))
# ioprio_get/ioprio_set; IOPRIO_WHO_PROCESS = 1
_IOPRIO = {"x86_64": (252, 251), "aarch64": (31, 30)}.get(os.uname().machine)
_libc = ctypes.CDLL(None, use_errno=True)


def _ioprio_get() -> "int | None":
    if _IOPRIO is None:
        return None
    value = _libc.syscall(_IOPRIO[0], 1, 0)
    return None if value < 0 else value


class Pristine:
    """The state recorded at construction; :meth:`restore` brings it back."""

    def __init__(self):
        self.limits = tuple((r, resource.getrlimit(r)) for r in _LIMITS)
        self.nice = os.getpriority(os.PRIO_PROCESS, 0)
        self.policy = os.sched_getscheduler(0)
        self.param = os.sched_getparam(0)
        self.affinity = os.sched_getaffinity(0)
        self.ioprio = _ioprio_get()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.cwd = os.getcwd()
        self._oom = os.open("/proc/self/oom_score_adj", os.O_RDWR | os.O_CLOEXEC)
        self.oom = os.pread(self._oom, 16, 0)

    def restore(self) -> None:
        """Put every recorded item back (see the module docstring); ``OSError`` if one fails."""
        for which, value in self.limits:
            resource.setrlimit(which, value)
        os.sched_setscheduler(0, self.policy, self.param)
        os.setpriority(os.PRIO_PROCESS, 0, self.nice)
        os.sched_setaffinity(0, self.affinity)
        if self.ioprio is not None and _libc.syscall(_IOPRIO[1], 1, 0, self.ioprio) != 0:
            raise OSError(ctypes.get_errno(), "ioprio_set")
        os.pwrite(self._oom, self.oom, 0)
        os.umask(self.umask)
        os.chdir(self.cwd)
