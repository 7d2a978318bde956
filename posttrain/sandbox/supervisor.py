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

With the native front (``ptinit.c``), this process is started by ``exec`` from ptinit when the
host first needs more than commands (``--adopt``: the layer store, overlay and seccomp program
ptinit set up are taken over, same pid), and each command's reaper and process are ptinit
"zygotes" spawned into a fresh pid namespace. Python snippets run in a pre-started, already
confined interpreter ("pyserver", see ``pyserver.py``), restarted after remounts.

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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safefs  # noqa: E402  (bound next to this file inside the sandbox)
import wire  # noqa: E402
from command import Filter, check as _check, drop_privileges, libc, mount as _mount, run_reaper  # noqa: E402
from mountview import forwarder_fds, hide_host_paths  # noqa: E402
from pyserver import run_pyserver  # noqa: E402

CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
STORE = {"path": None}  # the layer store: a detached tmpfs reachable only through our fd
OVERLAY_MNT = "/.ptroot"
# overlay subdirectory -> where it is bound, so /work, /tmp, home and /dev/shm all roll back.
BINDS = (("work", "/work"), ("tmp", "/tmp"), ("home", "/home/user"), ("shm", "/dev/shm"))


def _umount(target: str) -> None:
    libc.umount2(target.encode(), MNT_DETACH)


def _rmtree(path: str) -> None:
    """Remove a dropped layer. Iterative, by ``chdir`` (why: ``os.walk`` recurses, and a
    3,000-deep tree made by a command raised RecursionError here; paths that deep also
    exceed PATH_MAX). Safe: a dropped layer is mounted nowhere, so nothing changes it."""
    if not os.path.isdir(path) or os.path.islink(path):
        return
    os.chdir(path)
    try:
        stack = [_clear_here()]  # per level: subdirectories still to remove
        while stack:
            if stack[-1]:
                os.chdir(stack[-1][-1])
                stack.append(_clear_here())
                continue
            stack.pop()
            if stack:
                os.chdir("..")
                os.rmdir(stack[-1].pop())
    finally:
        os.chdir("/")
    os.rmdir(path)


def _clear_here() -> list:
    """Unlink every non-directory in the cwd; the subdirectories' names."""
    subdirs = []
    with os.scandir(".") as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(entry.name)
            else:
                os.unlink(entry.name)
    return subdirs


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


def remount_readonly(target: str) -> None:
    """Bind-remount read-only, keeping the flags the mount already has."""
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    st = os.statvfs(target)
    for st_flag, ms_flag in ((2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, 1024),
                             (2048, 2048), (4096, 4096)):
        if st.f_flag & st_flag:
            flags |= ms_flag
    _mount(None, target, None, flags)


class Supervisor:
    def __init__(self, ctl: socket.socket):
        self.ctl = ctl
        self.filter = None
        self.children: set = set()  # reapers handed to the host, not yet reaped
        self.own_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.native = None  # ptinit path when the native front started us
        self.bpf_fd = -1
        self.pyserver = None

    def adopt(self, store_fd: int, bpf_fd: int, native: str, kids: str) -> None:
        """Take over what ptinit set up (store, overlay, read-only root) and its children."""
        os.set_inheritable(store_fd, False)
        STORE["path"] = f"/proc/self/fd/{store_fd}"
        self.filter = Filter(os.pread(bpf_fd, os.fstat(bpf_fd).st_size, 0))
        self.native, self.bpf_fd = native, bpf_fd
        self.children.update(int(k) for k in kids.split(",") if k.isdigit())
        wire.send(self.ctl, {"op": "ok", "store_fd": store_fd})

    def handle(self, msg: dict, fds: list) -> None:
        op = msg.get("op")
        if op == "init":
            self.filter = Filter(msg["bpf"])
            store_fd = make_store(int(msg["store_bytes"]))
            hide_host_paths()  # no host path in mountinfo (mountview.py); before the overlay
            mount_overlay(msg["lowers"], msg["upper"], [])
            remount_readonly("/dev")  # nothing outside the overlay may persist between tasks
            remount_readonly("/")
            wire.send(self.ctl, {"op": "ok", "store_fd": store_fd})
            self.prepare()
        elif op == "prepare":
            self.prepare()
        elif op == "forwarder":
            self.start_forwarder()
            wire.send(self.ctl, {"op": "ok"})
        elif op == "mount":
            self.stop_pyserver()  # it holds a private copy of the old mounts
            mount_overlay(msg["lowers"], msg["upper"], msg.get("drop") or [])
            wire.send(self.ctl, {"op": "ok"})
        elif op == "pyserver":
            self.start_pyserver()
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
        try:
            if self.native:
                for fd in (report_w, theirs.fileno()):
                    os.set_inheritable(fd, True)
                # vfork+exec: no copy of this interpreter; the zygote keeps only its two fds
                pid = os.posix_spawn(self.native, [self.native, "zygote", str(theirs.fileno()),
                                                   str(report_w), str(self.bpf_fd)], {})
            else:
                pid = os.fork()
                if pid == 0:
                    os.close(report_r)
                    mine.close()
                    self.ctl.close()
                    run_reaper(theirs, self.filter, report_w)
        finally:
            _check(libc.setns(self.own_pidns, CLONE_NEWPID), "setns(pid)")
        os.close(report_w)
        theirs.close()
        self.children.add(pid)
        kind = "native" if self.native else "python"
        try:
            wire.send(self.ctl, {"op": "zygote", "pid": pid, "kind": kind}, [mine.fileno(), report_r])
        finally:
            mine.close()
            os.close(report_r)

    def start_pyserver(self) -> None:
        """A confined, pre-started interpreter for snippets: pid 1 of its own pid namespace."""
        self.stop_pyserver()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        _check(libc.unshare(CLONE_NEWPID), "unshare(pid)")
        try:
            pid = os.fork()
            if pid == 0:
                mine.close()
                self.ctl.close()
                run_pyserver(theirs, self.filter)
        finally:
            _check(libc.setns(self.own_pidns, CLONE_NEWPID), "setns(pid)")
        theirs.close()
        self.children.add(pid)
        self.pyserver = pid
        try:
            wire.send(self.ctl, {"op": "pyserver", "pid": pid}, [mine.fileno()])
        finally:
            mine.close()

    def stop_pyserver(self) -> None:
        if self.pyserver is not None and self.pyserver in self.children:
            try:
                os.kill(self.pyserver, 9)  # pid 1 of its namespace: everything in it dies
            except ProcessLookupError:
                pass
        self.pyserver = None

    def start_forwarder(self) -> None:
        """allowlist mode: relay 127.0.0.1:3128 to the host proxy, without privileges."""
        pid = os.fork()
        if pid == 0:
            try:
                self.ctl.close()
                proxy = forwarder_fds()  # closes all but the proxy's (mountview.py)
                drop_privileges()
                self.filter.load()
                import forwarder

                forwarder.serve(proxy)
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
    args = sys.argv[1:]
    ctl = socket.socket(fileno=int(args[0]) if args else 3)
    os.set_inheritable(ctl.fileno(), False)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wake recv so reapers get reaped
    sup = Supervisor(ctl)
    if len(args) == 6 and args[1] == "--adopt":  # exec'd by ptinit: store_fd bpf_fd ptinit kids
        sup.adopt(int(args[2]), int(args[3]), args[4], args[5])
    sup.serve()


if __name__ == "__main__":
    main()
