"""The bubblewrap command line of an isolated sandbox.

What it is: :func:`bwrap_argv` builds the argv that starts the supervisor inside fresh user,
pid, net, mount, ipc and uts namespaces (cgroup too when the kernel allows), with:

- a read-only view of the system tree (``/usr`` and the merged-usr links) and a curated
  ``/etc`` (dynamic-linker, certificates, alternatives; synthetic ``passwd``/``group``/``hosts``
  so no host account, hostname or shadow file is visible), copied once per process into one
  directory (:func:`synth_etc`) and bound as a whole;
- a fresh ``/proc``, a minimal ``/dev`` and empty mount points for the overlay binds
  (``/work``, ``/tmp``, ``/home/user``, ``/dev/shm``);
- the template base read-only at ``/.ptbase`` (the layer store is created by the supervisor
  as a detached tmpfs, never attached to a path), and the template's ``ro_dirs`` read-only
  at ``/opt/ro/<name>`` (hidden like ``/etc`` by the supervisor, see ``mountview.py``);
- the payload: the native front ``ptinit`` (bound read-only at ``/.ptinit``) when it could be
  built, else the Python supervisor; both remount ``/`` and ``/dev`` read-only before any
  command runs, so nothing outside the overlay persists between tasks;
- a cleared environment, a new session, ``--die-with-parent``; the supervisor keeps its
  capabilities *inside* the user namespace only, to mount the overlay; commands drop them.

Guarantees: nothing from the host is writable inside except the per-sandbox layer store;
the harness's environment variables never reach the sandbox.

Does not: apply cgroups or seccomp (the host and the supervisor do), or check that the
``python`` it names exists (the caller resolves it with :func:`system_python`).
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

from posttrain.core.errors import SandboxError

_ETC_FILES = (
    "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf",
    "ssl", "ca-certificates", "mime.types", "inputrc", "bash.bashrc", "profile", "os-release",
    "debian_version", "host.conf", "gai.conf", "protocols", "services", "magic", "python3",
    "python3.11", "python3.12", "login.defs",
)
_SYNTH_ETC = {
    "passwd": "root:x:0:0:sandbox:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "hosts": "127.0.0.1 localhost sandbox\n::1 localhost\n",
    "hostname": "sandbox\n",
    "resolv.conf": "# no network in the sandbox\n",
}
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def bwrap_binary() -> str | None:
    """Path of ``bwrap`` or None when bubblewrap is not installed."""
    return shutil.which("bwrap")


def system_python() -> str:
    """A Python 3 interpreter under ``/usr`` (visible inside the sandbox)."""
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(cand, os.X_OK):
            return cand
    raise SandboxError("no python3 under /usr; the isolated sandbox needs one for its supervisor")


def synth_etc(cache_dir: Path) -> Path:
    """The sandbox's whole ``/etc``, assembled once per cache dir: the synthetic account and
    network files plus copies of the curated host entries (only what any user may read).

    Why one directory bound once: bubblewrap re-reads the entire mount table after every
    read-only bind (to remount what lies under it), so ~25 binds of single host files cost
    more than the rest of its start-up; one bind of this directory takes ~40% off it here.
    Top-level links are followed (as a bind would), links inside directories are kept.
    """
    etc = cache_dir / "etc"
    if not (etc / "passwd").exists():
        tmp = cache_dir / f"etc.tmp{os.getpid()}-{threading.get_ident()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name in _ETC_FILES:
            _copy_readable(Path("/etc", name), tmp / name)
        for name, text in _SYNTH_ETC.items():
            (tmp / name).write_text(text)
            os.chmod(tmp / name, 0o644)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, etc)
        except OSError:  # another thread won the race; use its copy
            shutil.rmtree(tmp, ignore_errors=True)
    return etc


def _copy_readable(src: Path, dest: Path) -> None:
    """Copy a host entry if every user may read it; within directories, skip what they may not."""
    def others_can_read(st: os.stat_result) -> bool:
        need = 0o005 if stat.S_ISDIR(st.st_mode) else 0o004
        return st.st_mode & need == need

    def unreadable(where: str, names: list[str]) -> set[str]:
        skip = set()
        for n in names:
            st = os.lstat(os.path.join(where, n))
            if not stat.S_ISLNK(st.st_mode) and not others_can_read(st):
                skip.add(n)
        return skip

    try:
        st = src.stat()
        if not others_can_read(st):
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.copytree(src, dest, symlinks=True, ignore=unreadable)
        elif stat.S_ISREG(st.st_mode):
            shutil.copy2(src, dest)
    except OSError:  # missing or vanished: the sandbox simply does not get it
        shutil.rmtree(dest, ignore_errors=True)


def _system_view() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for link in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = Path("/") / link
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{link}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{link}"]
    return args


def bwrap_argv(*, base_dir: Path, etc_dir: Path, supervisor_dir: Path, python: str,
               store_bytes: int, block_fd: int, info_fd: int, ctl_fd: int,
               proxy_socket: str | None = None, native: str | None = None,
               bpf_fd: int | None = None, ro_dirs: tuple = (), **_unused) -> list[str]:
    """The full argv (bwrap first) that starts a supervisor for one sandbox."""
    binary = bwrap_binary()
    if binary is None:
        raise SandboxError("bubblewrap (bwrap) is not installed; run scripts/system-deps.sh")
    args = [binary, "--unshare-all", "--unshare-cgroup-try", "--die-with-parent",
            "--new-session", "--clearenv", "--hostname", "sandbox",
            "--uid", "0", "--gid", "0", "--cap-add", "ALL"]
    args += _system_view()
    args += ["--ro-bind", str(etc_dir), "/etc"]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--dir", "/work", "--dir", "/tmp", "--dir", "/home/user", "--dir", "/dev/shm",
             "--dir", "/.ptroot",
             "--ro-bind", str(base_dir), "/.ptbase",
             "--ro-bind", str(supervisor_dir), "/.ptsup",
             "--setenv", "PATH", SANDBOX_PATH,
             "--chdir", "/",
             "--block-fd", str(block_fd), "--info-fd", str(info_fd)]
    for name, host in ro_dirs:  # names are validated path components (template._ro_dirs)
        args += ["--ro-bind", host, f"/opt/ro/{name}"]
    if proxy_socket:
        args += ["--bind", proxy_socket, "/run/posttrain-proxy.sock"]
    if native and bpf_fd is not None:
        args += ["--ro-bind", native, "/.ptinit",
                 "/.ptinit", "init", str(ctl_fd), str(bpf_fd), str(store_bytes), python,
                 "/.ptsup/supervisor.py"]
    else:
        args += [python, "-S", "-E", "-B", "/.ptsup/supervisor.py", str(ctl_fd)]
    return args
