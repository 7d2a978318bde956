"""Top-N counts from an access log: ``terminal.log_counts-v1`` (``sort | uniq -c | sort -rn``).

Trains: cutting a field out of a web access log (``awk '{print $N}'``), counting with
``uniq -c`` and ranking. ``logs/access.log`` holds ``IP - - [TIME] "METHOD PATH HTTP/1.1"
STATUS BYTES`` lines. Difficulty 1: requests per status code, all codes; 2: the top 3 client
IPs; 3: the top 3 paths among failed requests (status ≥ 400), query strings removed. Output
``top.txt``: ``COUNT VALUE`` lines, count descending, ties by value ascending (byte order).
Counts are drawn so that the ranking has no tie at the cut.

Reward: the graded ``lines_match`` on top.txt and the exact file; guarded by the log left
unchanged.

Probes (≤ 0.05): ``raw_uniq`` (``uniq -c`` without sorting first), ``wrong_field`` (counts of
the method field), plus the terminal and generic probes.
"""

from __future__ import annotations

import random
from collections import Counter

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, report_predicates, shell, tree_task, write_lines

PATHS = ["/", "/login", "/api/items", "/api/cart", "/static/app.js", "/search", "/admin"]
STATUS = ["200", "200", "200", "301", "404", "500", "403"]


def _line(rng, ip: str) -> tuple[str, str, str]:
    path, status = rng.choice(PATHS), rng.choice(STATUS)
    q = f"?q={rng.randint(1, 99)}" if rng.random() < 0.3 else ""
    t = f"10/Mar/2024:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 +0000"
    return (f'{ip} - - [{t}] "{rng.choice(["GET", "POST"])} {path}{q} HTTP/1.1" {status} {rng.randint(10, 9999)}',
            path, status)


def _build(rng: random.Random, d: int):
    while True:
        ips = [f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}" for _ in range(6)]
        rows = [_line(rng, rng.choice(ips)) for _ in range(rng.randint(25, 30 + 15 * d))]
        if d == 1:
            c = Counter(s for _, _, s in rows)
        elif d == 2:
            c = Counter(r.split()[0] for r, _, _ in rows)
        else:
            c = Counter(p for _, p, s in rows if int(s) >= 400)
        ranked = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
        top = ranked if d == 1 else ranked[:3]
        if d == 1 or (len(ranked) > 3 and ranked[2][1] != ranked[3][1]):
            break
    want = [f"{n} {v}" for v, n in top]
    ask = {1: "the number of requests per status code, every code",
           2: "the 3 client IPs with the most requests",
           3: "the 3 request paths (query string after ? removed) with the most failed requests (status >= 400)"}[d]
    text = (f"From logs/access.log (combined log format), write top.txt with {ask}: one 'COUNT VALUE' line each, "
            "count descending, ties by value ascending. Do not change the log.")
    log = "\n".join(r for r, _, _ in rows) + "\n"
    preds = report_predicates("top.txt", want, {"logs/access.log": log})
    return tree_task(DOMAIN_ID, d, text, {"logs/access.log": log}, preds, hidden={"want": want})


def _reference(task):
    return [write_lines("top.txt", task.hidden["want"])]


def _probes(task):
    return {"raw_uniq": [shell("awk '{print $9}' logs/access.log | uniq -c | awk '{print $1, $2}' > top.txt")],
            "wrong_field": [shell("awk '{print $6}' logs/access.log | tr -d '\"' | sort | uniq -c | sort -rn | "
                                  "awk '{print $1, $2}' > top.txt")]}


DOMAIN_ID = "terminal.log_counts-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
