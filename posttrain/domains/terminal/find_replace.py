"""Find and replace across files: ``terminal.find_replace-v1``.

Trains: ``sed -i`` with word boundaries over a set of files chosen with ``find``/``grep -l``.
``app/`` holds config and source files mentioning a host name; every whole-word occurrence
of the old name must become the new one in the asked files. Difficulty 2 adds look-alikes
that must not change (``<old>_backup``, ``pre<old>``); difficulty 3 restricts the change to
``*.conf`` files (``*.md`` notes mentioning the name stay as they are) and to lines that
are not comments (``#`` first).

Reward: one ``file`` predicate per file that must change (exact new content), guarded by
every file that must not change left unchanged.

Probes (≤ 0.05): ``naive_sed`` (difficulty ≥ 2: substring replace, no word boundary, all files),
``delete_lines`` (lines with the name deleted), plus the terminal and generic probes.
"""

from __future__ import annotations

import random
import re

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task, write

HOSTS = ["dbhost", "cachebox", "mailer", "queuesrv", "authnode", "logsink"]
KEYS = ["url", "backup", "primary", "fallback", "mirror", "target"]


def _file(rng, old: str, d: int, comment_ok: bool) -> str:
    lines = []
    for k in rng.sample(KEYS, 4):
        r = rng.random()
        if d >= 2 and r < 0.25:
            lines.append(f"{k} = {old}_backup:{rng.randint(1000, 9999)}")
        elif d >= 2 and r < 0.4:
            lines.append(f"{k} = pre{old}.local")
        elif comment_ok and r < 0.55:
            lines.append(f"# {k} used to be {old}")
        else:
            lines.append(f"{k} = {old}:{rng.randint(1000, 9999)}")
    return "\n".join(lines) + "\n"


def _replace(text: str, old: str, new: str, d: int) -> str:
    pat = re.compile(rf"(?<![A-Za-z0-9_]){old}(?![A-Za-z0-9_])" if d >= 2 else re.escape(old))
    return "".join(ln if d >= 3 and ln.startswith("#") else pat.sub(new, ln)
                   for ln in text.splitlines(keepends=True))


def _build(rng: random.Random, d: int):
    old, new = rng.sample(HOSTS, 2)
    files = {}
    for i, name in enumerate(rng.sample(["web", "worker", "cron", "api", "batch"], 2 + d)):
        files[f"app/{name}.conf"] = _file(rng, old, d, d >= 3)
        if i % 2 == 0:
            f = f"app/sub/{name}.conf"
            files[f] = _file(rng, old, d, d >= 3)
    if d >= 3:
        files["app/NOTES.md"] = f"We moved off {old} last year.\n"
    targets = {p: _replace(c, old, new, d) for p, c in files.items() if p.endswith(".conf")}
    targets = {p: c for p, c in targets.items() if c != files[p]}
    preds = [{"op": "file", "path": p, "content": c} for p, c in targets.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in targets]
    text = f"Replace the host name {old} with {new} in every file under app/ (sub-folders included)"
    if d >= 2:
        text += f", whole words only ({old}_backup or pre{old} are other names and stay)"
    if d >= 3:
        text += "; only in *.conf files, and not on comment lines (lines starting with #)"
    return tree_task(DOMAIN_ID, d, text + ". Change nothing else.", files, preds,
                     hidden={"targets": targets, "old": old, "new": new})


def _reference(task):
    # Up to 4 files per turn: level 3 has up to 8 files to change, and one write per turn
    # would not finish within the default 8-turn episode (``episode.max_turns``).
    writes = [write(p, c) for p, c in task.hidden["targets"].items()]
    return ["\n".join(writes[i:i + 4]) for i in range(0, len(writes), 4)]


def _probes(task):
    o, n = task.hidden["old"], task.hidden["new"]
    naive = {"naive_sed": [shell(f"grep -rl {o} app | xargs sed -i 's/{o}/{n}/g'")]} if task.difficulty >= 2 else {}
    return {**naive, "delete_lines": [shell(f"grep -rl {o} app | xargs sed -i '/{o}/d'")]}


DOMAIN_ID = "terminal.find_replace-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
