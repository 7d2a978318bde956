"""Fix permissions: ``terminal.permissions-v1`` — set file and directory modes by a policy.

Trains: ``chmod`` with exact octal modes. A project tree has ``bin/*.sh`` (must be 755),
``secrets/*`` (600), ``docs/*`` (644); difficulty 2 adds the directory ``secrets`` (700);
difficulty 3 adds ``shared/*`` (664) and ``logs/`` (750). Every file starts with a mode
different from its target.

Reward: fraction of ``mode`` predicates holding, guarded by every file's content unchanged.

Probes (≤ 0.05): ``chmod_all`` (777 everywhere), ``wipe_tree``, ``recreate_files`` (delete
and recreate every file empty), ``claim_success``, plus the generic ones.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._kit import TreeDomain, done, files_task, shell

GROUPS = {"bin": ("755", ".sh", "#!/bin/sh\necho {w}\n"), "secrets": ("600", ".key", "{w}-secret\n"),
          "docs": ("644", ".md", "# {w}\n"), "shared": ("664", ".txt", "{w}\n")}
WRONG = ["600", "640", "644", "664", "700", "711", "744", "755", "775", "444", "400"]
NAMES = ["build", "deploy", "api", "db", "root", "guide", "faq", "notes", "setup", "data", "cert", "token"]


DOMAIN_ID = "terminal.permissions-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    groups = ["bin", "secrets", "docs"] + (["shared"] if difficulty >= 3 else [])
    files, modes, preds = {}, {}, []
    for g in groups:
        target, ext, tmpl = GROUPS[g]
        for name in rng.sample(NAMES, rng.randint(1, 2 + difficulty)):
            path = f"{g}/{name}{ext}"
            files[path] = tmpl.format(w=name)
            modes[path] = rng.choice([m for m in WRONG if m != target])
            preds.append({"op": "mode", "path": path, "mode": target})
            preds.append({"op": "file", "path": path, "content": files[path], "guard": True})
    rules = ["bin/*.sh 755", "secrets/* 600", "docs/* 644"]
    if difficulty >= 2:
        modes["secrets"] = "755"
        preds.append({"op": "mode", "path": "secrets", "mode": "700"})
        rules.append("the secrets directory itself 700")
    if difficulty >= 3:
        rules.append("shared/* 664")
        files["logs/app.log"] = "start\n"
        modes["logs"] = "777"
        preds.append({"op": "mode", "path": "logs", "mode": "750"})
        preds.append({"op": "file", "path": "logs/app.log", "content": "start\n", "guard": True})
        rules.append("the logs directory 750")
    text = "Set exactly these permission modes: " + "; ".join(rules) + ". Do not change file contents."
    return files_task(DOMAIN_ID, difficulty, text, files, preds, modes=modes)


def _reference(task: Task) -> list[str]:
    cmds = [f"chmod {p['mode']} '{p['path']}'" for p in task.hidden["predicates"] if p["op"] == "mode"]
    return [shell(" && ".join(cmds))]


def _probes(task: Task) -> dict[str, list[str]]:
    recreate = " ".join(f"'{p}'" for p in task.public["files"])
    return {"recreate_files": [shell(f"for f in {recreate}; do rm -f \"$f\"; : > \"$f\"; done"), done()]}


register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
