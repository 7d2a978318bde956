"""What runs in a sandboxed command's own processes: the reaper and the command itself.

What it is: the code the supervisor's pre-forked children execute (see ``supervisor.py`` for
the life cycle). :func:`run_reaper` is pid 1 of a command's pid namespace; :func:`run_command`
waits for the host's request, takes a private mount namespace with a procfs of its own,
drops every capability, sets ``no_new_privs``, loads the seccomp filter, applies rlimits and
``execve``s the command (or runs a Python snippet in the already-started interpreter).

Guarantees: the command never holds a capability, the control socket, or any fd but its
stdio; when it exits, everything else in its pid namespace is killed and reaped *before*
the status report is written.

:func:`run_pyserver` is the pre-started snippet interpreter: pid 1 of its own pid namespace,
confined exactly like a command (private procfs, no capabilities, ``no_new_privs``, seccomp,
and not dumpable so nothing it runs can open its memory or fds); per snippet it forks, runs
the code in the child, and after the child exits kills and reaps everything else in its
namespace before reporting, like a reaper. Forking per snippet means no state leaks from one
snippet to the next; the supervisor restarts it after every remount.

Does not: enforce budgets (the host does, and asks the supervisor for signals).

Stdlib-only and import-light: bound read-only into the sandbox.
"""

import _signal as signal
import _socket as socket
import ctypes
import os
import resource
import sys

import wire

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_REC, MS_PRIVATE = 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_DUMPABLE = 4
SECURE_ALL_BITS_LOCKED = 0x2F  # noroot, no_setuid_fixup, keep_caps locked (+ their locks)
RLIMITS = {"CPU": resource.RLIMIT_CPU, "AS": resource.RLIMIT_AS, "NPROC": resource.RLIMIT_NPROC,
           "FSIZE": resource.RLIMIT_FSIZE, "NOFILE": resource.RLIMIT_NOFILE,
           "CORE": resource.RLIMIT_CORE, "STACK": resource.RLIMIT_STACK}

libc = ctypes.CDLL(None, use_errno=True)


def check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(src, target, fstype, flags, data=None) -> None:
    enc = (lambda v: v.encode() if isinstance(v, str) else v)
    check(libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
          f"mount {target}")


