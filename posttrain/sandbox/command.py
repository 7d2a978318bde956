"""What runs in a sandboxed command's own processes: the reaper and the command itself.

What it is: the code the supervisor's pre-forked children execute (see ``supervisor.py`` for
the life cycle). :func:`run_reaper` is pid 1 of a command's pid namespace; :func:`run_command`
waits for the host's request, takes a private mount namespace with a procfs of its own and
a fresh IPC namespace, drops every capability, sets ``no_new_privs``, loads the seccomp filter, applies rlimits and
``execve``s the command. The confinement helpers here are shared with the snippet server
(``pyserver.py``).

Guarantees: the command never holds a capability, the control socket, or any fd but its
stdio; when it exits, everything else in its pid namespace is killed and reaped *before*
the status report is written.

Does not: enforce budgets (the host does, and asks the supervisor for signals), or run
Python snippets (``pyserver.py`` does).

Stdlib-only and import-light: bound read-only into the sandbox.
"""

import _signal as signal
import _socket as socket
import ctypes
import os
import resource

import wire

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
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
# Built once, at import: in a fresh fork, making the two arrays and looking ``capset`` up
# took ~0.4 ms of copy-on-write faults and dlsym (the snippet server forks a child per snippet).
_CAPSET = libc.capset
_CAP_HEADER = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
_CAP_NONE = (ctypes.c_uint32 * 6)()


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
    drop_inheritable()
    drop_held()


def drop_inheritable() -> None:
    """The half of :func:`drop_privileges` that leaves the capabilities held now: lock root
    out of regaining any (securebits) and empty the bounding and ambient sets. Both are
    inherited by every fork, so a process that forks many children pays it once (the
    snippet server: ~65 ctypes calls, about 0.6 ms in each child otherwise)."""
    libc.prctl(PR_SET_SECUREBITS, SECURE_ALL_BITS_LOCKED, 0, 0, 0)
    for cap in range(64):  # past the last capability the kernel answers EINVAL; harmless
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def drop_held() -> None:
    """The other half: no capability held (effective, permitted, inheritable), and
    ``no_new_privs``. After :func:`drop_inheritable` in this process or an ancestor."""
    check(_CAPSET(_CAP_HEADER, _CAP_NONE), "capset")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def stdio(fds: dict) -> None:
    """Make ``fds`` the process's stdio (stdin from /dev/null when none) and close the rest."""
    stdin = fds.get("stdin")
    if stdin is None:
        stdin = os.open("/dev/null", os.O_RDONLY)
    os.dup2(stdin, 0)
    os.dup2(fds["stdout"], 1)
    os.dup2(fds["stderr"], 2)
    os.closerange(3, 65536)


def private_proc(keeper: socket.socket) -> None:
    """A mount namespace of our own with a procfs of the command's pid namespace, and a
    fresh IPC namespace: no SysV message queue, semaphore or shared memory segment and no
    POSIX message queue of an earlier command, snippet or lease is reachable (by key, id or
    name), and none of this command's outlives it (the namespace dies with its last process).

    Why hand the namespace to the reaper: the namespace dies with its last reference, and
    tearing a mount namespace down waits for an RCU grace period (milliseconds on a busy
    host). The reaper holds it and exits only after it has reported, so that cost is paid
    after the command's result is already with the host.
    """
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare(mount, ipc)")
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
        stdio(fds)
        os.chdir(req.get("cwd") or "/work")
        for name, value in (req.get("rlimits") or {}).items():
            # CPU: SIGXCPU at the soft limit, SIGKILL a second later (so the status is clear)
            resource.setrlimit(RLIMITS[name], (value, value + 1 if name == "CPU" else value))
        drop_privileges()
        filt.load()
        argv = req["argv"]
        os.execvpe(argv[0], argv, req.get("env") or {})
    except FileNotFoundError as exc:
        os.write(2, f"sandbox: {exc}\n".encode())
        os._exit(127)
    except BaseException as exc:  # noqa: BLE001 - report anything, then die
        try:
            os.write(2, f"sandbox: cannot start command: {exc}\n".encode())
        finally:
            os._exit(126)


def forward_term(*_args) -> None:
    """The kill ladder's TERM step, in a namespace's pid 1: to every process of the namespace."""
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
        signal.signal(signal.SIGTERM, forward_term)
        keep, give = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        child = os.fork()
        if child == 0:
            os.close(report_w)
            keep.close()
            run_command(zyg, give, filt)
        zyg.close()
        give.close()
        status, ru = wait_and_clear(child)
        os.write(report_w, status_report(status, ru).encode())
    except BaseException as exc:  # noqa: BLE001
        why = f"{type(exc).__name__}: {exc}".replace("\\", "/").replace('"', "'")
        os.write(report_w, ('{"error": "%s"}' % why).encode())
    os._exit(0)


def wait_and_clear(child: int) -> tuple:
    """In a pid namespace's pid 1: wait for ``child``, then kill and reap everything else."""
    while True:
        pid, status, ru = os.wait4(-1, 0)
        if pid == child:
            break
    kill_all()
    reap_all()
    return status, ru


def kill_all() -> None:
    """From a pid namespace's pid 1: SIGKILL every other process of the namespace, never us.

    Once it returns, none of them can return to user space or fork (the kernel refuses a
    fork whose parent has SIGKILL pending), so the set of processes can only shrink.
    """
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def reap_all() -> None:
    """Reap until no child is left: orphans are re-parented to pid 1 before their parent's
    status can be reaped, so this ends only when the whole namespace but us is gone."""
    while True:
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            return


def status_report(status: int, ru) -> str:
    """The one-line JSON status the host parses, from a ``wait4`` status and rusage."""
    return report(os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                  os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                  ru.ru_utime + ru.ru_stime, ru.ru_maxrss)


def report(code, sig, cpu_s: float, maxrss_kb: int) -> str:
    """The one-line JSON status the host parses (written by hand: no ``json`` import here)."""
    return '{"exit_code": %s, "signal": %s, "cpu_s": %.6f, "maxrss_kb": %d}' % (
        "null" if code is None else int(code), "null" if sig is None else int(sig),
        cpu_s, maxrss_kb)
