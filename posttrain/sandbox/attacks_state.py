"""Attacks on state that outlives one use: IPC objects, the snippet server, hidden syscalls.

What it is: more cases for the catalogue in ``attacks.py`` (appended to its ``ATTACKS``),
each taking the same ``Ctx`` and returning ``(contained, detail)``:

- SysV message queues, semaphores and shared memory and POSIX message queues made by one
  command or snippet (or pool lease) must be invisible — by key, name or listing — to the
  next command, snippet or lease (each runs in a fresh IPC namespace);
- a snippet that changes its own and its server's state (rlimits through ``prlimit``,
  nice, scheduling policy, CPU affinity, I/O priority, ``oom_score_adj``, umask, cwd,
  environment, signal dispositions and mask) must leave the next snippet exactly the state
  the first one saw;
- ``memfd_secret`` must be refused (``EPERM`` from the seccomp filter);
- ``/proc/self/mountinfo`` must name no host path of the checkout or the host's temp dirs.

Guarantees: each case checks the consequence (what the next use sees), not only that a call
failed; each finishes in a few seconds.
Does not: cover the end-to-end reward hack through ``code.humaneval-v1`` (the sandbox layer
may not import domains; ``tests/security/test_ipc_reward_hack.py`` runs it).
"""

from __future__ import annotations

import json

# One program, three modes, so what is made and what is looked for cannot drift apart.
_IPC = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
MODE, KEY = %r, %d
name = b"/ptq%%d" %% KEY
if MODE == "make":
    libc.shmat.restype = ctypes.c_void_p
    shm = libc.shmget(KEY, 4096, 0o1600)
    ctypes.memmove(libc.shmat(shm, None, 0), b"ANSWER", 6)
    made = [shm, libc.msgget(KEY + 1, 0o1600), libc.semget(KEY + 2, 1, 0o1600),
            libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)]
    print("made", sum(i >= 0 for i in made))
else:
    found = [libc.shmget(KEY, 0, 0), libc.msgget(KEY + 1, 0), libc.semget(KEY + 2, 0, 0),
             libc.mq_open(name, os.O_RDONLY)]
    listed = sum(len(open("/proc/sysvipc/" + k).read().splitlines()) - 1
                 for k in ("shm", "msg", "sem"))
    print("seen", sum(i >= 0 for i in found), listed)
'''


def _ipc(sb, ctx, how: str, mode: str, key: int) -> str:
    code = _IPC % (mode, key)
    r = sb.run_python(code, env=ctx.env) if how == "snippet" else sb.exec(
        ["python3", "-c", code], env=ctx.env)
    return r.stdout.strip() or f"{r.status}: {r.stderr.strip()[-120:]}"


def ipc_between_uses(ctx):
    """Every order of command and snippet in one sandbox: nothing made before is seen."""
    seen, key = [], 0x5170
    with ctx.open() as sb:
        for first, then in (("exec", "exec"), ("exec", "snippet"), ("snippet", "snippet"),
                            ("snippet", "exec")):
            key += 3
            made = _ipc(sb, ctx, first, "make", key)
            seen.append(f"{first}->{then}: {made}, {_ipc(sb, ctx, then, 'look', key)}")
    ok = all(s.endswith("made 4, seen 0 0") for s in seen)
    return ok, "; ".join(seen)


def ipc_across_leases(ctx):
    """A pool lease's IPC objects (command and snippet) are gone in the next lease."""
    from .attacks import QUICK, SMALL
    from .pool import SandboxPool

    with SandboxPool(max_total=1, warm=0, timeouts=QUICK) as pool:
        with pool.lease(limits=SMALL) as sb:
            made = [_ipc(sb, ctx, "exec", "make", 0x5190), _ipc(sb, ctx, "snippet", "make", 0x5193)]
        with pool.lease(limits=SMALL) as sb2:
            seen = [_ipc(sb2, ctx, how, "look", key)
                    for how in ("exec", "snippet") for key in (0x5190, 0x5193)]
            same = sb2 is sb
    ok = same and made == ["made 4"] * 2 and seen == ["seen 0 0"] * 4
    return ok, f"same sandbox={same}; {made}; {seen}"


_STATE = r'''
import ctypes, json, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
print(json.dumps({
    "rlimits": [resource.getrlimit(r) for r in range(16)],
    "nice": os.getpriority(os.PRIO_PROCESS, 0), "policy": os.sched_getscheduler(0),
    "affinity": sorted(os.sched_getaffinity(0)), "ioprio": libc.syscall(252, 1, 0),
    "oom": open("/proc/self/oom_score_adj").read(), "umask": os.umask(0o22),
    "cwd": os.getcwd(), "env": sorted(os.environ.items()),
    "signals": [str(signal.getsignal(s)) for s in sorted(signal.valid_signals())
                if s < 32 and s not in (signal.SIGKILL, signal.SIGSTOP)],
    "mask": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))}))
'''

_TAMPER = r'''
import ctypes, os, resource, signal
libc = ctypes.CDLL(None, use_errno=True)
done = []
def ioprio_idle(pid):
    if libc.syscall(251, 1, pid, 3 << 13) != 0:
        raise OSError(ctypes.get_errno(), "ioprio_set")
def attempt(name, fn):
    try:
        fn()
        done.append(name)
    except OSError:
        pass
