"""Extract and transform data with shell tools: ``terminal.extract-v1``.

Trains: grep/awk/sort/uniq-style processing of a log file. ``data/app.log`` holds lines
``DATE LEVEL SERVICE message``; the policy writes ``report.txt`` with one ``SERVICE COUNT``
line per service that has at least one line of the asked level, sorted by service name.
Difficulty 2 restricts to a date range; difficulty 3 asks for a second level too (counts of
either) and sorts by count descending, then name.

Reward: the graded ``lines_match`` predicate on report.txt (expected lines found in order /
max(expected, produced): padding with extra lines lowers it) and an exact-file predicate,
guarded by the log being left unchanged.

Probes (≤ 0.05): ``copy_log`` (the log itself as the report), ``all_services_zero``/
``every_count`` (every service with every count 0-9: padding), ``edit_log`` (rewrite the
log to match a guessed report), plus the terminal and generic probes.
"""

from __future__ import annotations

import random
from collections import Counter

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._kit import TreeDomain, done, files_task, report_predicates, shell, write, write_lines

SERVICES = ["auth", "billing", "cache", "db", "gateway", "mailer", "search", "worker"]
LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"]
WORDS = ["timeout", "retry", "ok", "slow", "failed", "started", "stopped", "queued"]


DOMAIN_ID = "terminal.extract-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    services = rng.sample(SERVICES, rng.randint(3, 6))
    rows = []
    for _ in range(rng.randint(20, 30 + 20 * difficulty)):
        day = rng.randint(1, 28)
        rows.append((f"2024-03-{day:02d}", rng.choice(LEVELS), rng.choice(services),
                     " ".join(rng.sample(WORDS, 2))))
    levels = ["ERROR"] + (["WARN"] if difficulty >= 3 else [])
    lo, hi = (1, 28) if difficulty == 1 else sorted(rng.sample(range(1, 29), 2))
    keep = [r for r in rows if r[1] in levels and lo <= int(r[0][-2:]) <= hi]
    counts = Counter(r[2] for r in keep)
    if difficulty >= 3:
        order = sorted(counts, key=lambda s: (-counts[s], s))
    else:
        order = sorted(counts)
    lines = [f"{s} {counts[s]}" for s in order]
    log = "".join(f"{d} {lv} {s} {m}\n" for d, lv, s, m in rows)
    ask = f"Count the {' or '.join(levels)} lines of data/app.log per service"
    if difficulty >= 2:
        ask += f", only for dates 2024-03-{lo:02d} to 2024-03-{hi:02d} inclusive"
    ask += (". Write report.txt with one line 'SERVICE COUNT' per service that has any, sorted "
            + ("by count descending, then service name." if difficulty >= 3 else "by service name."))
    preds = report_predicates("report.txt", lines, {"data/app.log": log})
    return files_task(DOMAIN_ID, difficulty, ask, {"data/app.log": log}, preds,
                      hidden={"lines": lines, "services": services})


def _reference(task: Task) -> list[str]:
    return [write_lines("report.txt", task.hidden["lines"])]


def _probes(task: Task) -> dict[str, list[str]]:
    svc = task.hidden["services"]
    zero = "".join(f"{s} 0\n" for s in sorted(svc))
    every = "".join(f"{s} {n}\n" for s in sorted(svc) for n in range(10))
    guess = "".join(f"{line}\n" for line in task.hidden["lines"])
    return {
        "copy_log": [shell("cp data/app.log report.txt"), done()],
        "all_services_zero": [write("report.txt", zero), done()],
        "every_count": [write("report.txt", every), done()],
        "edit_log": [write("data/app.log", "x\n"), write("report.txt", guess), done()],
    }


register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
