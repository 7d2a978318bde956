"""Permissions audit: ``terminal.world_writable-v1`` — find world-writable entries and fix them.

Trains: ``find -perm -o+w``, ``chmod o-w`` (removing one bit, keeping the others), and
reporting. ``srv/`` holds files and folders with assorted modes, some world-writable.
Difficulty 1: remove the world-write bit from every world-writable regular file (all other
bits kept: 666 → 664, 777 → 775, 646 → 644); 2: directories too, and write ``audit.txt``
listing the fixed paths (relative, e.g. ``srv/a``), sorted, one per line; 3: sticky
directories (mode 1777, shared drop folders) are exempt and must stay as they are.

Reward: one ``mode`` predicate per entry to fix, the audit as graded lines (2+); guarded by
the modes of every other entry and by the file contents left unchanged.

Probes (≤ 0.05): ``chmod_go_w_everything`` (``chmod -R go-w``: other entries' group bits lost),
``chmod_755_all``, plus the terminal and generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task, write

WW_FILE = ["666", "777", "646", "662", "606"]
OK_FILE = ["644", "664", "600", "755", "640", "660"]


def _build(rng: random.Random, d: int):
    files, modes, fixed = {}, {}, {}
    dirs = ["srv/data", "srv/www", "srv/tmp"]
    for i in range(4 + 2 * d):
        path = f"{rng.choice(dirs)}/f{i}.{rng.choice(['txt', 'sh', 'cfg'])}"
        files[path] = f"content {i} {rng.randint(0, 999)}\n"
        ww = rng.random() < 0.5 or i == 0
        modes[path] = rng.choice(WW_FILE if ww else OK_FILE)
        if ww:
            fixed[path] = f"{int(modes[path], 8) & ~0o002:o}"
    files["srv/data/shared.txt"], modes["srv/data/shared.txt"] = "team file\n", "664"  # group-writable, stays
    for dr in dirs:
        modes[dr] = "755"
    if d >= 2:
        modes["srv/www"] = rng.choice(["777", "757"])
        fixed["srv/www"] = f"{int(modes['srv/www'], 8) & ~0o002:o}"
    if d >= 3:
        modes["srv/tmp"] = "1777"
    preds = [{"op": "mode", "path": p, "mode": m} for p, m in fixed.items()]
    if d >= 2:
        preds.append({"op": "lines_match", "path": "audit.txt", "lines": sorted(fixed)})
    preds += [{"op": "mode", "path": p, "mode": m, "guard": True} for p, m in modes.items() if p not in fixed]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    text = {1: "Remove the world-write permission bit from every world-writable regular file under srv/, keeping "
               "all their other permission bits",
            2: "Remove the world-write permission bit from every world-writable file and directory under srv/ "
               "(keep all other bits), and write audit.txt listing the paths you fixed (like srv/www), sorted, one "
               "per line",
            3: "Remove the world-write permission bit from every world-writable file and directory under srv/ "
               "(keep all other bits), except sticky directories (like mode 1777), which stay as they are; write "
               "audit.txt listing the paths you fixed (like srv/www), sorted, one per line"}[d]
    return tree_task(DOMAIN_ID, d, text + ". Change nothing else.", files, preds, modes=modes,
                     hidden={"fixed": fixed})


def _reference(task):
    fixed = task.hidden["fixed"]
    acts = [shell(" && ".join(f"chmod {m} '{p}'" for p, m in fixed.items()))]
    return acts + ([write("audit.txt", "".join(f"{p}\n" for p in sorted(fixed)))] if task.difficulty >= 2 else [])


def _probes(task):
    return {"chmod_go_w_everything": [shell("chmod -R go-w srv && find srv -perm -o+w > audit.txt")],
            "chmod_755_all": [shell("chmod -R 755 srv && find srv | sort > audit.txt")]}


DOMAIN_ID = "terminal.world_writable-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
