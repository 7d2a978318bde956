"""posttrain.sandbox: run untrusted, policy-written code safely, fast and observably.

Use::

    from posttrain.sandbox import open_sandbox
    with open_sandbox({"main.py": "print(6 * 7)"}, limits={"memory_bytes": 256 << 20}) as sb:
        result = sb.exec("python3 main.py", timeout=5)      # ExecResult
        result.status, result.stdout                        # ('ok', '42\\n')

``SandboxPool`` hands out warm sandboxes reset to a clean snapshot; ``run_python`` runs a
snippet in a pre-started interpreter; a cold ``exec`` runs without any interpreter start-up
(native front ``ptinit.c``, built at first use; pure-Python fallback without a compiler); ``snapshot``/``restore``/``diff`` work on the
overlay work tree; ``parse_report`` turns JUnit XML / TAP into ``passed``/``total``.

Threat model (DESIGN.md §4). The isolated backend (default on Linux) is built for code
written by a policy model, which may be careless or adversarial but is not a kernel exploit.

Covered, each by a test in ``tests/security``:
- resource exhaustion: fork bombs (cgroup pids), memory bombs (cgroup memory), disk fill
  (size-capped private tmpfs + memory quota + RLIMIT_FSIZE), output floods and huge lines
  (per-stream caps: truncate, flag, kill), busy loops (CPU budget), sleeping forever (wall and
  idle budgets), orphans that double-fork or ``setsid`` (a pid namespace per command);
- escape and snooping: host files and secrets (read-only curated system view, no host
  ``/etc/shadow``, ``/root``, ``/home``; a cleared environment), host processes (own pid
  namespace), ``..`` traversal, network egress by TCP, UDP, DNS or ``/dev/tcp`` (empty network
  namespace and a seccomp filter allowing only AF_UNIX sockets), host Unix sockets (not in
  the mount view), signalling or ptracing the supervisor or init (pid namespaces, no
  capabilities, seccomp denies ptrace), mount/unshare/chroot/setuid (seccomp, no capabilities,
  ``no_new_privs``), device nodes (no ``CAP_MKNOD``; a minimal ``/dev``), ``memfd_secret``
  (seccomp), host paths in ``/proc/self/mountinfo`` (bound host directories are replaced
  by overlays of themselves at start and the binds detached);
- the harness itself: file operations never follow links planted in the sandbox (symlink
  and hard-link tricks, FIFOs), snapshots live in a store the commands cannot reach, and
  nothing persists from one pool lease to the next (work tree, ``/tmp``, ``/dev/shm``, home;
  everything else — ``/``, ``/dev``, ``/etc`` — is read-only), no SysV or POSIX IPC object
  passes from one command, snippet or lease to the next (a fresh IPC namespace for each),
  and the pre-started snippet interpreter is not dumpable, forks per snippet, confines each
  snippet's process like a command, and starts each from its own pristine state (rlimits,
  nice, scheduling, affinity, I/O priority, ``oom_score_adj``, umask, cwd; ``pristine.py``);
- the harness's egress proxy (allowlist mode): only public addresses (every special-purpose
  range refused, embedded IPv4 judged as IPv4), and a fixed cap on its threads and waiting
  connections (the rest answered ``503``);
- cross-sandbox interference: separate namespaces, cgroups and layer stores.

Not covered: kernel exploits (a bug in an allowed syscall escapes every namespace; use a
gVisor or VM tier for hostile code), side channels (timing, cache), and denial of service
through kernel resources no cgroup accounts. The process backend is NOT a security boundary
at all (rlimits only) and warns when chosen for untrusted code. When a cgroup controller is
missing the sandbox still starts and lists what is missing in ``sandbox.degraded``.
"""

from .factory import SandboxWarning, isolated_available, make_sandbox, open_sandbox
from .policy import Limits, NetworkPolicy, SandboxSpec, Timeouts
from .pool import SandboxPool
from .protocol import Sandbox
from .result import STATUSES, ExecResult, FileChange, FileInfo, SnapshotId
from .template import Template
from .testreport import TestCase, TestReport, parse_junit, parse_lines, parse_report, parse_tap

__all__ = [
    "ExecResult", "FileChange", "FileInfo", "Limits", "NetworkPolicy", "STATUSES", "Sandbox",
    "SandboxPool", "SandboxSpec", "SandboxWarning", "SnapshotId", "Template", "TestCase",
    "TestReport", "Timeouts", "isolated_available", "make_sandbox", "open_sandbox",
    "parse_junit", "parse_lines", "parse_report", "parse_tap",
]
