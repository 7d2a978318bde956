"""Reports from data in files: counting, filtering and extracting into a report file.

Domains (each one's description is its ``*_DOC`` text below): ``extract``, ``log_counts``, ``regex_extract``, ``disk_usage``.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._kit import (TreeDomain, done, files_task, report_predicates, report_reference, report_task, shell, write,
                   write_lines)


# -------------------- extract
EXTRACT_DOC = """Extract and transform data with shell tools: ``terminal.extract-v1``.

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

SERVICES = ["auth", "billing", "cache", "db", "gateway", "mailer", "search", "worker"]
LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"]
EXTRACT_WORDS = ["timeout", "retry", "ok", "slow", "failed", "started", "stopped", "queued"]


ID_EXTRACT = "terminal.extract-v1"
# v2: every task has at least one matching line. v1 could ask for an empty report (no line of
# the level in the date range), which its predicates cannot score 1.0 (4 of 90 tasks of seeds
# 0-29); v1 stays loadable, unchanged.
ID_EXTRACT_V2 = "terminal.extract-v2"


def _extract_task(domain_id: str, rng: random.Random, difficulty: int, need_match: bool) -> Task:
    while True:  # v1 draws once; v2 draws again until some line is asked for
        services = rng.sample(SERVICES, rng.randint(3, 6))
        rows = []
        for _ in range(rng.randint(20, 30 + 20 * difficulty)):
            day = rng.randint(1, 28)
            rows.append((f"2024-03-{day:02d}", rng.choice(LEVELS), rng.choice(services),
                         " ".join(rng.sample(EXTRACT_WORDS, 2))))
        levels = ["ERROR"] + (["WARN"] if difficulty >= 3 else [])
        lo, hi = (1, 28) if difficulty == 1 else sorted(rng.sample(range(1, 29), 2))
        keep = [r for r in rows if r[1] in levels and lo <= int(r[0][-2:]) <= hi]
        if keep or not need_match:
            break
    counts = Counter(r[2] for r in keep)
    if difficulty >= 3:
        order = sorted(counts, key=lambda s: (-counts[s], s))
    else:
        order = sorted(counts)
    lines = [f"{s} {counts[s]}" for s in order]
    log = "".join(f"{d} {lv} {s} {m}\n" for d, lv, s, m in rows)
    ask = f"Count the {' or '.join(levels)} lines of data/app.log per service"
    if need_match:  # v2 says the log's size: the prompt tells its tasks apart (v1's level-1
        ask += f" (the log has {len(rows)} lines)"  # prompts were all the same text)
    if difficulty >= 2:
        ask += f", only for dates 2024-03-{lo:02d} to 2024-03-{hi:02d} inclusive"
    ask += (". Write report.txt with one line 'SERVICE COUNT' per service that has any, sorted "
            + ("by count descending, then service name." if difficulty >= 3 else "by service name."))
    preds = report_predicates("report.txt", lines, {"data/app.log": log})
    return files_task(domain_id, difficulty, ask, {"data/app.log": log}, preds,
                      hidden={"lines": lines, "services": services})


def _build_extract(rng: random.Random, difficulty: int) -> Task:
    return _extract_task(ID_EXTRACT, rng, difficulty, need_match=False)


def _build_extract_v2(rng: random.Random, difficulty: int) -> Task:
    return _extract_task(ID_EXTRACT_V2, rng, difficulty, need_match=True)


def _reference_extract(task: Task) -> list[str]:
    return [write_lines("report.txt", task.hidden["lines"])]


def _probes_extract(task: Task) -> dict[str, list[str]]:
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


register_domain(TreeDomain(ID_EXTRACT, _build_extract, _reference_extract, _probes_extract,
                           description=EXTRACT_DOC))
register_domain(TreeDomain(ID_EXTRACT_V2, _build_extract_v2, _reference_extract, _probes_extract,
                           description=EXTRACT_DOC.replace("``terminal.extract-v1``",
                                                           "``terminal.extract-v2``")
                           + "\nv2: every task asks for at least one line (v1 could ask for an "
                             "empty report, which its predicates could not score 1.0).\n"))


