"""Deduplicate files by content: ``terminal.dedupe-v1``.

Trains: finding identical files (``md5sum``/``sha256sum`` + ``sort``/``uniq``) and deleting
all but one copy. ``media/`` (nested from difficulty 2) holds groups of byte-identical files
under different names, among unique files; of each group the copy whose path sorts first
(byte order) must be kept and the others deleted. Difficulty 3 adds near-duplicates (same
size, one byte different) that are *not* duplicates.

Reward: one ``all`` predicate per duplicate group (the keeper holds its content and every
other copy is gone), guarded by the unique files left unchanged.

Probes (≤ 0.05): ``keep_last`` (keeps the last copy of each group), ``delete_all_copies``
(every member of every group deleted), ``delete_by_size`` (everything sharing a size
deleted but the first: near-duplicates lost, a guard fails), plus the terminal and generic
probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task

NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "k", "m", "n", "p", "q", "r", "s", "t"]


def _build(rng: random.Random, d: int):
    dirs = ["media"] + (["media/old", "media/new"] if d >= 2 else [])
    count = iter(range(10, 99))
    path = lambda: f"{rng.choice(dirs)}/{rng.choice(NAMES)}{next(count)}.dat"  # noqa: E731
    files, groups, unique = {}, [], {}
    for g in range(d + 1):
        body = f"blob {g} {rng.getrandbits(48):012x}\n"
        members = sorted({path() for _ in range(rng.randint(2, 3))})
        if len(members) < 2:
            members.append(members[0].replace(".dat", "_copy.dat"))
        for m in members:
            files[m] = body
        groups.append(members)
    for _ in range(2 + d):
        p = path()
        unique[p] = f"blob u {rng.getrandbits(48):012x}\n"
    if d >= 3:  # near-duplicates of the first group's content
        base = files[groups[0][0]]
        unique[path()] = base[:-2] + ("x" if base[-2] != "x" else "y") + "\n"
    files.update(unique)
    preds = [{"op": "all", "of": [{"op": "file", "path": g[0], "content": files[g[0]]}]
              + [{"op": "absent", "path": m} for m in g[1:]]} for g in groups]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in unique.items()]
    text = ("Some files under media/ are byte-identical copies of each other. For each set of identical "
            "files keep only the one whose path sorts first (plain byte order) and delete the others. "
            "Do not change or delete any other file.")
    return tree_task(DOMAIN_ID, d, text, files, preds, hidden={"groups": groups})


def _rm(paths):
    return shell("rm -f " + " ".join(f"'{p}'" for p in paths))


def _reference(task):
    return [_rm([m for g in task.hidden["groups"] for m in g[1:]])]


def _probes(task):
    groups = task.hidden["groups"]
    sizes = "find media -type f -printf '%s %p\\n' | sort | awk 'seen[$1]++ {print $2}' | xargs rm -f"
    return {"keep_last": [_rm([m for g in groups for m in g[:-1]])],
            "delete_all_copies": [_rm([m for g in groups for m in g])],
            "delete_by_size": [shell(sizes)]}


DOMAIN_ID = "terminal.dedupe-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
