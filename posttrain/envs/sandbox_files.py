"""A sandbox's ``/work`` as plain data, and back: what an episode checkpoint keeps of it.

What it is: :func:`export_work` reads every directory, file (bytes and mode) and symlink under
``/work`` through the sandbox protocol (``list_files``, ``read_file``, one ``find`` for modes
and link targets), so it works on every backend and outlives the sandbox; :func:`import_work`
makes another sandbox's ``/work`` exactly that (everything else removed first).

Why not the backend's own ``snapshot()``: a snapshot id names state inside one sandbox, and
the checkpoint must survive the sandbox (it broke) or the process (it was killed).

Guarantees: refuses (``SandboxError``) a tree over ``max_bytes`` or one that ``list_files``
truncated, rather than saving part of it; modes keep their permission bits. Not covered:
state outside ``/work`` (``/tmp``, running processes), file times, hard links (saved as copies).
"""

from __future__ import annotations

import shlex
from typing import Any

from posttrain.core.errors import SandboxError

MAX_BYTES = 64 * 1024 * 1024


def _modes_and_links(sb: Any) -> dict[str, tuple[str, str]]:
    res = sb.exec(["find", "/work", "-mindepth", "1", "-printf", r"%P\t%m\t%l\n"], timeout=30)
    if res.exit_code != 0:
        raise SandboxError(f"cannot list /work for a checkpoint: {res.stderr[:300]}")
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            out[parts[0]] = (parts[1], parts[2])
    return out


def export_work(sb: Any, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """``{"dirs": [path], "files": {path: (mode, bytes)}, "links": {path: target}}``."""
    entries = sb.list_files("")
    if getattr(entries, "truncated", False):
        raise SandboxError("/work has too many entries to checkpoint")
    meta = _modes_and_links(sb)
    dirs, files, links, total = [], {}, {}, 0
    for e in entries:
        if e.kind == "dir":
            dirs.append(e.path)
        elif e.kind == "link":
            links[e.path] = meta.get(e.path, ("777", ""))[1]
        elif e.kind == "file":
            total += e.size
            if total > max_bytes:
                raise SandboxError(f"/work holds more than {max_bytes} bytes: not checkpointed")
            mode = int(meta.get(e.path, ("644", ""))[0], 8)
            files[e.path] = (mode, sb.read_file(e.path, max_bytes=max_bytes))
    return {"dirs": sorted(dirs), "files": files, "links": links}


def import_work(sb: Any, saved: dict[str, Any]) -> None:
    """Make ``/work`` of ``sb`` hold exactly ``saved`` (see :func:`export_work`)."""
    script = ["find /work -mindepth 1 -delete"]
    script += [f"mkdir -p {shlex.quote('/work/' + d)}" for d in saved["dirs"]]
    res = sb.exec(["sh", "-c", " && ".join(script)], timeout=60)
    if res.exit_code != 0:
        raise SandboxError(f"cannot restore /work: {res.stderr[:300]}")
    for path, (mode, data) in saved["files"].items():
        sb.write_file(path, data, mode)
    if saved["links"]:
        cmds = [f"ln -s {shlex.quote(t)} {shlex.quote('/work/' + p)}" for p, t in saved["links"].items()]
        res = sb.exec(["sh", "-c", " && ".join(cmds)], timeout=60)
        if res.exit_code != 0:
            raise SandboxError(f"cannot restore links in /work: {res.stderr[:300]}")
