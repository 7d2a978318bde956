"""Extract regex matches into a report: ``terminal.regex_extract-v1``.

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

from __future__ import annotations

import random
import re
from collections import Counter

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, report_predicates, shell, tree_task, write_lines

WORDS = ["deploy", "restart", "queue", "disk", "cache", "login", "timeout", "payload"]
NAMES = ["ann", "bo", "cy", "dee", "eli", "fay", "gus"]
CODE = re.compile(r"(?<![A-Za-z0-9])E[0-9]{4}(?![0-9])")


def _mail(rng):
    lines, found = [], []
    for _ in range(rng.randint(6, 10)):
        if rng.random() < 0.6:
            addr = f"{rng.choice(NAMES)}.{rng.randint(1, 99)}@{rng.choice(['corp', 'mail'])}.{rng.choice(['com', 'org'])}"
            found.append(addr)
            lines.append(f"{rng.choice(WORDS)} from {addr} about {rng.choice(WORDS)}")
        else:
            lines.append(f"{rng.choice(WORDS)} at {rng.randint(1, 12)}pm, no address @ all")
    return {"inbox/mail.txt": "\n".join(lines) + "\n"}, found


def _logs(rng, d):
    files, hits, codes = {}, [], Counter()
    for name in sorted(rng.sample(["api", "db", "web", "jobs"], 2 + (d >= 3))):
        lines = []
        for i in range(rng.randint(5, 9)):
            lvl = rng.choice(["INFO", "WARN", "ERROR"])
            r = rng.random()
            code = f"E{rng.randint(1000, 9999)}" if r < 0.5 else rng.choice(["E12345", "e1234", "X1234"])
            line = f"{lvl} {rng.choice(WORDS)} {code if r < 0.8 else ''}".rstrip()
            lines.append(line)
            m = CODE.findall(line)
            if m:
                hits.append(f"logs/{name}.log:{i + 1}:{line}")
                if lvl == "ERROR":
                    codes.update(m)
        files[f"logs/{name}.log"] = "\n".join(lines) + "\n"
    return files, hits, [f"{c} {codes[c]}" for c in sorted(codes)]


def _build(rng: random.Random, d: int):
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
    preds = report_predicates("matches.txt", want, files)
    return tree_task(DOMAIN_ID, d, text + ". Do not change the inputs.", files, preds, hidden={"want": want})


def _reference(task):
    return [write_lines("matches.txt", task.hidden["want"])]


def _probes(task):
    src = "inbox/mail.txt" if task.difficulty == 1 else "logs/*.log"
    return {"copy_inputs": [shell(f"cat {src} > matches.txt")],
            "loose_pattern": [shell(f"grep -ih -e '@' -e 'e[0-9]' {src} > matches.txt")]}


DOMAIN_ID = "terminal.regex_extract-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
