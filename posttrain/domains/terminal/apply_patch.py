"""Apply a unified diff without git: ``terminal.apply_patch-v1``.

Trains: ``patch -p1 < fix.diff`` (strip level, dry runs, offsets) and checking the result.
``fix.diff`` (``a/``/``b/`` prefixes) changes files of ``src/``. Difficulty 1: one file, one
hunk; 2: two or three files, several hunks; 3: the files have drifted since the diff was made
(lines inserted above the hunks, so ``patch`` applies them at an offset) and one diff is for
a file that must be created.

Reward: one predicate per patched file: the exact expected content, *and* no ``.orig`` /
``.rej`` left next to it; guarded by the files the diff does not touch, and the diff itself,
left unchanged.

Probes (≤ 0.05): ``reverse_patch`` (``patch -R``), ``first_file_only_wrong_strip``
(``patch -p0``: nothing applies), ``delete_patched_files``, plus the terminal and generic
probes.
"""

from __future__ import annotations

import difflib
import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task

WORDS = ["total", "count", "limit", "offset", "scale", "ratio", "index", "width"]


def _source(rng, n: int) -> list[str]:
    return [f"{rng.choice(WORDS)}_{i} = {rng.randint(0, 999)}\n" for i in range(n)]


def _edit(rng, lines: list[str], hunks: int) -> list[str]:
    out = list(lines)
    for k in sorted(rng.sample(range(2, len(lines) - 2), hunks), reverse=True):
        out[k] = out[k].replace(" = ", " = 1 + ")
        if rng.random() < 0.5:
            out.insert(k + 1, f"# checked {rng.randint(0, 99)}\n")
    return out


def _build(rng: random.Random, d: int):
    files, after, diffs = {}, {}, []
    for name in rng.sample(["config", "model", "views", "tasks", "utils"], 1 if d == 1 else rng.randint(2, 3)):
        path = f"src/{name}.py"
        before = _source(rng, rng.randint(10, 16) + 8 * (d >= 2))
        new = _edit(rng, before, 1 if d == 1 else 2)
        diffs += difflib.unified_diff(before, new, f"a/{path}", f"b/{path}")
        drift = [f"# header {rng.randint(0, 9)}\n" for _ in range(rng.randint(2, 4))] if d >= 3 else []
        files[path] = "".join(drift + before)
        after[path] = "".join(drift + new)
    if d >= 3:
        created = [f"VERSION = '{rng.randint(1, 9)}.{rng.randint(0, 9)}'\n"]
        diffs += difflib.unified_diff([], created, "/dev/null", "b/src/version.py")
        after["src/version.py"] = "".join(created)
    files["src/untouched.py"] = "".join(_source(rng, 5))
    files["fix.diff"] = "".join(diffs)
    preds = [{"op": "all", "of": [{"op": "file", "path": p, "content": c},
                                  {"op": "absent", "path": p + ".orig"}, {"op": "absent", "path": p + ".rej"}]}
             for p, c in after.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in after]
    text = ("Apply the unified diff fix.diff (paths prefixed a/ and b/) to the files in /work. Leave no .orig or "
            ".rej files behind and keep fix.diff.")
    return tree_task(DOMAIN_ID, d, text, files, preds, hidden={"after": after})


def _reference(task):
    return [shell("patch -p1 --no-backup-if-mismatch < fix.diff && find src -name '*.orig' -delete")]


def _probes(task):
    return {"reverse_patch": [shell("patch -R -p1 -f --no-backup-if-mismatch < fix.diff; rm -f src/*.rej src/*.orig")],
            "first_file_only_wrong_strip": [shell("patch -p0 -f < fix.diff; rm -f src/*.rej src/*.orig")],
            "delete_patched_files": [shell(" ; ".join(f"rm -f {p}" for p in task.hidden["after"]))]}


DOMAIN_ID = "terminal.apply_patch-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
