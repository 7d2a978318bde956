"""The in-sandbox supervisor: one long-lived process per warm isolated sandbox.

What it is: the program bubblewrap starts inside the sandbox's user, pid, net, mount, ipc and
uts namespaces. It creates the layer store (a size-capped tmpfs that is never attached to a
path), mounts the overlay work tree, then serves the host over a private socket: pre-fork the
next command, signal a running one, remount the overlay (snapshots), write files, ping.

How a command runs (why three processes): ahead of time, the supervisor ``unshare``s a fresh
pid namespace and forks its init ("reaper", pid 1 there), which forks the command process;
their request socket and status pipe are handed to the host, so an exec goes straight from
the host to the waiting command (no fork, no relay). On request the command takes a private
mount namespace with a procfs of its own pid namespace, drops every capability (bounding,
ambient, inheritable; securebits lock root out of regaining them), sets ``no_new_privs``,
loads the seccomp filter (compiled once by the host), applies rlimits and ``execve``s (or runs
a Python snippet in the already-started interpreter). When it exits, the reaper kills and
reaps everything else in the namespace, then reports: orphans, double forks and ``setsid``
daemons cannot outlive their command, and nothing the command can see can signal or ptrace
the supervisor.

Guarantees: a closed control socket (the host died) makes the supervisor exit, which tears
the whole sandbox down.

Does not: enforce wall-clock, CPU-time or output budgets (the host does that and asks for
signals), or trust anything in the requests beyond their JSON shape.

Stdlib-only: it runs under the system Python inside the sandbox, with ``-S -E``.
"""

# Imports are few and light on purpose: this process starts on every cold start.
import _signal as signal
import _socket as socket
import ctypes
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safefs  # noqa: E402  (bound next to this file inside the sandbox)
import wire  # noqa: E402

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECURE_ALL_BITS_LOCKED = 0x2F  # noroot, no_setuid_fixup, keep_caps locked (+ their locks)
STORE = {"path": None}  # the layer store: a detached tmpfs reachable only through our fd
OVERLAY_MNT = "/.ptroot"
# overlay subdirectory -> where it is bound, so /work, /tmp, home and /dev/shm all roll back.
BINDS = (("work", "/work"), ("tmp", "/tmp"), ("home", "/home/user"), ("shm", "/dev/shm"))
RLIMITS = {"CPU": resource.RLIMIT_CPU, "AS": resource.RLIMIT_AS, "NPROC": resource.RLIMIT_NPROC,
           "FSIZE": resource.RLIMIT_FSIZE, "NOFILE": resource.RLIMIT_NOFILE,
           "CORE": resource.RLIMIT_CORE, "STACK": resource.RLIMIT_STACK}

libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None) -> None:
    enc = (lambda s: s.encode() if isinstance(s, str) else s)
    _check(libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def _umount(target: str) -> None:
    libc.umount2(target.encode(), MNT_DETACH)


def _rmtree(path: str) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            full = os.path.join(root, name)
            (os.unlink if os.path.islink(full) else os.rmdir)(full)
    if os.path.isdir(path):
        os.rmdir(path)


class Filter:
    """The host-compiled seccomp BPF program, loaded with one prctl."""

    def __init__(self, program: bytes):
        class Fprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = Fprog(len(program) // 8, ctypes.addressof(self._buf))

    def load(self) -> None:
        _check(libc.prctl(22, 2, ctypes.byref(self._prog), 0, 0), "seccomp")  # SECCOMP_MODE_FILTER


def make_store(size: int) -> int:
    """A size-capped tmpfs that is never attached to any mount point (new mount API).

    Why: commands share our mount namespace; a store with no path cannot be reached or
    tampered with by them, and nothing needs unmounting per command (umount is slow: it
    waits for an RCU grace period).
    """
    sysc = libc.syscall
    fsfd = sysc(430, b"tmpfs", 1)  # fsopen(FSOPEN_CLOEXEC)
    if fsfd < 0:
        _check(-1, "fsopen(tmpfs)")
    _check(sysc(431, fsfd, 1, b"size", str(size).encode(), 0), "fsconfig(size)")
    _check(sysc(431, fsfd, 1, b"mode", b"700", 0), "fsconfig(mode)")
    _check(sysc(431, fsfd, 6, None, None, 0), "fsconfig(create)")
    mfd = sysc(432, fsfd, 1, 0)  # fsmount(FSMOUNT_CLOEXEC)
    if mfd < 0:
        _check(-1, "fsmount")
    os.close(fsfd)
    STORE["path"] = f"/proc/self/fd/{mfd}"
    os.mkdir(STORE["path"] + "/l")
    os.mkdir(STORE["path"] + "/w")
    return mfd


def _layer(name: str) -> str:
    if name == "base":
        return "/.ptbase"
    if not name.isdigit():
        raise ValueError(f"bad layer name {name!r}")
    return f"{STORE['path']}/l/{name}"


def mount_overlay(lowers: list, upper: str, drop: list) -> None:
    """(Re)mount the overlay work tree and its binds; callers ensure no command is running.

    ``lowers`` are frozen layer names, topmost first ("base" is the template); ``upper`` is a
    new, empty layer; ``drop`` names layers no snapshot refers to any more.
    """
    for _sub, dest in reversed(BINDS):
        _umount(dest)
    _umount(OVERLAY_MNT)
    for name in drop:
        _rmtree(_layer(name))
        _rmtree(f"{STORE['path']}/w/{name}")
    os.makedirs(_layer(upper))
    work = f"{STORE['path']}/w/{upper}"
    os.makedirs(work)
    opts = "lowerdir=%s,upperdir=%s,workdir=%s,userxattr" % (
        ":".join(_layer(n) for n in lowers), _layer(upper), work)
    _mount("overlay", OVERLAY_MNT, "overlay", MS_NOSUID | MS_NODEV, opts)
    for sub, dest in BINDS:
        path = os.path.join(OVERLAY_MNT, sub)
        if not os.path.isdir(path):
            os.mkdir(path)
            os.chmod(path, 0o1777 if sub in ("tmp", "shm") else 0o755)
        _mount(path, dest, None, MS_BIND | MS_REC)


def drop_privileges() -> None:
    """Irreversibly drop every capability and lock root out of regaining them."""
    libc.prctl(PR_SET_SECUREBITS, SECURE_ALL_BITS_LOCKED, 0, 0, 0)
    for cap in range(64):  # past the last capability the kernel answers EINVAL; harmless
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
    data = (ctypes.c_uint32 * 6)()
    _check(libc.capset(header, data), "capset")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


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
    import traceback
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
    _check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
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


class Supervisor:
    def __init__(self, ctl: socket.socket):
        self.ctl = ctl
        self.filter = None
        self.children: set = set()  # reapers handed to the host, not yet reaped
        self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)

    def handle(self, msg: dict, fds: list) -> None:
        op = msg.get("op")
        if op == "init":
            self.filter = Filter(msg["bpf"])
            store_fd = make_store(int(msg["store_bytes"]))
            mount_overlay(msg["lowers"], msg["upper"], [])
            wire.send(self.ctl, {"op": "ok", "store_fd": store_fd})
            self.prepare()
        elif op == "prepare":
            self.prepare()
        elif op == "forwarder":
            self.start_forwarder()
            wire.send(self.ctl, {"op": "ok"})
        elif op == "mount":
            mount_overlay(msg["lowers"], msg["upper"], msg.get("drop") or [])
            wire.send(self.ctl, {"op": "ok"})
        elif op in ("write", "remove", "mkdir"):
            self.file_op(op, msg)
            wire.send(self.ctl, {"op": "ok"})
        elif op == "ping":
            wire.send(self.ctl, {"op": "pong"})
        elif op == "signal":
            pid = int(msg["pid"])
            if pid in self.children:  # never signal a pid we have already reaped
                try:
                    os.kill(pid, int(msg["sig"]))
                except ProcessLookupError:
                    pass
        else:
            wire.send(self.ctl, {"op": "error", "message": f"unknown op {op!r}"})

    def file_op(self, op: str, msg: dict) -> None:
        root = os.open("/work", os.O_RDONLY | os.O_DIRECTORY)
        try:
            if op == "write":
                safefs.write_file(root, msg["path"], bytes(msg["data"]), int(msg.get("mode", 0o644)))
            elif op == "remove":
                safefs.remove(root, msg["path"])
            else:
                os.close(safefs.open_dir(root, safefs.split(msg["path"]), create=True))
        finally:
            os.close(root)

    def prepare(self) -> None:
        """Pre-fork the next command's reaper and process and hand their ends to the host.

        The host then talks to the command directly (request in, status report out), so an
        exec pays neither a fork nor a relay through this process.
        """
        report_r, report_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        _check(libc.unshare(CLONE_NEWPID), "unshare(pid)")
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            mine.close()
            self.ctl.close()
            run_reaper(theirs, self.filter, report_w)
        _check(libc.setns(self.own_pidns, CLONE_NEWPID), "setns(pid)")
        os.close(report_w)
        theirs.close()
        self.children.add(pid)
        try:
            wire.send(self.ctl, {"op": "zygote", "pid": pid}, [mine.fileno(), report_r])
        finally:
            mine.close()
            os.close(report_r)

    def start_forwarder(self) -> None:
        """allowlist mode: relay 127.0.0.1:3128 to the host proxy, without privileges."""
        pid = os.fork()
        if pid == 0:
            try:
                self.ctl.close()
                os.closerange(3, 65536)
                drop_privileges()
                self.filter.load()
                import forwarder

                forwarder.serve()
            finally:
                os._exit(1)
        self.children.add(pid)

    def reap(self) -> None:
        while self.children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)

    def serve(self) -> None:
        while True:
            self.reap()
            try:
                msg, fds = wire.recv(self.ctl)
            except InterruptedError:
                continue
            except EOFError:
                return
            try:
                self.handle(msg, fds)
            except Exception as exc:  # noqa: BLE001 - reported to the host, never fatal
                wire.send(self.ctl, {"op": "error", "message": f"{type(exc).__name__}: {exc}"})
            finally:
                for fd in fds:
                    wire._close(fd)


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]) if len(sys.argv) > 1 else 3)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wake recv so reapers get reaped
    Supervisor(ctl).serve()


if __name__ == "__main__":
    main()
