"""The sandbox's native front (``ptinit.c``): built at first use, cached, optional.

What it is: :func:`binary` compiles ``ptinit.c`` with the system C compiler into a cache
directory keyed by the source's hash (``$POSTTRAIN_SANDBOX_CACHE``, default
``/var/tmp/posttrain-sandbox-<uid>``) and returns the path, or ``None`` when no compiler is
available, the build fails, or ``POSTTRAIN_SANDBOX_NATIVE=0``. The isolated backend then
falls back to the pure-Python supervisor (same guarantees, slower cold start).
:func:`encode_request` is the host's half of ptinit's request format.

Why native: a cold ``exec`` otherwise waits for a Python interpreter to start inside the
sandbox (~10 ms of CPU) before the command can run; ptinit is ready in well under 1 ms and
also forks each command's reaper and process far more cheaply than a Python supervisor.

Guarantees: a binary is used only if it was built from exactly this source (hash in its
name), lives in a directory owned by us and not writable by anyone else (a planted binary
is never executed), and was renamed into place atomically after a successful build.

Does not: build anything when the compiler is missing (no error; the fallback is taken).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "ptinit.c"
CFLAGS = ("-O2", "-Wall", "-std=gnu11")
_lock = threading.Lock()
_built: dict = {}


def enabled() -> bool:
    return os.environ.get("POSTTRAIN_SANDBOX_NATIVE", "1") not in ("0", "false", "no")


def _cache_dir() -> Path | None:
    path = Path(os.environ.get("POSTTRAIN_SANDBOX_CACHE") or f"/var/tmp/posttrain-sandbox-{os.geteuid()}")
    try:
        path.mkdir(mode=0o755, parents=True, exist_ok=True)
        st = path.lstat()
    except OSError:
        return None
    # never run a binary from a directory someone else could have planted it in
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None
    return path


def binary() -> str | None:
    """Path of the compiled ptinit for this source, building it once; None if unavailable."""
    if not enabled():
        return None
    src = SOURCE.read_bytes()
    key = hashlib.sha256(src + " ".join(CFLAGS).encode() + b" static?").hexdigest()[:16]
    with _lock:
        if key in _built:
            return _built[key]
        _built[key] = _build(src, key)
        return _built[key]


def _build(src: bytes, key: str) -> str | None:
    cache = _cache_dir()
    cc = shutil.which("cc") or shutil.which("gcc")
    if cache is None:
        return None
    out = cache / f"ptinit-{key}"
    if out.is_file() and out.stat().st_uid == os.geteuid():
        return str(out)
    if cc is None:
        return None
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".ptinit-build-")
    os.close(fd)
    try:
        c_file = tmp + ".c"
        Path(c_file).write_bytes(src)
        for extra in (["-static"], []):  # static starts ~0.2 ms faster (no dynamic loader)
            proc = subprocess.run([cc, *CFLAGS, *extra, "-o", tmp, c_file], capture_output=True,
                                  timeout=120)
            if proc.returncode == 0:
                break
        os.unlink(c_file)
        if proc.returncode != 0:
            return None
        os.chmod(tmp, 0o755)
        os.rename(tmp, out)  # atomic: a concurrent builder's identical file is just replaced
        return str(out)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        for leftover in (tmp, tmp + ".c"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def encode_request(argv: list[str], env: dict, cwd: str, rlimits: dict, stdin: bool) -> bytes:
    """ptinit's request body: NUL-terminated fields (see ptinit.c)."""
    fields = ["1", cwd, "1" if stdin else "0", str(len(rlimits))]
    for name, value in rlimits.items():
        fields += [name, str(int(value))]
    fields += [str(len(argv)), *argv, str(len(env)), *(f"{k}={v}" for k, v in env.items())]
    for f in fields:
        if "\x00" in f:
            raise ValueError("NUL byte in a request field")
    return b"".join(f.encode("utf-8", "surrogateescape") + b"\0" for f in fields)


def send_request(sock, body: bytes, fds) -> None:
    """Send a request in packets of at most one chunk ('C' more, 'F' final); fds on the first."""
    from .wire import CHUNK

    pieces = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)] or [b""]
    for i, piece in enumerate(pieces):
        anc = []
        if i == 0 and fds:
            anc = [(1, 1, b"".join(int(fd).to_bytes(4, "little", signed=True) for fd in fds))]
        sock.sendmsg([(b"F" if i == len(pieces) - 1 else b"C") + piece], anc)
