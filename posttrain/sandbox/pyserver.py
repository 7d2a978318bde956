"""The pre-started snippet interpreter ("pyserver"): pid 1 of the snippets' pid namespace.

What it is: :func:`run_pyserver` is started by the supervisor on the first ``run_python``.
It runs no snippet code itself and is not dumpable, so nothing a snippet runs can open its
memory or fds. Every snippet runs in a forked child (``pychild.py``) that is confined like a
command before it reads its request: a fresh IPC namespace (no SysV or POSIX IPC object of
an earlier snippet, command or lease; the server moves itself to a new one before each
fork, :func:`_fork_next`), no capabilities, ``no_new_privs``, the seccomp filter. The server itself is under the same seccomp filter, has no bounding or ambient
capabilities and root is locked out of regaining any (securebits), but it keeps the
user-namespace capabilities it holds, for three things: creating each snippet's IPC
namespace, restoring its own pristine state (``pristine.py``) before each fork (which a
snippet of the same uid could change and every later child would inherit), and, because
the kernel refuses ``setpriority``/``sched_setscheduler``/``sched_setaffinity``/
``ioprio_set`` against a process holding capabilities the caller lacks, keeping snippets
from changing that state in the first place. The supervisor restarts the server after every remount (it holds
a private copy of the old mounts).

Why it is shaped this way (measured on these VMs: a page fault costs 5-9 us, a fork of this
~10 MB interpreter 0.3-0.5 ms, the first ``compile()`` in a process about 1 ms, and the
kernel's teardown of an exiting fork's address space about 1 ms):
- the server pays the one-time costs once, before any fork (:func:`_warm_up`);
- the child for the next snippet is forked as soon as the last one is reaped after its
  report, and it receives the host's request itself, so neither the fork nor a relay is
  on a snippet's critical path;
- the report does not wait for the teardown: a snippet that ends normally leaves a note
  (exit code, rusage; ``exit_note.py``) and stops itself; ``wait4`` reports the stop at
  once, and the server checks with the kernel whether the child can be reaped after the
  report (:func:`_finish_noted`).

Guarantees, per snippet. When the host receives a snippet's result:
- every process the snippet started has been sent SIGKILL, and every one of them except
  the snippet's own process has been reaped;
- that one, if not yet reaped, was stopped when it was killed, with every thread at a
  user-space boundary (the kernel reports a stop only then), so it runs no instruction of
  its own and no syscall of it is in progress; no other process or thread was ever in its
  namespace (so none could have continued it); what remains of its exit (unmapping its
  memory, closing any fds it still holds: it closed its own before its note) changes no
  file, since kernel AIO, which ``exit`` would wait for, is refused here. A snippet that
  started threads or processes, and any other ending (``os._exit`` or a crash in the
  snippet, a signal, a timeout), is waited for and everything reaped before the report,
  as before;
- it is reaped before the next snippet's process is forked (:func:`_fork_next`), so no
  two snippets' processes ever coexist and the last one's memory is back first.
A snippet never holds the host socket or any fd of the server's.

Does not: enforce budgets (the host does, and asks the supervisor for signals). The CPU time
and peak memory in a note are the snippet process's own account (``getrusage``; the host
prefers the cgroup's CPU time) and include the child's short wait for its request.

Stdlib-only and import-light: bound read-only into the sandbox, run by the supervisor.
"""

import _signal as signal
import gc
import os
import types

from command import (CLONE_NEWIPC, CLONE_NEWNS, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC,
                     PR_SET_DUMPABLE, check, drop_inheritable, forward_term, kill_all, libc,
                     mount, reap_all, report, status_report)
from pristine import Pristine
from pychild import TOOK, snippet_process

_LAST_PID: list = []  # the server's fd of /proc/sys/kernel/ns_last_pid, once opened


def _warm_up() -> None:
    """Pay in the server, once, what every snippet would otherwise pay after its fork.

    The first ``compile()`` builds the AST types: a snippet child doing it itself took ~340
    page faults and 3.6 ms here, against ~170 and 1.0 ms once the server had. ``gc.freeze()``
    moves every inherited object out of the collector's generations, so the collections a
    busy snippet triggers never walk (and so copy) the server's heap. ``malloc_trim`` hands
    back the heap the supervisor freed (after a 4 MiB ``write_file``: 8.9 -> 4.5 MiB of
    anonymous memory), which every fork would otherwise copy the page tables of and every
    exit unmap.
    """
    main = types.ModuleType("__main__")
    exec(compile("pass", "<warm-up>", "exec"), main.__dict__)
    gc.freeze()
    try:
        libc.malloc_trim(0)
    except AttributeError:  # not glibc
        pass