class Filter:
    """The host-compiled seccomp BPF program, loaded with one prctl."""

    def __init__(self, program: bytes):
        class Fprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = Fprog(len(program) // 8, ctypes.addressof(self._buf))

    def load(self) -> None:
        check(libc.prctl(22, 2, ctypes.byref(self._prog), 0, 0), "seccomp")  # SECCOMP_MODE_FILTER


def drop_privileges() -> None:
    """Irreversibly drop every capability and lock root out of regaining them."""
    libc.prctl(PR_SET_SECUREBITS, SECURE_ALL_BITS_LOCKED, 0, 0, 0)
    for cap in range(64):  # past the last capability the kernel answers EINVAL; harmless
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
    data = (ctypes.c_uint32 * 6)()
    check(libc.capset(header, data), "capset")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _stdio(fds: dict) -> None:
    stdin = fds.get("stdin")
    if stdin is None:
        stdin = os.open("/dev/null", os.O_RDONLY)
    os.dup2(stdin, 0)
    os.dup2(fds["stdout"], 1)
    os.dup2(fds["stderr"], 2)
    os.closerange(3, 65536)


def _run_python(code: str) -> int:
    import builtins
    import types

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


def private_proc(keeper: socket.socket) -> None:
    """A mount namespace of our own with a procfs of the command's pid namespace.

    Why hand the namespace to the reaper: the namespace dies with its last reference, and
    tearing a mount namespace down waits for an RCU grace period (milliseconds on a busy
    host). The reaper holds it and exits only after it has reported, so that cost is paid
    after the command's result is already with the host.
    """
    check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    fd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    try:
        keeper.sendmsg([b"n"], [(1, 1, fd.to_bytes(4, "little"))])  # SCM_RIGHTS
    finally:
        os.close(fd)
        keeper.close()


def run_command(zyg: socket.socket, keeper: socket.socket, filt) -> None:
    """The pre-forked command process: wait for a request, then set up and exec. Never returns."""
    try:
        req, got = wire.recv(zyg)
    except BaseException:  # noqa: BLE001 - the sandbox is shutting down
        os._exit(0)
    try:
        zyg.close()
        private_proc(keeper)
        names = ["stdout", "stderr"] + (["stdin"] if req.get("stdin") else [])
        fds = dict(zip(names, got))
        os.setsid()
        _stdio(fds)
        os.chdir(req.get("cwd") or "/work")
        for name, value in (req.get("rlimits") or {}).items():
            # CPU: SIGXCPU at the soft limit, SIGKILL a second later (so the status is clear)
            resource.setrlimit(RLIMITS[name], (value, value + 1 if name == "CPU" else value))
        drop_privileges()
        filt.load()
        env = req.get("env") or {}
        if req.get("python") is not None:
            os.environ.clear()
            os.environ.update(env)
            os._exit(_run_python(req["python"]) & 0xFF)
        argv = req["argv"]
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError as exc:
        os.write(2, f"sandbox: {exc}\n".encode())
        os._exit(127)
    except BaseException as exc:  # noqa: BLE001 - report anything, then die
        try:
            os.write(2, f"sandbox: cannot start command: {exc}\n".encode())
        finally:
            os._exit(126)


def _forward_term(*_args) -> None:
    """The kill ladder's TERM step: to every process of this command's namespace."""
    try:
        os.kill(-1, signal.SIGTERM)
    except ProcessLookupError:  # nothing left to signal
        pass


def run_reaper(zyg: socket.socket, filt, report_w: int) -> None:
    """pid 1 of the command's pid namespace. Never returns.

    When the command exits, every other process in the namespace is killed and reaped
    *before* the report is written: once the host has the result, nothing the command
    started is still running.
    """
    try:
        signal.signal(signal.SIGTERM, _forward_term)
        keep, give = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        child = os.fork()
        if child == 0:
            os.close(report_w)
            keep.close()
            run_command(zyg, give, filt)
        zyg.close()
        give.close()
        while True:
            pid, status, ru = os.wait4(-1, 0)
            if pid == child:
                break
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:
            try:
                os.wait4(-1, 0)
            except ChildProcessError:
                break
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else "null"
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else "null"
        report = '{"exit_code": %s, "signal": %s, "cpu_s": %.6f, "maxrss_kb": %d}' % (
            code, sig, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
        os.write(report_w, report.encode())
    except BaseException as exc:  # noqa: BLE001
        why = f"{type(exc).__name__}: {exc}".replace("\\", "/").replace('"', "'")
        os.write(report_w, ('{"error": "%s"}' % why).encode())
    os._exit(0)


def _status_report(status: int, ru) -> str:
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else "null"
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else "null"
    return '{"exit_code": %s, "signal": %s, "cpu_s": %.6f, "maxrss_kb": %d}' % (
        code, sig, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)


def _snippet_child(req: dict, fds: dict) -> None:
    try:
        os.setsid()
        _stdio(fds)
        os.chdir(req.get("cwd") or "/work")
        for name, value in (req.get("rlimits") or {}).items():
            resource.setrlimit(RLIMITS[name], (value, value + 1 if name == "CPU" else value))
        os.environ.clear()
        os.environ.update(req.get("env") or {})
        os._exit(_run_python(req["python"]) & 0xFF)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(2, f"sandbox: cannot start snippet: {exc}\n".encode())
        finally:
            os._exit(126)


def _serve_snippet(sock, req: dict, got: list) -> str:
    names = ["stdout", "stderr"] + (["stdin"] if req.get("stdin") else [])
    child = os.fork()
    if child == 0:
        sock.close()
        _snippet_child(req, dict(zip(names, got)))
    for fd in got:
        os.close(fd)
    while True:
        pid, status, ru = os.wait4(-1, 0)
        if pid == child:
            break
    try:
        os.kill(-1, signal.SIGKILL)  # pid 1: everything else in the namespace, never ourselves
    except ProcessLookupError:
        pass
    while True:
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            break
    return _status_report(status, ru)


def run_pyserver(sock: socket.socket, filt) -> None:
    """The snippet server (see the module docstring). Never returns."""
    try:
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        signal.signal(signal.SIGTERM, _forward_term)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        drop_privileges()
        filt.load()
        check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")
        import builtins  # noqa: F401 - what _run_python needs, loaded once before any fork
        import types  # noqa: F401
    except BaseException:  # noqa: BLE001
        os._exit(1)
    while True:
        try:
            req, got = wire.recv(sock)
        except BaseException:  # noqa: BLE001 - the host is gone or dropped us
            os._exit(0)
        try:
            report = _serve_snippet(sock, req, got)
        except BaseException as exc:  # noqa: BLE001
            why = f"{type(exc).__name__}: {exc}".replace("\\", "/").replace('"', "'")
            report = '{"error": "%s"}' % why
        try:
            sock.send(report.encode())
        except OSError:
            os._exit(0)