# -------------------- log_counts
COUNTS_DOC = """Top-N counts from an access log: ``terminal.log_counts-v1`` (``sort | uniq -c | sort -rn``).

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

PATHS = ["/", "/login", "/api/items", "/api/cart", "/static/app.js", "/search", "/admin"]
STATUS = ["200", "200", "200", "301", "404", "500", "403"]


def _line(rng, ip: str) -> tuple[str, str, str]:
    path, status = rng.choice(PATHS), rng.choice(STATUS)
    q = f"?q={rng.randint(1, 99)}" if rng.random() < 0.3 else ""
    t = f"10/Mar/2024:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 +0000"
    return (f'{ip} - - [{t}] "{rng.choice(["GET", "POST"])} {path}{q} HTTP/1.1" {status} {rng.randint(10, 9999)}',
            path, status)


def _build_counts(rng: random.Random, d: int):
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
    return report_task(ID_COUNTS, d, text, {"logs/access.log": log}, "top.txt", want)


_reference_counts = report_reference("top.txt")


def _probes_counts(task):
    return {"raw_uniq": [shell("awk '{print $9}' logs/access.log | uniq -c | awk '{print $1, $2}' > top.txt")],
            "wrong_field": [shell("awk '{print $6}' logs/access.log | tr -d '\"' | sort | uniq -c | sort -rn | "
                                  "awk '{print $1, $2}' > top.txt")]}


ID_COUNTS = "terminal.log_counts-v1"
register_domain(TreeDomain(ID_COUNTS, _build_counts, _reference_counts, _probes_counts,
                           description=COUNTS_DOC))


# -------------------- regex_extract
REGEX_DOC = """Extract regex matches into a report: ``terminal.regex_extract-v1``.

