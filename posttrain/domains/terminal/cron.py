"""Write a cron schedule file: ``terminal.cron_schedule-v1``.

Trains: translating plain-language schedules into the five crontab fields. ``jobs.txt``
describes jobs ("every day at 02:30", "every 15 minutes", "Mondays to Fridays at 18:05",
"on the 1st of each month at midnight"...); the policy writes ``schedule.cron`` with one
line ``MIN HOUR DOM MON DOW COMMAND`` per job. Difficulty 1: 2 jobs, daily/hourly kinds;
2: 3-4 jobs with steps and weekday ranges; 3: 4-5 jobs, also lists of days and month days,
and comment/blank lines in the output are allowed.

Reward: each line is parsed on the host and every field expanded to its set of values
(``*/15`` = ``0,15,30,45``; ``1-5`` = ``1,2,3,4,5``; day-of-week 7 = 0), so any equivalent
spelling is accepted; value = jobs matched / max(jobs, schedule lines). Guarded by jobs.txt
left unchanged.

Probes (≤ 0.05): ``all_stars`` (``* * * * *`` for every job), ``fields_swapped`` (hour and
minute swapped), ``copy_jobs`` (the descriptions themselves), plus the terminal and generic
probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, text_of, tree_task, write, write_lines

DAYS = ["Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"]
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]
SCRIPTS = ["backup.sh", "rotate_logs.sh", "report.py", "sync.sh", "cleanup.sh", "ping.sh", "mail.py"]


def _job(rng, kinds: list[str]) -> tuple[str, list[str]]:
    k, m, h = rng.choice(kinds), rng.randint(0, 59), rng.randint(0, 23)
    if k == "daily":
        return f"every day at {h:02d}:{m:02d}", [str(m), str(h), "*", "*", "*"]
    if k == "hourly":
        return f"every hour at minute {m}", [str(m), "*", "*", "*", "*"]
    if k == "step":
        s = rng.choice([5, 10, 15, 20, 30])
        return f"every {s} minutes", [f"*/{s}", "*", "*", "*", "*"]
    if k == "weekdays":
        return f"Mondays to Fridays at {h:02d}:{m:02d}", [str(m), str(h), "*", "*", "1-5"]
    if k == "days":
        ds = sorted(rng.sample(range(7), 2))
        return (f"on {' and '.join(DAYS[x] for x in ds)} at {h:02d}:{m:02d}",
                [str(m), str(h), "*", "*", ",".join(map(str, ds))])
    dom = rng.choice([1, 15, 28])
    return f"on day {dom} of every month at {h:02d}:{m:02d}", [str(m), str(h), str(dom), "*", "*"]


def expand(field: str, lo: int, hi: int, dow: bool = False) -> frozenset[int] | None:
    """The set of values of one cron field (None when malformed); day-of-week 7 is 0."""
    top, out = (7 if dow else hi), set()
    try:
        for part in field.split(","):
            base, _, step = part.partition("/")
            if base == "*":
                a, b = lo, hi
            elif "-" in base:
                a, b = (int(x) for x in base.split("-", 1))
            else:
                a = b = int(base)
            st = int(step) if step else 1
            if not (lo <= a <= b <= top) or st < 1:
                return None
            out.update(v % 7 if dow else v for v in range(a, b + 1, st))
    except ValueError:
        return None
    return frozenset(out) or None


def parse_line(line: str) -> tuple | None:
    parts = line.split(None, 5)
    if len(parts) != 6:
        return None
    sets = [expand(f, lo, hi, i == 4) for i, (f, (lo, hi)) in enumerate(zip(parts[:5], RANGES))]
    return None if None in sets else (*sets, parts[5].strip())


def _build(rng: random.Random, d: int):
    kinds = [["daily", "hourly"], ["daily", "hourly", "step", "weekdays"],
             ["daily", "step", "weekdays", "days", "monthly"]][d - 1]
    scripts = rng.sample(SCRIPTS, [2, rng.randint(3, 4), rng.randint(4, 5)][d - 1])
    jobs = [(s, *_job(rng, kinds)) for s in scripts]
    text = "".join(f"/opt/jobs/{s}: {desc}\n" for s, desc, _ in jobs)
    want = [" ".join(f) + f" /opt/jobs/{s}" for s, _, f in jobs]
    prompt = ("Write schedule.cron, a crontab with one line 'MIN HOUR DOM MON DOW COMMAND' for each job in "
              "jobs.txt (COMMAND is the job's path)" + ("; comment and blank lines are allowed" if d >= 3 else "")
              + ". Leave jobs.txt unchanged.")
    preds = [{"op": "file", "path": "jobs.txt", "content": text, "guard": True}]
    return tree_task(DOMAIN_ID, d, prompt, {"jobs.txt": text}, preds, hidden={"lines": want})


def _verify(env, trajectory):
    want = [parse_line(x) for x in env.task.hidden["lines"]]
    got_text = text_of(env, "schedule.cron") or ""
    lines = [ln for ln in got_text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    got = [parse_line(ln) for ln in lines]
    left, hits = list(got), 0
    for w in want:
        if w in left:
            left.remove(w)
            hits += 1
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), DOMAIN_ID,
                    extra={"jobs": hits / max(len(want), len(got), 1)})


def _reference(task):
    return [write_lines("schedule.cron", task.hidden["lines"])]


def _probes(task):
    lines = task.hidden["lines"]
    stars = "".join("* * * * * " + ln.split()[-1] + "\n" for ln in lines)
    swap = "".join(" ".join([ln.split()[1], ln.split()[0]] + ln.split()[2:]) + "\n" for ln in lines)
    return {"all_stars": [write("schedule.cron", stars)],
            "fields_swapped": [write("schedule.cron", swap)] if all(ln.split()[1] != "*" for ln in lines) else
            [write("schedule.cron", "".join("0 0 1 1 0 " + ln.split()[-1] + "\n" for ln in lines))],
            "copy_jobs": [write("schedule.cron", open_jobs(task))]}


def open_jobs(task) -> str:
    return task.public["files"]["jobs.txt"]


DOMAIN_ID = "terminal.cron_schedule-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