def _confine(sock) -> None:
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    signal.signal(signal.SIGTERM, forward_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    drop_inheritable()  # capabilities still held: see the module docstring


def _one_snippet(sock, note, pending: "int | None", pristine) -> tuple:
    """Fork the next snippet's process and see it through.

    ``pending``: the last snippet's process, still to reap. Returns (this one's report, or
    None if it took no request; its pid if it is left to reap the same way, else None).
    A pid is left only under :func:`_finish_noted`'s conditions. ``pristine``: the server's
    recorded state (``pristine.py``).
    """
    child, took_r = _fork_next(sock, note, pending, pristine)
    try:
        left, ended = _await(child, note)
        if left is not None:
            return report(left[0], None, left[1], left[2]), _finish_noted(child)
        kill_all()
        reap_all()
        took = os.read(took_r, 1) == TOOK  # every writer is gone: this never blocks
    finally:
        os.close(took_r)
    return (status_report(*ended) if took else None), None


def _fork_next(sock, note, pending: "int | None", pristine) -> tuple:
    """Restore the server's pristine state and move it to a fresh IPC namespace, reap
    ``pending`` (the last snippet's killed process), then fork the next child.

    Why the first two here: every process of the last snippet is gone, or stopped and
    killed, so nothing can change the state again; the child inherits both (no IPC object
    of the last snippet is reachable from the new namespace, and the old one dies with the
    last snippet's process); and done before the wait, their ~0.3 ms overlap the kernel's
    teardown of that process instead of adding to a back-to-back snippet's latency. Why
    the rest in this order: no two snippets' processes ever coexist, the last one's memory
    is back before the next fork, and a fork overlapping a teardown was measured to take
    1.7 ms here instead of 0.4 (both walk the same shared pages); the teardown overlaps the
    host's turnaround instead.
    """
    pristine.restore()
    check(libc.unshare(CLONE_NEWIPC), "unshare(ipc)")
    if pending is not None:
        os.waitpid(pending, 0)
    took_r, took_w = os.pipe()
    if note is not None:
        note.clear()
    child = os.fork()
    if child == 0:
        os.close(took_r)
        snippet_process(sock, took_w, note)
    os.close(took_w)
    return child, took_r


def _await(child: int, note) -> tuple:
    """((exit code, CPU seconds, peak RSS), None) once the child has stopped with a note, or
    (None, (wait status, rusage)) once it has exited. Orphans (re-parented to us) are reaped
    as they exit; a stop without a note is waited out, as ``python3 -c`` would stay stopped."""
    flags = os.WUNTRACED if note is not None else 0
    if note is not None:
        _rehearse_noted(child, note)
    while True:
        pid, status, ru = os.wait4(-1, flags)
        if pid != child:
            continue
        if not os.WIFSTOPPED(status):
            return None, (status, ru)
        left = note.read(child)
        if left is not None:
            return left, None


def _rehearse_noted(child: int, note) -> None:
    """The server's path from a noted stop to its report, on a sample and without effects.

    Why: after a fork every page is write-protected, so the first write to each (a refcount
    is a write) faults; taking those faults now, while the child waits for its request,
    keeps them off the snippet's critical path (as ``pychild._rehearse`` does for the child).
    """
    left = note.parse(b"d %d 0 0.000100 10000\n" % child, child)
    note.read(child)  # the page is clear: no note yet
    os.kill(child, 0)
    if _ns_last_pid() is not None:
        report(left[0], None, left[1], left[2]).encode()


def _finish_noted(child: int) -> "int | None":
    """After a noted stop: SIGKILL the child; then, if no other process or thread was ever
    in the namespace beside it, leave it to be reaped after the report (its pid); else kill
    and reap everything now.

    What this relies on is the kernel's: the stop is reported once every thread of the
    child is stopped at a user-space boundary (no syscall in progress), a stopped task runs
    again only on SIGCONT (which only another process of the namespace could have sent) or
    SIGKILL (which ends it without it running), and no pid allocated after the child's own
    means no other process or thread, alive or gone, ever shared the namespace with it.
    Why not accept a namespace that is merely empty now: a process gone by then could have
    sent the child SIGCONT after its stop was reported.
    """
    os.kill(child, signal.SIGKILL)
    if _ns_last_pid() == child:
        return child
    kill_all()
    reap_all()
    return None


def _ns_last_pid() -> "int | None":
    """The last pid allocated in this pid namespace (threads take pids too)."""
    try:
        return int(os.pread(_LAST_PID[0], 32, 0))
    except (OSError, ValueError, IndexError):
        return None


def run_pyserver(sock, filt) -> None:
    """The snippet server (see the module docstring). Never returns."""
    try:
        _confine(sock)
        filt.load()  # it lets unshare(CLONE_NEWIPC) through: _fork_next needs it
        check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
        note = _start_notes()
        _warm_up()
        pristine = Pristine()
    except BaseException:  # noqa: BLE001
        os._exit(1)
    pending = None
    while True:
        try:
            line, pending = _one_snippet(sock, note, pending, pristine)
        except BaseException:  # noqa: BLE001 - e.g. no fork: we cannot tell which request is
            os._exit(0)  # owed a report, so leave; the host sees EOF and restarts us on demand
        if line is None:  # the host is gone (or the child died before it took a request)
            os._exit(0)
        try:
            sock.send(line.encode())
        except OSError:
            os._exit(0)


def _start_notes():
    """The exit note and what it relies on (AIO refused, ns_last_pid readable), or None."""
    import exit_note  # here, not at the top: the supervisor imports this module at its start

    if not exit_note.ENABLED:
        return None
    try:
        _LAST_PID.append(os.open("/proc/sys/kernel/ns_last_pid", os.O_RDONLY))
    except OSError:
        return None
    exit_note.deny_aio()
    return exit_note.ExitNote()
