"""The pre-started snippet interpreter ("pyserver") and what each snippet runs in.

What it is: :func:`run_pyserver` is pid 1 of a pid namespace of its own, started by the
supervisor on the first ``run_python``. It is confined exactly like a command (private
procfs, no capabilities, ``no_new_privs``, the seccomp filter) and is not dumpable, so
nothing a snippet runs can open its memory or fds. Every snippet runs in a forked child, so
no state leaks from one snippet to the next; the supervisor restarts the server after every
remount (it holds a private copy of the old mounts).

Why it is shaped this way (measured on these VMs: a page fault costs 5-9 us, a fork of this
~10 MB interpreter 0.3-0.5 ms, and the first ``compile()`` in a process about 1 ms because
it builds the AST node types):
- the server pays the one-time costs once, before any fork (:func:`_warm_up`);
- the child for the *next* snippet is forked as soon as a report is sent, and it receives
  the host's request itself (stdio fds arrive with it), so neither the fork nor a relay
  through the server is on a snippet's critical path;
- while it waits, that child rehearses a snippet on a sample (:func:`_rehearse`), taking the
  copy-on-write faults of its fresh fork (~330) before the request instead of after (~30).
What stays on the critical path is the child's exit (the kernel unmaps its address space
before the server can reap it: ~1 ms here), because the report must follow the reaping.

Guarantees, per snippet: a fresh fork of the warmed-up server; its own session, stdio,
cwd, rlimits and environment; SIGTERM and SIGINT behave as in ``python3 -c``. The report
(exit status and resource use) is sent only after the snippet's process has exited *and*
everything else in the namespace has been killed and reaped: once the host has the result,
nothing the snippet started is running. The snippet never holds the host socket or any fd
of the server's.

Does not: enforce budgets (the host does, and asks the supervisor for signals). The CPU time
and peak memory in the report include the child's short wait for its request (well under
a millisecond; the cgroup figure the host prefers does not).

Stdlib-only and import-light: bound read-only into the sandbox, run by the supervisor.
"""

import _signal as signal
import _socket as socket
import builtins
import gc
import os
import resource
import select
import sys
import types

import wire
from command import (CLONE_NEWNS, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC,
                     PR_SET_DUMPABLE, RLIMITS, check, drop_privileges, forward_term, libc,
                     mount, status_report, stdio, wait_and_clear)

_TOOK = b"r"  # child -> server, once it holds a request: a report is owed for it
REHEARSE_AFTER_S = 0.001  # a back-to-back caller's next request comes sooner (~0.3 ms)
# A typical request, for _rehearse: the keys of the host's base environment (execspec.py,
# not importable here), its rlimits, a one-line snippet.
_SAMPLE = {"python": "x = sum(range(100))\n", "cwd": "/work", "stdin": False,
           "env": {k: "/usr/local/bin:/usr/bin:/bin" for k in (
               "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONUNBUFFERED",
               "PYTHONDONTWRITEBYTECODE", "USER", "TERM")},
           "rlimits": {"FSIZE": 1 << 28, "NOFILE": 1024, "CORE": 0, "CPU": 31}}


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
    drop_privileges()


def run_python(code: str) -> int:
    """Run ``code`` as ``__main__`` the way ``python3 -c`` would; the exit status."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    sys.argv = ["-c"]
    sys.path[0] = os.getcwd()
    rc = 0
    try:
        exec(compile(code, "<snippet>", "exec"), main.__dict__)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:  # the snippet's own failure is its output, not ours
        import traceback  # heavy (linecache, tokenize); only paid when the snippet fails

        traceback.print_exc()
        rc = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    return rc


def _rehearse(sock) -> None:
    """Walk a snippet's path once, on a sample, before the real request arrives.

    Why: a fresh fork shares every page with the server, and the first write to each (a
    refcount is a write) is a copy-on-write fault, ~5 us each on these VMs and some 300 of
    them per snippet. Taking them here, while the child waits anyway, keeps them off the
    snippet's critical path. A caller that sends its next snippet right away gains nothing
    from it (the faults are the same, the rehearsal's own work is extra), so the rehearsal
    starts only after ``REHEARSE_AFTER_S`` without a request, and each step looks first.
    Nothing of it stays visible: the environment is replaced, the module and the fds are
    dropped before the real request is read.
    """
    if _request_waiting(sock, REHEARSE_AFTER_S):
        return
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        wire.send(a, _SAMPLE, [a.fileno(), b.fileno()])
        req, got = wire.recv(b)
        for fd in got:
            os.close(fd)
    finally:
        a.close()
        b.close()
    if _request_waiting(sock):
        return
    for name in req["rlimits"]:
        resource.getrlimit(RLIMITS[name])
    os.environ.clear()
    os.environ.update(req["env"])
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    os.getcwd()
    if _request_waiting(sock):
        return
    exec(compile(req["python"], "<snippet>", "exec"), main.__dict__)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()


def _request_waiting(sock, timeout_s: float = 0.0) -> bool:
    """A request (or the host's EOF) is there to read, or arrives within ``timeout_s``."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(timeout_s * 1e3))


def _snippet_process(sock, took_w: int) -> None:
    """The pre-forked child: wait for the host's request, then become the snippet."""
    try:
        # A late TERM of the kill ladder, meant for the snippet before, must not kill this
        # one while it waits: ignored (and so discarded) until a request is taken.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.setsid()
        _rehearse(sock)
        req, got = wire.recv(sock)
    except BaseException:  # noqa: BLE001 - the host closed the socket: nothing to run
        os._exit(0)
    try:
        os.write(took_w, _TOOK)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as in python3 -c
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sock.close()
        names = ["stdout", "stderr"] + (["stdin"] if req.get("stdin") else [])
        stdio(dict(zip(names, got)))  # also closes took_w and every other inherited fd
        os.chdir(req.get("cwd") or "/work")
        for name, value in (req.get("rlimits") or {}).items():
            resource.setrlimit(RLIMITS[name], (value, value + 1 if name == "CPU" else value))
        os.environ.clear()
        os.environ.update(req.get("env") or {})
        os._exit(run_python(req["python"]) & 0xFF)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"sandbox: cannot start snippet: {exc}\n".encode())
        finally:
            os._exit(126)


def _one_snippet(sock) -> "str | None":
    """Fork the next snippet's process and wait for it; its report, or None if it took none."""
    took_r, took_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(took_r)
        _snippet_process(sock, took_w)
    os.close(took_w)
    try:
        status, ru = wait_and_clear(child)
        took = os.read(took_r, 1) == _TOOK  # every writer is gone: this never blocks
    finally:
        os.close(took_r)
    return status_report(status, ru) if took else None


def run_pyserver(sock, filt) -> None:
    """The snippet server (see the module docstring). Never returns."""
    try:
        _confine(sock)
        filt.load()
        check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
        _warm_up()
    except BaseException:  # noqa: BLE001
        os._exit(1)
    while True:
        try:
            report = _one_snippet(sock)
        except BaseException:  # noqa: BLE001 - e.g. no fork: we cannot tell which request is
            os._exit(0)  # owed a report, so leave; the host sees EOF and restarts us on demand
        if report is None:  # the host is gone (or the child died before it took a request)
            os._exit(0)
        try:
            sock.send(report.encode())
        except OSError:
            os._exit(0)
