"""Reorganise files: ``terminal.organize-v1`` — sort an inbox into folders by file type.

Trains: moving files with the shell according to a rule, without losing or altering them.
``inbox/`` holds 4-10 files with mixed extensions; each must end up in a folder named after
its extension (``inbox/a.csv`` → ``csv/a.csv``). Difficulty 2 lower-cases the file names on
the way (``inbox/Notes.TXT`` → ``txt/notes.txt``); difficulty 3 also deletes every ``.tmp``
file and removes the emptied ``inbox``.

Reward: fraction of predicates holding: one ``moved`` predicate per file (content at the new
path *and* the old path gone), plus at difficulty 3 one clean-up predicate (no ``.tmp`` file,
no inbox, *and* every file moved — so deleting everything earns nothing).

Probes (≤ 0.05): ``copy_not_move`` (copies, sources left behind), ``wipe_tree``,
``touch_expected`` (empty files at the expected paths), ``chmod_all``, ``claim_success``,
plus the generic ones.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._kit import TreeDomain, done, files_task, shell

EXTS = ["txt", "csv", "log", "md", "json", "py"]
STEMS = ["alpha", "beta", "notes", "report", "data", "draft", "final", "todo", "plan", "idea", "misc", "q3"]


DOMAIN_ID = "terminal.organize-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    n = min(rng.randint(4, 6 + 2 * difficulty), len(STEMS) - 2)  # d3 also needs 2 tmp stems
    files, preds, moves = {}, [], []
    stems = rng.sample(STEMS, n)
    for stem in stems:
        ext = rng.choice(EXTS)
        name = f"{stem}.{ext}"
        if difficulty >= 2 and rng.random() < 0.6:
            name = f"{stem.capitalize()}.{ext.upper()}"
        src = f"inbox/{name}"
        files[src] = f"{stem} {rng.randint(0, 10**6)}\n"
        dst = f"{ext}/{name.lower() if difficulty >= 2 else name}"
        preds.append({"op": "moved", "src": src, "dst": dst, "content": files[src]})
        moves.append((src, dst))
    rule = "Move every file of inbox/ into a folder named after its extension (inbox/a.csv -> csv/a.csv)"
    if difficulty >= 2:
        rule += ", lower-casing file names and extensions (inbox/A.TXT -> txt/a.txt)"
    tmps = []
    if difficulty >= 3:
        for stem in rng.sample([s for s in STEMS if s not in stems], 2):
            tmps.append(f"inbox/{stem}.tmp")
            files[tmps[-1]] = "scratch\n"
        clean = [{"op": "absent", "path": t} for t in tmps] + [{"op": "absent", "path": "inbox"}]
        preds.append({"op": "all", "of": clean + list(preds)})
        rule += "; delete the .tmp files and then the empty inbox/ directory"
    return files_task(DOMAIN_ID, difficulty, rule + ".", files, preds,
                      hidden={"moves": moves, "tmps": tmps})


def _script(task: Task, op: str = "mv") -> str:
    cmds = [f"mkdir -p '{d.rsplit('/', 1)[0]}' && {op} '{s}' '{d}'" for s, d in task.hidden["moves"]]
    if op == "mv" and task.hidden["tmps"]:
        cmds += [f"rm '{t}'" for t in task.hidden["tmps"]] + ["rmdir inbox"]
    return " && ".join(cmds)


def _reference(task: Task) -> list[str]:
    return [shell(_script(task))]


def _probes(task: Task) -> dict[str, list[str]]:
    return {"copy_not_move": [shell(_script(task, "cp")), done()]}


register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
