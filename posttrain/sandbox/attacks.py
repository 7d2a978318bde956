"""The attack catalogue: adversarial programs and the containment each must meet.

What it is: :data:`ATTACKS`, a list of named cases. Each case gets a ``Ctx`` (a factory of
small-limit sandboxes, a marker to put in every command's environment, a scratch dir on the
host) and returns ``(contained, detail)``. ``tests/security`` runs every case and also asserts
the host is left clean (``hostcheck``); ``posttrain sandbox selfcheck`` prints the same
results as a table.

Guarantees: each case checks a concrete, observable consequence (a status, a failed syscall,
an unchanged host file), never merely that the command ran; each finishes in seconds.
Does not: cover kernel exploits (out of the threat model).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

from .policy import Limits, Timeouts

SMALL = Limits(memory_bytes=96 << 20, pids=48, cpus=1.0, stdout_bytes=64 << 10,
               stderr_bytes=64 << 10, file_size_bytes=16 << 20, store_bytes=32 << 20)
QUICK = Timeouts(create_s=30, wall_s=5, cpu_s=5, kill_grace_s=0.2)


@dataclass
class Ctx:
    open: Callable  # (**overrides) -> sandbox
    marker: str
    scratch: str  # a host directory for the case

    @property
    def env(self) -> dict:
        return {"PT_MARK": self.marker}


def _ex(sb, ctx, cmd, **kw):
    return sb.exec(cmd, env=ctx.env, **kw)


def _healthy(sb, ctx) -> bool:
    return _ex(sb, ctx, "echo alive").stdout == "alive\n"


def fork_bomb(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "python3 -c 'import os\nwhile True:\n try: os.fork()\n except OSError: pass'",
                timeout=2)
        return r.status == "timeout" and _healthy(sb, ctx), f"{r.status} in {r.wall_s:.1f}s"


def memory_bomb(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "python3 -c 'x = []\nwhile True: x.append(bytearray(1 << 20))'", timeout=10)
        return r.status == "memory_limit" and _healthy(sb, ctx), f"{r.status} {r.reason}"


def disk_fill(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "for i in 1 2 3 4 5 6; do head -c 15M /dev/zero > /work/f$i || exit 1; done; "
                "head -c 15M /dev/zero > /tmp/t || exit 1", timeout=10)
        sizes = sum(f.size for f in sb.list_files())
        ok = r.status in ("nonzero_exit", "memory_limit") and sizes <= SMALL.store_bytes
        return ok and _healthy(sb, ctx), f"{r.status}, {sizes >> 20} MiB kept"


def persistence(ctx):
    from .pool import SandboxPool

    with SandboxPool(max_total=1, warm=0, timeouts=QUICK) as pool:
        with pool.lease(limits=SMALL) as sb:
            _ex(sb, ctx, "for d in /tmp /dev/shm $HOME /work; do echo x > $d/planted; done")
        with pool.lease(limits=SMALL) as sb2:
            r = _ex(sb2, ctx, "ls /tmp/planted /dev/shm/planted $HOME/planted /work/planted 2>&1; true")
            same = sb2 is sb
        return same and r.stdout.count("No such file") == 4, r.stdout.strip().replace("\n", "; ")


def root_fs_writes(ctx):
    """Outside the overlay nothing is writable: a file planted there would outlive the reset."""
    with ctx.open() as sb:
        r = _ex(sb, ctx, "for p in /planted /dev/planted /etc/planted /home/planted /usr/planted; do "
                "(echo x > $p) 2>/dev/null && echo WROTE $p; mkdir $p.d 2>/dev/null && echo MKDIR $p; "
                "done; echo done")
        return r.stdout == "done\n", r.stdout.strip().replace("\n", "; ")


def stdout_flood(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "yes flood", timeout=5)
        ok = r.status == "output_limit" and r.stdout_truncated and len(r.stdout_bytes) <= SMALL.stdout_bytes
        return ok, f"{r.status}, kept {len(r.stdout_bytes)} bytes"


def huge_line(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "python3 -c 'import sys; sys.stderr.write(\"x\" * (50 << 20))'", timeout=5)
        ok = r.status == "output_limit" and r.stderr_truncated and len(r.stderr_bytes) <= SMALL.stderr_bytes
        return ok, f"{r.status}, kept {len(r.stderr_bytes)} bytes"


def _listener(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    if kind == socket.SOCK_STREAM:
        s.listen(1)
    s.settimeout(0.5)
    return s


def tcp_egress(ctx):
    srv = _listener()
    port = srv.getsockname()[1]
    try:
        with ctx.open() as sb:
            r = _ex(sb, ctx, f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'")
        try:
            srv.accept()
            reached = True
        except (socket.timeout, OSError):
            reached = False
    finally:
        srv.close()
    return r.status == "nonzero_exit" and not reached, r.stderr.strip().splitlines()[-1:]


def udp_egress(ctx):
    srv = _listener(socket.SOCK_DGRAM)
    port = srv.getsockname()[1]
    try:
        with ctx.open() as sb:
            r = _ex(sb, ctx, "python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                    f"s.sendto(b\"x\", (\"127.0.0.1\", {port})); s.sendto(b\"x\", (\"8.8.8.8\", 53))'")
        try:
            srv.recvfrom(10)
            reached = True
        except (socket.timeout, OSError):
            reached = False
    finally:
        srv.close()
    return r.status == "nonzero_exit" and not reached, r.stderr.strip().splitlines()[-1:]


def dns_lookup(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "python3 -c 'import socket; print(socket.getaddrinfo(\"example.com\", 80))'")
        g = _ex(sb, ctx, "getent hosts example.com")
    return r.status == "nonzero_exit" and g.status == "nonzero_exit", r.stderr.strip().splitlines()[-1:]


def bash_dev_tcp(ctx):
    srv = _listener()
    port = srv.getsockname()[1]
    try:
        with ctx.open() as sb:
            r = _ex(sb, ctx, f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'")
        try:
            srv.accept()
            reached = True
        except (socket.timeout, OSError):
            reached = False
    finally:
        srv.close()
    return r.status == "nonzero_exit" and not reached, r.stderr.strip()[:120]


def host_proc(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; ls -d /proc/[0-9]* | wc -l")
    leaked = any(w in r.stdout for w in ("pytest", ".venv", "bwrap", "process_api"))
    count = int(r.stdout.split()[-1])
    return not leaked and count <= 6, f"{count} pids visible, leaked={leaked}"


def host_secrets(ctx):
    os.environ["PT_HOST_SECRET"] = ctx.marker + "-secret"
    try:
        with ctx.open() as sb:
            r = _ex(sb, ctx, "cat /etc/shadow; ls /root; cat ../../../../etc/shadow; env; "
                    "cat /proc/1/environ; ls /home")
    finally:
        os.environ.pop("PT_HOST_SECRET", None)
    leaked = ("-secret" in r.stdout) or ("root:" in r.stdout and ":0:" in r.stdout and "shadow" in r.stdout)
    ok = not leaked and "root:$" not in r.stdout and "No such file" in r.stderr
    return ok, "no shadow, no host env"


def signal_supervisor(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "kill -9 -1; kill -9 $PPID; kill -9 1; kill -TERM 1; true")
        return _healthy(sb, ctx) and sb.ping(), f"{r.status}; sandbox still answers"


def ptrace_attack(ctx):
    code = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "pid = os.fork()\nif pid == 0:\n import time; time.sleep(5)\n"
            "r1 = libc.ptrace(16, 1, 0, 0); e1 = ctypes.get_errno(); "
            "r2 = libc.ptrace(16, pid, 0, 0); e2 = ctypes.get_errno(); print(r1, e1, r2, e2)")
    with ctx.open() as sb:
        r = _ex(sb, ctx, ["python3", "-c", code.replace("; pid", "\npid").replace("; r1", "\nr1")])
        out = r.stdout.split()
        ok = out[:1] == ["-1"] and out[2:3] == ["-1"] and _healthy(sb, ctx)
    return ok, f"ptrace results {out}"


def symlink_harness(ctx):
    secret = os.path.join(ctx.scratch, "host-secret.txt")
    with open(secret, "w") as fh:
        fh.write("HOST-ONLY")
    with ctx.open() as sb:
        _ex(sb, ctx, f"ln -s {secret} /work/leak; ln -s / /work/rootlink; ln -s /etc /work/etc")
        refused = 0
        for op in (lambda: sb.read_file("leak"), lambda: sb.read_file("rootlink" + secret),
                   lambda: sb.write_file("rootlink" + secret, "pwned"),
                   lambda: sb.write_file("etc/x", "pwned"), lambda: sb.list_files("rootlink")):
            try:
                op()
            except Exception:  # noqa: BLE001 - refusal is the expected outcome
                refused += 1
        sb.write_file("leak", "replaced")  # replaces the link itself, never its target
        kept = open(secret).read() == "HOST-ONLY"
        link_gone = _ex(sb, ctx, "test -L /work/leak || echo plain").stdout == "plain\n"
    return refused == 5 and kept and link_gone, f"{refused}/5 refused, host file intact={kept}"


def hardlink_harness(ctx):
    with ctx.open() as sb:
        _ex(sb, ctx, "echo original > /work/target; ln /work/target /work/alias")
        sb.write_file("alias", "harness wrote this")
        r = _ex(sb, ctx, "cat /work/target")
    return r.stdout == "original\n", "write replaced the link instead of writing through it"


def mount_escape(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "mkdir -p /tmp/m; mount -t tmpfs none /tmp/m && echo MOUNTED; "
                "unshare -Ur true && echo UNSHARED; chroot / true && echo CHROOTED; "
                "python3 -c 'import os; os.setuid(1000)' 2>/dev/null && echo SETUID; "
                "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status")
    bad = any(w in r.stdout for w in ("MOUNTED", "UNSHARED", "CHROOTED", "SETUID"))
    ok = not bad and "CapEff:\t0000000000000000" in r.stdout and "NoNewPrivs:\t1" in r.stdout
    return ok, r.stdout.strip().replace("\n", "; ")


def sleep_forever(ctx):
    with ctx.open() as sb:
        t0 = time.monotonic()
        r = _ex(sb, ctx, "trap '' TERM; sleep 1000", timeout=1)
        took = time.monotonic() - t0
        idle = _ex(sb, ctx, "echo once; sleep 1000", idle_timeout=0.5, timeout=10)
    ok = r.status == "timeout" and took < 4 and idle.status == "timeout" and "idle" in idle.reason
    return ok, f"wall {r.status} after {took:.1f}s; idle {idle.status} ({idle.reason})"


def busy_loop(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "while :; do :; done", cpu_time=0.5, timeout=10)
    return r.status == "cpu_limit" and r.wall_s < 8, f"{r.status} after {r.cpu_s:.2f}s CPU"


def orphans(ctx):
    from .hostcheck import marked_pids

    with ctx.open() as sb:
        r = _ex(sb, ctx, "(sleep 1000 &) ; setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & "
                "python3 -c 'import os\nif os.fork() == 0:\n os.setsid()\n if os.fork() == 0:\n  import time; time.sleep(1000)'; echo spawned")
        alive = marked_pids(ctx.marker)
        return r.stdout == "spawned\n" and not alive, f"{len(alive)} survivors after the command"


def special_files(ctx):
    with ctx.open() as sb:
        r = _ex(sb, ctx, "mknod /work/mem c 1 1 && echo MKNOD; mkfifo /work/fifo; ls /dev")
        t0 = time.monotonic()
        try:
            sb.read_file("fifo")
            fifo_refused = False
        except Exception:  # noqa: BLE001
            fifo_refused = True
        quick = time.monotonic() - t0 < 2
    ok = "MKNOD" not in r.stdout and fifo_refused and quick and "mem" not in r.stdout.split()
    return ok, f"mknod refused, FIFO read refused in {time.monotonic() - t0:.2f}s"


def host_unix_socket(ctx):
    path = os.path.join(ctx.scratch, "host.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + ctx.marker)
    abstract.listen(1)
    try:
        with ctx.open() as sb:
            r = _ex(sb, ctx, "python3 -c 'import socket,sys\nfor a in sys.argv[1:]:\n try:\n"
                    "  s=socket.socket(socket.AF_UNIX); s.connect(a.replace(\"@\", \"\\0\")); print(\"CONNECTED\", a)\n"
                    f" except OSError as e: print(\"refused\", e.errno)' {path} @{ctx.marker} "
                    "/run/systemd/private /var/run/docker.sock")
    finally:
        srv.close()
        abstract.close()
    return "CONNECTED" not in r.stdout and r.stdout.count("refused") == 4, r.stdout.strip().replace("\n", "; ")


def cross_sandbox(ctx):
    with ctx.open() as a, ctx.open() as b:
        _ex(a, ctx, "echo A > /tmp/shared; echo A > /dev/shm/shared; echo A > /work/shared; sleep 0 &")
        r = _ex(b, ctx, "cat /tmp/shared /dev/shm/shared /work/shared 2>&1; kill -9 -1; true")
        ok = r.stdout.count("No such file") == 3 and _healthy(a, ctx)
    return ok, "B sees none of A's files; A survives B's kill -9 -1"


def parallel_creates(ctx):
    results, errors = [], []

    def one():
        try:
            with ctx.open() as sb:
                results.append(_ex(sb, ctx, "echo ok").stdout)
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results == ["ok\n"] * 6 and not errors, f"{len(results)}/6 ok, errors={errors[:1]}"


ATTACKS: list[tuple[str, Callable]] = [
    ("fork_bomb", fork_bomb), ("memory_bomb", memory_bomb), ("disk_fill", disk_fill),
    ("persistence_across_tasks", persistence), ("root_fs_writes", root_fs_writes),
    ("stdout_flood", stdout_flood),
    ("huge_line", huge_line), ("tcp_egress", tcp_egress), ("udp_egress", udp_egress),
    ("dns_lookup", dns_lookup), ("bash_dev_tcp", bash_dev_tcp), ("host_proc", host_proc),
    ("host_secrets", host_secrets), ("signal_supervisor", signal_supervisor),
    ("ptrace", ptrace_attack), ("symlink_harness", symlink_harness),
    ("hardlink_harness", hardlink_harness), ("mount_unshare_chroot_setuid", mount_escape),
    ("sleep_forever", sleep_forever), ("busy_loop", busy_loop), ("orphans", orphans),
    ("special_files", special_files), ("host_unix_socket", host_unix_socket),
    ("cross_sandbox", cross_sandbox), ("parallel_creates", parallel_creates),
]
# Attacks on state that outlives one use (IPC, the snippet server): see attacks_state.py.
from .attacks_state import ATTACKS as _STATE_ATTACKS  # noqa: E402 (it imports this module)

ATTACKS += _STATE_ATTACKS
