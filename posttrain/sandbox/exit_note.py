"""The note a snippet's process leaves the snippet server as it ends (``pyserver.py``).

What it is: one page of memory the server shares with the child it forks next. A snippet
that ends normally writes its exit code and resource use there (:meth:`ExitNote.leave`),
then stops itself (``SIGSTOP``) instead of exiting; the server, told by ``wait4`` that the
child has stopped, reads the note, kills the child and reports (``pyserver._finish_noted``).

Why: the kernel unmaps an exiting process's address space (about 1 ms for a forked ~10 MB
interpreter on these VMs) before it closes the process's fds and before the parent can reap
it, so a report that waits for the reaping waits for that. A stopped process is as inert as
a dead one (the kernel reports the stop only once every thread is stopped at a user-space
boundary, so no syscall of it is in progress; a SIGKILL then ends it without it running
another instruction), and the stop is reported at once; the note carries what the reaping
would have told (exit code, rusage).

Guarantees: the server acts on a note only if it is well formed and names the child it
forked; the whole page is rewritten before each fork, so no note of an earlier child counts
and nothing a snippet wrote here reaches the next one. Kernel AIO is refused in the snippet
server (:func:`deny_aio`): ``exit`` waits for in-flight AIO in the teardown that is no
longer waited for.

Does not: authenticate the note. The snippet runs in the writing process and can forge it,
which gains it nothing: its exit code is its own anyway, the CPU time and peak memory are
what the process says (the host prefers the cgroup's CPU time, and no budget is enforced
from these figures), and the stop that makes the server read it ends the snippet. Only
x86_64 and aarch64 have the syscall numbers for :func:`deny_aio`; elsewhere ``ENABLED`` is
false and the server always waits for the reaping.

Stdlib-only and import-light: bound read-only into the sandbox, imported by the server.
"""

import os
import resource

from command import Filter

_NR = {"x86_64": {"io_setup": 206, "arch": 0xC000003E},
       "aarch64": {"io_setup": 0, "arch": 0xC00000B7}}.get(os.uname().machine)
ENABLED = _NR is not None
_TEXT_LEN = 128  # the note's text, at the start of the page


def deny_aio() -> None:
    """Stack a filter that refuses ``io_setup`` (and any foreign-architecture syscall).

    Why: without an AIO context no AIO request can be in flight when a snippet's process is
    reported before its teardown (``exit_aio`` waits for them in that teardown).
    """
    prog = [(0x20, 0, 0, 4),                       # ld [4]: seccomp_data.arch
            (0x15, 0, 2, _NR["arch"]),             # jeq native ? next : deny
            (0x20, 0, 0, 0),                       # ld [0]: seccomp_data.nr
            (0x15, 0, 1, _NR["io_setup"]),         # jeq io_setup ? deny : allow
            (0x06, 0, 0, 0x00050000 | 1),          # ret ERRNO(EPERM)
            (0x06, 0, 0, 0x7FFF0000)]              # ret ALLOW
    Filter(b"".join(code.to_bytes(2, "little") + bytes((jt, jf)) + k.to_bytes(4, "little")
                    for code, jt, jf, k in prog)).load()


class ExitNote:
    """The shared page, as the server and each child it forks see it."""

    def __init__(self):
        import mmap  # only the server needs it, once

        self.page = mmap.mmap(-1, mmap.PAGESIZE)  # anonymous MAP_SHARED: survives fork, shared
        self._fresh = bytes(mmap.PAGESIZE)

    # -- the server's side ---------------------------------------------------------------

    def clear(self) -> None:
        """Before each fork: the whole page zeroed (see the module docstring)."""
        self.page[:] = self._fresh

    def read(self, child: int) -> "tuple | None":
        """(exit code, CPU seconds, peak RSS in KiB) of ``child``'s note; None if there is none."""
        return self.parse(bytes(self.page[:_TEXT_LEN]).split(b"\0", 1)[0], child)

    @staticmethod
    def parse(text: bytes, child: int) -> "tuple | None":
        """:meth:`read`'s check of one note's text."""
        parts = text.split()
        if len(parts) != 5 or parts[0] != b"d" or not text.endswith(b"\n"):
            return None
        try:
            pid, code, cpu, rss = int(parts[1]), int(parts[2]), float(parts[3]), int(parts[4])
        except ValueError:
            return None
        if pid != child or not (0 <= code <= 255 and 0 <= cpu < 1e9 and 0 <= rss < 1 << 40):
            return None  # the comparisons also refuse nan and inf
        return code, cpu, rss

    # -- the child's side ----------------------------------------------------------------

    @staticmethod
    def compose(rc: int) -> bytes:
        """The note: pid, exit code, CPU seconds and peak RSS as ``wait4`` would have given."""
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        return b"d %d %d %.6f %d\n" % (os.getpid(), rc, cpu, max(me.ru_maxrss, kids.ru_maxrss))

    def rehearse(self) -> None:
        """:meth:`leave`'s path minus its effects (its first-use copy-on-write faults taken
        before the request; see ``pychild._rehearse``)."""
        self.compose(0)

    def leave(self, note: bytes) -> None:
        """Post ``note``; the caller stops itself right after.

        Why not also drop to ``SCHED_IDLE``, so that the teardown yields to the host: inside
        the sandbox's cpu cgroup an idle-policy task's share of a CPU follows its tiny load
        weight, so under load from other cgroups the teardown, which the next fork waits
        for, can be starved; in A/B runs it bought nothing after an idle gap.
        """
        self.page[:len(note)] = note
