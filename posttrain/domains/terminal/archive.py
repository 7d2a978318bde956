"""Archive and compress a folder: ``terminal.archive-v1``.

Trains: ``tar`` with gzip, relative member names, exclusions. ``project/`` holds a small
tree; the policy writes ``backup.tar.gz``, a gzip-compressed tar whose regular-file members
are exactly the project's files under the prefix ``project/``. Difficulty 2 excludes
``*.log`` files; difficulty 3 also excludes the ``project/tmp/`` directory and asks for the
archive to be listed into ``backup.txt`` (member file names, sorted, one per line).

Reward: ``members`` = right members with the right bytes / max(expected, archived files)
(0 unless the file starts with the gzip magic and decompresses as a tar; extra members lower
it), plus at difficulty 3 the listing (graded lines, times ``members``); guarded by the project left unchanged. The archive is read on
the host from bytes (never extracted; at most 4 MiB of members, 200 entries).

Probes (≤ 0.05): ``plain_tar`` (an uncompressed tar named .tar.gz), ``gzip_one_file``
(a gzip of a concatenation, not a tar), ``empty_archive``, plus the terminal and generic
probes (wiping the tree breaks the guard).
"""

from __future__ import annotations

import io
import random
import tarfile

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, graded_lines, read, shell, text_of, tree_task

PARTS = ["main", "util", "config", "readme", "data", "notes", "api", "model"]
CAP_BYTES, CAP_MEMBERS = 4 << 20, 200


def _build(rng: random.Random, d: int):
    files = {}
    for name in rng.sample(PARTS, 3 + d):
        sub = rng.choice(["", "src/", "docs/"])
        files[f"project/{sub}{name}.txt"] = f"{name} {rng.getrandbits(40):010x}\n"
    logs = {f"project/{n}.log": f"log {rng.randint(0, 999)}\n" for n in rng.sample(PARTS, 2)}
    tmp = {"project/tmp/cache.bin": f"cache {rng.randint(0, 99)}\n"} if d >= 3 else {}
    files.update(logs)
    files.update(tmp)
    keep = {p: c for p, c in files.items() if (d < 2 or p not in logs) and p not in tmp}
    text = ("Create backup.tar.gz in /work: a gzip-compressed tar archive of the folder project/ "
            "(member names starting with project/)")
    if d >= 2:
        text += ", leaving out every *.log file"
    if d >= 3:
        text += (" and the project/tmp directory; then write backup.txt listing the archive's file "
                 "members (regular files only), sorted, one per line")
    preds = [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    return tree_task(DOMAIN_ID, d, text + ". Do not modify project/.", files, preds,
                     hidden={"members": keep})


def archive_members(raw: bytes | None) -> dict[str, bytes] | None:
    """Regular-file members of a .tar.gz (name → bytes); None if it is not one (bounded)."""
    if not raw or raw[:2] != b"\x1f\x8b":
        return None
    out, total = {}, 0
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r|gz") as tf:
            for i, m in enumerate(tf):
                total += max(m.size, 0)
                if i >= CAP_MEMBERS or total > CAP_BYTES:
                    return None
                if m.isfile():
                    f = tf.extractfile(m)
                    out[m.name.removeprefix("./")] = f.read() if f else b""
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return None
    return out


def _verify(env, trajectory):
    h = env.task.hidden
    got = archive_members(read(env, "backup.tar.gz", max_bytes=1 << 20))
    want = {p: c.encode() for p, c in h["members"].items()}
    members = 0.0
    if got is not None:
        members = sum(got.get(p) == b for p, b in want.items()) / max(len(want), len(got), 1)
    extra = {"members": members}
    if env.task.difficulty >= 3:  # a listing only counts together with a real archive
        extra["listing"] = graded_lines(text_of(env, "backup.txt"), sorted(want)) * members
    return fs_score(h["predicates"], collect_state(env.sandbox), DOMAIN_ID, extra=extra)


def _excl(task):
    d = task.difficulty
    return (" --exclude='*.log'" if d >= 2 else "") + (" --exclude=project/tmp" if d >= 3 else "")


def _reference(task):
    cmd = f"tar -czf backup.tar.gz{_excl(task)} project"
    if task.difficulty >= 3:
        cmd += " && tar -tzvf backup.tar.gz | awk '$1 ~ /^-/ {print $NF}' | sort > backup.txt"
    return [shell(cmd)]


def _probes(task):
    return {"plain_tar": [shell(f"tar -cf backup.tar.gz{_excl(task)} project && tar -tf backup.tar.gz | sort > backup.txt")],
            "gzip_one_file": [shell("find project -type f | sort | xargs cat | gzip > backup.tar.gz")],
            "empty_archive": [shell("tar -czf backup.tar.gz -T /dev/null")]}


DOMAIN_ID = "terminal.archive-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
