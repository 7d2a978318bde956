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
from posttrain.envs.tool_env import format_call

from ._common import common_probes, done, shell, terminal_env, tree_task

SERVICES = ["auth", "billing", "cache", "db", "gateway", "mailer", "search", "worker"]
LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"]
WORDS = ["timeout", "retry", "ok", "slow", "failed", "started", "stopped", "queued"]


@register_domain
class Extract:
    id = "terminal.extract-v1"
    family = "terminal"
    difficulties = (1, 2, 3)
    env_kind = "sandbox"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        preds = [{"op": "lines_match", "path": "report.txt", "lines": lines},
                 {"op": "file", "path": "report.txt", "content": "\n".join(lines) + "\n", "lines": True},
                 {"op": "file", "path": "data/app.log", "content": log, "guard": True}]
        return tree_task(self.id, difficulty, ask, {"data/app.log": log}, preds,
                         hidden={"lines": lines, "services": services})

    def make_env(self, task: Task):
        return terminal_env(self.id, task)

    def reference_actions(self, task: Task) -> list[str]:
        body = "\n".join(task.hidden["lines"]) + "\n"
        return [format_call("write_file", {"path": "report.txt", "content": body}), done()]

    def solve(self, task: Task) -> str:
        return done()


    def probes(self, task: Task) -> dict:
        svc = task.hidden["services"]
        zero = "".join(f"{s} 0\n" for s in sorted(svc))
        every = "".join(f"{s} {n}\n" for s in sorted(svc) for n in range(10))
        guess = "".join(f"{line}\n" for line in task.hidden["lines"])
        return {
            "copy_log": [shell("cp data/app.log report.txt"), done()],
            "all_services_zero": [format_call("write_file", {"path": "report.txt", "content": zero}), done()],
            "every_count": [format_call("write_file", {"path": "report.txt", "content": every}), done()],
            "edit_log": [format_call("write_file", {"path": "data/app.log", "content": "x\n"}),
                         format_call("write_file", {"path": "report.txt", "content": guess}), done()],
            **common_probes(task),
        }
