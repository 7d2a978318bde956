"""The sandbox's mount table shows no host path (the Python supervisor's half; ptinit.c's
``hide_host_paths`` is the same steps in C).

What it is: :func:`hide_host_paths`, run once by the supervisor at start, while it still
holds its capabilities and before ``/`` is made read-only and the work overlay is mounted.

Why: ``/proc/self/mountinfo`` shows, for a bind mount, the source's path inside its file
system (field 4): the project checkout, the host's temp and cache directories (with pids
and random names). Each bound directory (``/etc``, ``/.ptsup``, ``/.ptbase``) is replaced by
a read-only overlay of itself, whose entry shows ``/`` and options naming sandbox paths only,
and so is each read-only package directory under ``/opt/ro`` (``Template.ro_dirs``),
and the binds are moved under one tmpfs that is then detached (one umount for all: each
waits for an RCU grace period). The egress proxy's socket (``allowlist`` mode) cannot be
reached through an overlay, so its bind is detached too and the forwarder connects through
an ``O_PATH`` fd kept open (:func:`forwarder_fds`; after ptinit, its number comes in
``POSTTRAIN_PROXY_FD``).

Guarantees: afterwards no mount of the sandbox's namespace (nor of any namespace copied
from it: commands, the snippet server) has a host directory as its root; the content under
each path is unchanged and read-only.

Does not: hide ``/usr`` (its root is ``/usr``, the same path inside), or a base on
overlayfs (the work overlay on top would nest one overlay too deep; its bind is kept).

Stdlib-only and import-light: bound read-only into the sandbox, run by the supervisor.
"""

import ctypes
import os

from command import libc, mount

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_MOVE = 1, 2, 4, 8, 8192
OVERLAYFS_MAGIC = 0x794C7630
HIDDEN = ("/etc", "/.ptsup", "/.ptbase")
RO_ROOT = "/opt/ro"  # template.RO_ROOT: each entry is a read-only host bind (ro_dirs)
PROXY = "/run/posttrain-proxy.sock"  # forwarder.PROXY: where the host proxy is bound
_PROXY_FD: list = []


def hide_host_paths() -> None:
    for path in ("/.ptempty", "/.ptstage", "/.ptgone"):
        os.mkdir(path, 0o700 if path != "/.ptempty" else 0o755)
    mount("tmpfs", "/.ptgone", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=700")
    ro = [f"{RO_ROOT}/{n}" for n in sorted(os.listdir(RO_ROOT))] if os.path.isdir(RO_ROOT) else []
    for i, path in enumerate(HIDDEN + tuple(ro)):
        if path == "/.ptbase" and _on_overlayfs(path):
            continue
        mount("overlay", "/.ptstage", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
              f"lowerdir={path}:/.ptempty,userxattr")
        os.mkdir(f"/.ptgone/{i}", 0o700)
        mount(path, f"/.ptgone/{i}", None, MS_MOVE)
        mount("/.ptstage", path, None, MS_MOVE)
    if os.path.exists(PROXY):
        _PROXY_FD.append(os.open(PROXY, os.O_PATH | os.O_CLOEXEC))
        os.close(os.open("/.ptgone/proxy", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        mount(PROXY, "/.ptgone/proxy", None, MS_MOVE)
    if libc.umount2(b"/.ptgone", 2) != 0:  # MNT_DETACH
        raise OSError("cannot detach the host binds")


def forwarder_fds() -> str:
    """In the forwarder's process: close every fd from 3 up but the proxy's; the path to
    connect to (the socket's own path when nothing was hidden)."""
    fd = _PROXY_FD[0] if _PROXY_FD else int(os.environ.get("POSTTRAIN_PROXY_FD", "-1"))
    if fd < 3:
        os.closerange(3, 65536)
        return PROXY
    os.closerange(3, fd)
    os.closerange(fd + 1, 65536)
    return f"/proc/self/fd/{fd}"


def _on_overlayfs(path: str) -> bool:
    buf = ctypes.create_string_buffer(256)  # struct statfs; f_type is its first field
    return libc.statfs(path.encode(), buf) == 0 and int.from_bytes(buf.raw[:8], "little") == OVERLAYFS_MAGIC