Trains: ``grep -o``/``grep -n``/``grep -E`` with a precise pattern, across several files.
Difficulty 1: every e-mail address in ``inbox/mail.txt`` (``name@host.tld``, lower-case
letters, digits and dots), in order of appearance, one per line, into ``matches.txt``;
2: every line of ``logs/*.log`` holding an error code ``E`` + exactly 4 digits, written
``FILE:LINENO:LINE`` (grep -n style, files in name order); 3: the distinct codes found on
``ERROR`` lines only, ``CODE COUNT`` sorted by code (decoys: ``E12345``, ``e1234``,
codes on WARN lines).

Reward: the graded ``lines_match`` on matches.txt (expected lines in order / max(expected,
produced): padding lowers it) and the exact file; guarded by the inputs left unchanged.

Probes (≤ 0.05): ``copy_inputs`` (the inputs themselves), ``loose_pattern`` (``grep -i`` for
anything like a code / any word with an ``@``, whole lines), plus the terminal and generic
probes.
"""

REGEX_WORDS = ["deploy", "restart", "queue", "disk", "cache", "login", "timeout", "payload"]
NAMES = ["ann", "bo", "cy", "dee", "eli", "fay", "gus"]
CODE = re.compile(r"(?<![A-Za-z0-9])E[0-9]{4}(?![0-9])")


def _mail(rng):
    lines, found = [], []
    for _ in range(rng.randint(6, 10)):
        if rng.random() < 0.6:
            addr = f"{rng.choice(NAMES)}.{rng.randint(1, 99)}@{rng.choice(['corp', 'mail'])}.{rng.choice(['com', 'org'])}"
            found.append(addr)
            lines.append(f"{rng.choice(REGEX_WORDS)} from {addr} about {rng.choice(REGEX_WORDS)}")
        else:
            lines.append(f"{rng.choice(REGEX_WORDS)} at {rng.randint(1, 12)}pm, no address @ all")
    return {"inbox/mail.txt": "\n".join(lines) + "\n"}, found


def _logs(rng, d):
    files, hits, codes = {}, [], Counter()
    for name in sorted(rng.sample(["api", "db", "web", "jobs"], 2 + (d >= 3))):
        lines = []
        for i in range(rng.randint(5, 9)):
            lvl = rng.choice(["INFO", "WARN", "ERROR"])
            r = rng.random()
            code = f"E{rng.randint(1000, 9999)}" if r < 0.5 else rng.choice(["E12345", "e1234", "X1234"])
            line = f"{lvl} {rng.choice(REGEX_WORDS)} {code if r < 0.8 else ''}".rstrip()
            lines.append(line)
            m = CODE.findall(line)
            if m:
                hits.append(f"logs/{name}.log:{i + 1}:{line}")
                if lvl == "ERROR":
                    codes.update(m)
        files[f"logs/{name}.log"] = "\n".join(lines) + "\n"
    return files, hits, [f"{c} {codes[c]}" for c in sorted(codes)]


def _build_regex(rng: random.Random, d: int):
    if d == 1:
        files, want = _mail(rng)
        text = ("Write matches.txt with every e-mail address (name@host.tld) found in inbox/mail.txt, in order "
                "of appearance, one per line")
    else:
        files, hits, codes = _logs(rng, d)
        while not (hits and codes):
            files, hits, codes = _logs(rng, d)
        want = hits if d == 2 else codes
        text = ("Write matches.txt with every line of logs/*.log that holds an error code (E followed by exactly "
                "4 digits, as a separate token), as FILE:LINENO:LINE like grep -n with the path logs/NAME.log, "
                "files in name order") if d == 2 else (
                "Write matches.txt with the distinct error codes (E followed by exactly 4 digits, as a separate "
                "token) found on ERROR lines of logs/*.log, one 'CODE COUNT' line each (lines holding it), "
                "sorted by code")
    return report_task(ID_REGEX, d, text + ". Do not change the inputs.", files, "matches.txt", want)


_reference_regex = report_reference("matches.txt")


def _probes_regex(task):
    src = "inbox/mail.txt" if task.difficulty == 1 else "logs/*.log"
    return {"copy_inputs": [shell(f"cat {src} > matches.txt")],
            "loose_pattern": [shell(f"grep -ih -e '@' -e 'e[0-9]' {src} > matches.txt")]}


ID_REGEX = "terminal.regex_extract-v1"
register_domain(TreeDomain(ID_REGEX, _build_regex, _reference_regex, _probes_regex, description=REGEX_DOC))


# -------------------- disk_usage
USAGE_DOC = """Disk-usage summary into a file: ``terminal.disk_usage-v1``.

Trains: ``find -printf '%s'``/``du -b``/``wc -c`` with ``awk`` sums and ``sort``. ``store/``
holds top-level folders of files of known sizes. Difficulty 1: ``usage.txt`` with
``DIR FILES`` (regular files per top-level folder, recursively), sorted by folder name;
2: ``DIR BYTES`` (sum of file sizes in bytes, recursively), sorted by bytes descending then
name; 3: ``EXT BYTES`` per file extension (``none`` for files without one) over the whole
tree, sorted by bytes descending then extension, plus a last line ``TOTAL <bytes>``.

Reward: the graded ``lines_match`` on usage.txt and the exact file; guarded by the tree left
unchanged. (Directory entry sizes from ``du`` without ``-b``/apparent sizes are wrong:
the values are file byte counts.)

Probes (≤ 0.05): ``du_blocks`` (``du -s`` in blocks), ``names_only`` (folder names with 0),
plus the terminal and generic probes.
"""

DIRS = ["audio", "backups", "cache", "docs", "images", "logs", "video"]
EXTS = ["txt", "log", "csv", "json", ""]


def _build_usage(rng: random.Random, d: int):
    files, count, size, ext = {}, Counter(), Counter(), Counter()
    dirs = sorted(rng.sample(DIRS, 3 + d))
    for top in dirs:
        for i in range(rng.randint(1, 4)):
            e = rng.choice(EXTS)
            path = f"store/{top}/{rng.choice(['', 'sub/'])}f{i}" + (f".{e}" if e else "")
            body = "x" * rng.randint(1, 400) + "\n"
            files[path] = body
            count[top] += 1
            size[top] += len(body)
            ext[e or "none"] += len(body)
    if d == 1:
        want = [f"{t} {count[t]}" for t in dirs]
        text = "Write usage.txt with one line 'DIR FILES' per top-level folder of store/ (regular files in it, recursively), sorted by folder name"
    elif d == 2:
        want = [f"{t} {size[t]}" for t in sorted(dirs, key=lambda t: (-size[t], t))]
        text = ("Write usage.txt with one line 'DIR BYTES' per top-level folder of store/ (the sum of the sizes in "
                "bytes of the regular files in it, recursively), sorted by bytes descending, then name")
    else:
        want = [f"{e} {ext[e]}" for e in sorted(ext, key=lambda e: (-ext[e], e))] + [f"TOTAL {sum(ext.values())}"]
        text = ("Write usage.txt with one line 'EXT BYTES' per file extension under store/ (without the dot; "
                "'none' for files without one; sum of file sizes in bytes), sorted by bytes descending, then "
                "extension, and a last line 'TOTAL <bytes>'")
    return report_task(ID_USAGE, d, text + ". Do not change store/.", files, "usage.txt", want)


_reference_usage = report_reference("usage.txt")


def _probes_usage(task):
    return {"du_blocks": [shell("cd store && du -s * | awk '{print $2, $1}' > ../usage.txt")],
            "names_only": [shell("ls store | sed 's/$/ 0/' > usage.txt")]}


ID_USAGE = "terminal.disk_usage-v1"
register_domain(TreeDomain(ID_USAGE, _build_usage, _reference_usage, _probes_usage, description=USAGE_DOC))