os.umask(0o077); os.chdir("/tmp"); os.environ["PT_TAMPERED"] = "1"
signal.signal(signal.SIGUSR1, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
one_cpu = {min(os.sched_getaffinity(0))}
for pid in (1, 0):  # the server (pid 1 here), then ourselves (inherited by nothing later)
    for r, v in ((resource.RLIMIT_NOFILE, 64), (resource.RLIMIT_AS, 1 << 28),
                 (resource.RLIMIT_FSIZE, 4096), (resource.RLIMIT_NPROC, 4),
                 (resource.RLIMIT_STACK, 1 << 20), (resource.RLIMIT_CPU, 30)):
        attempt(f"prlimit{pid}/{r}", lambda: resource.prlimit(pid, r, (v, v)))
    attempt(f"nice{pid}", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
    attempt(f"sched{pid}", lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)))
    attempt(f"affinity{pid}", lambda: os.sched_setaffinity(pid, one_cpu))
    attempt(f"ioprio{pid}", lambda: ioprio_idle(pid))
attempt("nice-user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
attempt("nice-pgrp1", lambda: os.setpriority(os.PRIO_PGRP, 1, 19))
attempt("oom1", lambda: open("/proc/1/oom_score_adj", "w").write("1000"))
print(" ".join(done))
'''


def snippet_server_state(ctx):
    """What one snippet does to itself and to its server never reaches the next snippet."""
    import os

    if os.uname().machine != "x86_64":  # the ioprio syscall numbers above are x86_64's
        return True, "skipped: not x86_64"
    with ctx.open() as sb:
        before = sb.run_python(_STATE, env=ctx.env)
        tamper = sb.run_python(_TAMPER, env=ctx.env)
        after = [sb.run_python(_STATE, env=ctx.env) for _ in range(2)]
        files = sb.run_python("import os\nfds = [os.open('/dev/null', 0) for _ in range(200)]\n"
                              "print(len(fds))", env=ctx.env)
    try:
        pristine = json.loads(before.stdout)
        later = [json.loads(r.stdout) for r in after]
    except ValueError:
        return False, f"state not readable: {before.status} {[r.status for r in after]}"
    diff = sorted({k for state in later for k in pristine if state[k] != pristine[k]})
    ok = (not diff and files.stdout.strip() == "200" and tamper.status == "ok"
          and "prlimit0/7" in tamper.stdout and pristine["umask"] == 0o22)
    return ok, f"changed after tampering: {diff or 'nothing'}; tamper did: {tamper.stdout.strip()}"


def memfd_secret(ctx):
    with ctx.open() as sb:
        r = sb.exec(["python3", "-c", "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
                     "print(libc.syscall(447, 0), ctypes.get_errno())"], env=ctx.env)
    return r.stdout.split() == ["-1", "1"], f"memfd_secret -> {r.stdout.strip()} (want -1 EPERM)"


def _host_paths_in(mountinfo: str) -> list:
    """Mounts whose root, source or options name a host directory of ours: the checkout
    (also relative to the root of a file system it is on: ``.../posttrain/sandbox``), the
    host's temp dirs (``/tmp/``, ``/var/tmp/``, ``/dev/shm/``, and the names of our cache
    and build directories, which is all a temp dir's own file system shows)."""
    import tempfile
    from pathlib import Path

    from .template import cache_root

    names = {str(Path(__file__).resolve().parents[2]), "posttrain/sandbox", "posttrain-",
             "ptinit-", tempfile.gettempdir() + "/", "/tmp/", "/var/tmp", "/dev/shm/",
             str(cache_root())}
    bad = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        tail = fields[fields.index("-") + 1:] if "-" in fields else []
        if any(n in part for n in names for part in [fields[3]] + tail[1:]):
            bad.append(" ".join(fields[3:5]))  # root, then where it is mounted
    return bad


def mountinfo_host_paths(ctx):
    """No host path of the checkout or the host's temp dirs in the sandbox's mountinfo,
    for a command and a snippet, with either supervisor (native ptinit, pure Python), and
    with the egress proxy's socket bound in (``allowlist``)."""
    import os

    from .policy import NetworkPolicy

    allow = NetworkPolicy(mode="allowlist", allow_hosts=("example.org",))
    leaks, lines = [], 0
    for native, net in (("1", None), ("0", None), ("1", allow), ("0", allow)):
        saved = os.environ.get("POSTTRAIN_SANDBOX_NATIVE")
        os.environ["POSTTRAIN_SANDBOX_NATIVE"] = native
        try:
            with ctx.open(**({"network": net} if net else {})) as sb:
                views = [sb.exec("cat /proc/self/mountinfo", env=ctx.env).stdout,
                         sb.run_python("print(open('/proc/self/mountinfo').read())",
                                       env=ctx.env).stdout]
        finally:
            os.environ.pop("POSTTRAIN_SANDBOX_NATIVE") if saved is None else \
                os.environ.__setitem__("POSTTRAIN_SANDBOX_NATIVE", saved)
        lines += sum(v.count("\n") for v in views)
        where = f"native={native} network={net.mode if net else 'none'}"
        leaks += [f"{where}: {b}" for v in views for b in _host_paths_in(v)]
    return lines > 40 and not leaks, f"{lines} mount lines read; host paths: {leaks or 'none'}"


ATTACKS = [("ipc_between_uses", ipc_between_uses), ("ipc_across_leases", ipc_across_leases),
           ("snippet_server_state", snippet_server_state), ("memfd_secret", memfd_secret),
           ("mountinfo_host_paths", mountinfo_host_paths)]
