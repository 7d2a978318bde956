"""What bubblewrap binds into a sandbox, staged where the sandbox user can reach it.

What it is: :func:`supervisor_dir` copies the package's Python sources (the supervisor and
every module it imports inside the sandbox) into this process's cache root; :func:`ptinit`
copies the compiled native front there. ``launch.py`` binds these copies, never the
installed package or the build cache.

Why: bubblewrap runs as the unprivileged sandbox uid, and a bind source must be reachable
by it. A clone under a directory that uid cannot traverse (a ``mktemp -d`` folder, anything
under ``/root``, a home directory at 0750) failed every sandbox start with "peer closed the
control socket". The cache root is ours and handed to the sandbox user (``template.share_with``),
so the sandbox no longer depends on the permissions above the package.

Guarantees: each is copied once per process (a few ms) and renamed into place whole; the
copies are read-only files (0444, ptinit 0555) inside the 0700 cache root.

Does not: notice source edits made after the first copy in a long-running process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

from .template import cache_root

PKG_DIR = Path(__file__).resolve().parent
_lock = threading.Lock()
_staged: dict = {}


def _once(key: str, build) -> Path:
    with _lock:
        root = cache_root()
        path = _staged.get((key, root))
        if path is None or not path.exists():
            path = _staged[(key, root)] = build(root)
        return path


def _build_sources(root: Path) -> Path:
    dest = root / "sup"
    tmp = Path(tempfile.mkdtemp(dir=root, prefix="sup-tmp-"))
    for src in PKG_DIR.glob("*.py"):
        shutil.copyfile(src, tmp / src.name)
        os.chmod(tmp / src.name, 0o444)
    os.chmod(tmp, 0o755)  # owner-writable: rmtree at exit must be able to empty it
    os.rename(tmp, dest)
    return dest


def supervisor_dir() -> Path:
    """A copy of the sandbox package's sources that the sandbox user can read."""
    return _once("sources", _build_sources)


def ptinit(binary: str | None) -> str | None:
    """A copy of the compiled ptinit (``None`` stays ``None``) that the sandbox user can run."""
    if binary is None:
        return None

    def build(root: Path) -> Path:
        dest = root / Path(binary).name
        fd, tmp = tempfile.mkstemp(dir=root, prefix=".ptinit-")
        os.close(fd)
        shutil.copyfile(binary, tmp)
        os.chmod(tmp, 0o555)
        os.rename(tmp, dest)
        return dest

    return str(_once(f"ptinit:{binary}", build))
