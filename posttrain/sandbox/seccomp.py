"""The sandbox's seccomp filter, built with libseccomp through ctypes.

What it is: a deny-list filter loaded into every command (after ``no_new_privs``, before
``execve``). Denied calls fail with ``EPERM`` (or ``EAFNOSUPPORT`` for sockets, ``ENOSYS``
for ``clone3`` so libc falls back to ``clone``, whose flags we can inspect).

Guarantees when :func:`build` succeeds: ptrace and cross-process memory access, the whole
mount family (old and new mount API), ``setns``, ``unshare`` of anything but an IPC
namespace alone (that needs ``CAP_SYS_ADMIN``, which only the snippet server holds, to give
each snippet a fresh one) and namespace-creating ``clone`` flags, ``chroot``/``pivot_root``, io_uring, keyctl and the key syscalls, bpf, perf events,
userfaultfd, ``memfd_secret`` (memory even the kernel's own accounting and the harness's
inspection cannot see), module loading, kexec, reboot, swap, ``open_by_handle_at``, sockets
of any family other than ``AF_UNIX`` (unless ``allow_inet``), and ``prlimit64`` on any
process but the caller (pid 0) are refused. Why the last: a snippet shares its server's uid
and sees it as pid 1, and the kernel lets a process of the same uid lower another's limits
with no capability; a lowered hard limit cannot be raised again inside a user namespace, and
every snippet forked later inherits it (``pristine.py`` covers what can be put back). Syscalls of a foreign
architecture (i386/x32 entry points) kill the process (libseccomp's default bad-arch action).

Does not: restrict ordinary file, process or memory syscalls (namespaces, caps and cgroups do
that), or protect against kernel bugs in allowed syscalls.

Stdlib-only. The host compiles the filter once (:func:`compiled`) and hands the BPF bytes
to each sandbox's supervisor, which loads them with one ``prctl``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno

_ACT_ALLOW = 0x7FFF0000
_CMP_NE = 1
_CMP_MASKED_EQ = 7
_AF_UNIX = 1
_CLONE_NEWIPC = 0x08000000

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "setns",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init", "memfd_secret",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "vhangup",
    "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
)

# Every CLONE_NEW* flag: a clone carrying any of them is refused (no nested namespaces).
_CLONE_NS_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                   0x20000000, 0x40000000, 0x00000080)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def _lib():
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


class Filter:
    """A built filter; :meth:`load` installs it in the calling process (irreversibly)."""

    def __init__(self, lib, ctx: int, rules: int):
        self._lib = lib
        self._ctx = ctx
        self.rules = rules

    def load(self) -> None:
        rc = self._lib.seccomp_load(self._ctx)
        if rc != 0:
            raise OSError(-rc, f"seccomp_load failed: {errno.errorcode.get(-rc, rc)}")

    def export_bpf(self, fd: int) -> None:
        rc = self._lib.seccomp_export_bpf(self._ctx, fd)
        if rc != 0:
            raise OSError(-rc, "seccomp_export_bpf failed")

    def compile(self) -> "Compiled":
        """The filter as BPF bytes, loadable later without libseccomp (fast in a fresh fork)."""
        import os

        r, w = os.pipe()
        try:
            self.export_bpf(w)
            os.close(w)
            w = -1
            chunks = []
            while True:
                data = os.read(r, 65536)
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
        return Compiled(b"".join(chunks), self.rules)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Compiled:
    """A BPF program; :meth:`load` installs it with one ``prctl`` (needs ``no_new_privs``)."""

    def __init__(self, program: bytes, rules: int):
        self.program = program
        self.rules = rules
        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = _SockFprog(len(program) // 8, ctypes.addressof(self._buf))
        self._libc = ctypes.CDLL(None, use_errno=True)

    def load(self) -> None:
        # PR_SET_SECCOMP = 22, SECCOMP_MODE_FILTER = 2
        if self._libc.prctl(22, 2, ctypes.byref(self._prog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp filter load failed: {errno.errorcode.get(err, err)}")


def _add(lib, ctx, action: int, nr: int, cmps: list[_ArgCmp]) -> None:
    arr = (_ArgCmp * len(cmps))(*cmps) if cmps else None
    rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)
    if rc != 0:
        raise OSError(-rc, f"seccomp_rule_add_array({nr}) failed")


_compiled: dict = {}


def compiled(allow_inet: bool = False) -> "Compiled":
    """The filter compiled to BPF once per process (sandboxes load the bytes)."""
    if allow_inet not in _compiled:
        _compiled[allow_inet] = build(allow_inet).compile()
    return _compiled[allow_inet]


def build(allow_inet: bool = False) -> Filter:
    """Build the deny-list filter. Raises ``OSError`` when libseccomp is unusable."""
    lib = _lib()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise OSError(errno.ENOMEM, "seccomp_init failed")
    rules = 0
    eperm = _errno_action(errno.EPERM)
    for name in DENIED:
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        if nr < 0:  # not on this architecture / libseccomp version
            continue
        _add(lib, ctx, eperm, nr, [])
        rules += 1
    clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
    if clone3 >= 0:
        _add(lib, ctx, _errno_action(errno.ENOSYS), clone3, [])
        rules += 1
    clone = lib.seccomp_syscall_resolve_name(b"clone")
    for flag in _CLONE_NS_FLAGS:
        _add(lib, ctx, eperm, clone, [_ArgCmp(0, _CMP_MASKED_EQ, flag, flag)])
        rules += 1
    unshare = lib.seccomp_syscall_resolve_name(b"unshare")
    _add(lib, ctx, eperm, unshare, [_ArgCmp(0, _CMP_NE, _CLONE_NEWIPC, 0)])
    rules += 1
    prlimit = lib.seccomp_syscall_resolve_name(b"prlimit64")
    if prlimit >= 0:  # another process's limits: see the module docstring
        _add(lib, ctx, eperm, prlimit, [_ArgCmp(0, _CMP_NE, 0, 0)])
        rules += 1
    if not allow_inet:
        noaf = _errno_action(errno.EAFNOSUPPORT)
        for name in (b"socket", b"socketpair"):
            nr = lib.seccomp_syscall_resolve_name(name)
            _add(lib, ctx, noaf, nr, [_ArgCmp(0, _CMP_NE, _AF_UNIX, 0)])
            rules += 1
    return Filter(lib, ctx, rules)
