"""Where the sandbox finds the CAD packages: this interpreter's site-packages, or a mirror of
the part build123d needs in a place the sandbox user can reach.

Why: the isolated sandbox binds ``/opt/ro/cad`` from a host directory, and bubblewrap runs as
the unprivileged sandbox uid, so the bind source must be reachable by it (a descriptor does
not help: bubblewrap resolves ``/proc/self/fd/N`` to the path and is refused). A checkout
under a directory that uid cannot traverse (a ``mktemp -d`` folder, anything under
``/root``) has its venv there too; then :func:`cad_site` mirrors the packages build123d
imports (their top-level folders and vendored ``*.libs``, about 0.9 GB) into
``/var/tmp/posttrain-cad-<key>`` (mode 0755), as hard links where the file system allows (a
second or two) and as a copy where it does not, once per machine and key.

Guarantees: the mirror is built in a temporary folder and renamed into place whole, so a
concurrent or killed build never leaves a half mirror under the real name; its files are
the venv's own (hard links) or byte copies, read-only to the sandbox through the bind.
Does not: notice packages upgraded in place under the same build123d version (the key is the
site path and build123d's version; delete the mirror to rebuild it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from posttrain.core.errors import SandboxError

MIRROR_BASE = Path("/var/tmp")
# Imports build123d in a child and prints the top-level entries of site-packages it loaded.
_CLOSURE = """import json, os, sys
import build123d
site = sys.argv[1]
tops = {os.path.relpath(m.__file__, site).split(os.sep)[0] for m in list(sys.modules.values())
        if getattr(m, "__file__", None) and m.__file__.startswith(site + os.sep)}
tops |= {d for d in os.listdir(site) if d.endswith(".libs")}
print(json.dumps(sorted(tops)))
"""


def reachable(path: Path) -> bool:
    """Whether any user may traverse every directory above ``path`` (and ``path`` itself)."""
    for p in [path, *path.parents]:
        if not os.stat(p).st_mode & stat.S_IXOTH:
            return False
    return True


@lru_cache(maxsize=1)
def cad_site() -> str:
    """The directory bound at ``/opt/ro/cad``: site-packages itself when the sandbox user can
    reach it, else the mirror (built on first use)."""
    spec = importlib.util.find_spec("build123d")  # found without importing it (5 s)
    if spec is None or not spec.origin:
        raise SandboxError("build123d is not installed: install the 'cad' extra (make setup)")
    site = Path(spec.origin).resolve().parent.parent
    return str(site if reachable(site) else _mirror(site))


def _mirror(site: Path) -> Path:
    from importlib.metadata import version

    key = hashlib.sha256(f"{site}|{version('build123d')}".encode()).hexdigest()[:16]
    dest = MIRROR_BASE / f"posttrain-cad-{key}"
    if dest.is_dir():
        return dest
    out = subprocess.run([sys.executable, "-c", _CLOSURE, str(site)], capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        raise SandboxError(f"cannot list build123d's packages: {out.stderr[-500:]}")
    tmp = Path(tempfile.mkdtemp(dir=MIRROR_BASE, prefix=f".posttrain-cad-{key}-"))
    try:
        for top in json.loads(out.stdout):
            src = site / top
            if src.is_dir():
                shutil.copytree(src, tmp / top, copy_function=_link_or_copy, symlinks=True)
            elif src.is_file():
                _link_or_copy(str(src), str(tmp / top))
        for d in [tmp, *(p for p in tmp.rglob("*") if p.is_dir() and not p.is_symlink())]:
            d.chmod(0o755)
        tmp.rename(dest)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not dest.is_dir():  # not a concurrent build that won the rename
            raise
    return dest


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links refused: a byte copy
        shutil.copy2(src, dst)
    return dst
