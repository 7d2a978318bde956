"""What each snippet runs in: the snippet server's pre-forked child (``pyserver.py``).

What it is: :func:`snippet_process` is the child the server forks for the next snippet.
It first confines itself like a command (:func:`_confine`: no capabilities,
``no_new_privs``; the fresh IPC namespace, the seccomp filter and the empty bounding set it
inherits from the server), waits for the host's request (stdio fds
arrive with it), becomes the snippet (its own session, stdio, cwd, rlimits and environment; SIGTERM and SIGINT as in
``python3 -c``), runs it with :func:`run_python`, and exits through :func:`_leave`.

Why it is shaped this way (measured on these VMs: a page fault costs 5-9 us):
- while it waits, the child rehearses a snippet on a sample (:func:`_rehearse`), taking the
  copy-on-write faults of its fresh fork (~330) before the request instead of after (~30);
- on the way out it closes every fd, leaves the server its exit note and stops itself
  (``exit_note.py``): the host's pipes see EOF, and the server reports, without waiting
  for the kernel to unmap the child's ~10 MB address space (~1 ms here).

Guarantees: the snippet never holds the host socket or any fd of the server's (all are
closed before it runs); nothing of the rehearsal stays visible (the environment is
replaced, the sample module and fds are dropped); the server forks it only once every
process of the snippet before has been reaped.

Does not: decide anything the report relies on (the server checks with the kernel).

Stdlib-only and import-light: bound read-only into the sandbox, imported by the server.
"""

import _signal as signal
import _socket as socket
import builtins
import os
import resource
import select
import sys
import types

import wire
from command import RLIMITS, drop_held, stdio

TOOK = b"r"  # child -> server, once it holds a request: a report is owed for it
REHEARSE_AFTER_S = 0.001  # a back-to-back caller's next request comes sooner (~0.3 ms)
# A typical request, for _rehearse: the keys of the host's base environment in its order
# (execspec.BASE_ENV, not importable here), its rlimits, a one-line snippet.
_SAMPLE = {"python": "x = sum(range(100))\n", "cwd": "/work", "stdin": False,
           "env": {k: "/usr/local/bin:/usr/bin:/bin" for k in (
               "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONUNBUFFERED",
               "PYTHONDONTWRITEBYTECODE", "USER", "TERM")},
           "rlimits": {"FSIZE": 1 << 28, "NOFILE": 1024, "CORE": 0, "CPU": 31}}


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


def _rehearse(sock, note) -> None:
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
    _set_environ(req["env"])
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    os.getcwd()
    if _request_waiting(sock):
        return
    exec(compile(req["python"], "<snippet>", "exec"), main.__dict__)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if note is not None:
        note.rehearse()


def _request_waiting(sock, timeout_s: float = 0.0) -> bool:
    """A request (or the host's EOF) is there to read, or arrives within ``timeout_s``."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(timeout_s * 1e3))


def _confine() -> None:
    """Before anything else in the child: no capabilities and ``no_new_privs``.

    Why the server keeps what it drops here: it needs ``CAP_SYS_ADMIN`` to give each
    snippet a fresh IPC namespace (the SysV/POSIX IPC objects of a namespace outlive the
    processes that made them, so a shared memory segment carried one attempt's answers to
    the next; and ids and keys in a reused namespace would tell a snippet how many objects
    came before) and the rest to restore its pristine state (``pristine.py``). It already
    dropped the bounding and ambient sets, locked the securebits and loaded the seccomp
    filter: all inherited, so this costs two calls (~35 us here).
    """
    drop_held()


def snippet_process(sock, took_w: int, note) -> None:
    """The pre-forked child: wait for the host's request, then become the snippet."""
    try:
        # A late TERM of the kill ladder, meant for the snippet before, must not kill this
        # one while it waits: ignored (and so discarded) until a request is taken.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _confine()
        os.setsid()
        _rehearse(sock, note)
        devnull = os.open("/dev/null", os.O_RDONLY)  # now: a path lookup, off the critical path
        req, got = wire.recv(sock)
    except BaseException:  # noqa: BLE001 - the host closed the socket: nothing to run
        os._exit(0)
    try:
        os.write(took_w, TOOK)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # as in python3 -c
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sock.close()
        names = ["stdout", "stderr"] + (["stdin"] if req.get("stdin") else [])
        stdio({"stdin": devnull, **dict(zip(names, got))})  # closes every other inherited fd
        os.chdir(req.get("cwd") or "/work")
        for name, value in (req.get("rlimits") or {}).items():
            resource.setrlimit(RLIMITS[name], (value, value + 1 if name == "CPU" else value))
        _set_environ(req.get("env") or {})
        rc = run_python(req["python"]) & 0xFF
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"sandbox: cannot start snippet: {exc}\n".encode())
        finally:
            os._exit(126)
    _leave(rc, note)


def _set_environ(env: dict) -> None:
    """Make ``env`` the environment (``os.environ`` and the C one).

    Why not always ``clear()`` first: it unsets every variable one by one (~40 us here);
    when the keys are those the rehearsal left, in the same order, overwriting the values
    ends in the same environment.
    """
    if list(os.environ) != list(env):
        os.environ.clear()
    os.environ.update(env)


def _leave(rc: int, note) -> None:
    """End: close every fd, leave the server a note and stop (``exit_note.py``). Never returns.

    Why close first: the kernel closes an exiting process's fds only after it has unmapped
    its memory, and the host's pipes must see EOF without waiting for that. The server
    answers the stop with SIGKILL; the exit after it is for a stop nobody answers.
    """
    try:
        os.closerange(0, 65536)
        if note is not None:
            note.leave(note.compose(rc))
            os.kill(os.getpid(), signal.SIGSTOP)
    finally:
        os._exit(rc)
