"""Regex synthesis: write a pattern that accepts the positive strings and rejects the negative ones.

The verifier runs the answered pattern (``re.fullmatch``) on HIDDEN examples drawn from the
same concept, in a separate Python process with a wall-clock timeout, so catastrophic
backtracking costs the answer its reward and never hangs the trainer. Memorising the shown
examples (an alternation of them) earns nothing on the hidden ones.

Not covered: regex flavours other than Python's ``re``; lookaround-specific concepts.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import string
import subprocess
import sys
import time
from typing import Callable

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import answer_text

MAX_PATTERN = 200
TIMEOUT_S = 3.0
_RUNNER = ("import json,re,sys\nd=json.load(sys.stdin)\np=re.compile(d['p'])\n"
           "print(json.dumps([p.fullmatch(s) is not None for s in d['s']]))")

Gen = Callable[[random.Random], str]


def _word(rng: random.Random, lo: int, hi: int, alpha: str = string.ascii_lowercase) -> str:
    return "".join(rng.choice(alpha) for _ in range(rng.randint(lo, hi)))


def _concept(rng: random.Random, difficulty: int) -> tuple[str, str, Gen, Gen]:
    """(description for logs, reference regex, positive generator, negative generator)."""
    kind = rng.choice({1: ["digits", "prefix", "suffix"], 2: ["hex", "ident", "repeat"],
                       3: ["date", "email", "code"]}[difficulty])
    if kind == "digits":
        lo, hi = sorted(rng.sample(range(2, 8), 2))
        return (kind, rf"\d{{{lo},{hi}}}", lambda r: _word(r, lo, hi, string.digits),
                lambda r: r.choice([_word(r, hi + 1, hi + 3, string.digits), _word(r, 1, lo - 1, string.digits),
                                    _word(r, lo - 1, hi - 1, string.digits) + r.choice("abcx")]))
    if kind in ("prefix", "suffix"):
        fix = _word(rng, 2, 3)
        other = lambda r: r.choice([w for w in (_word(r, len(fix), len(fix)) for _ in range(5)) if w != fix] or ["zz"])  # noqa: E731
        body = lambda r: _word(r, 1, 5)  # noqa: E731
        if kind == "prefix":
            return (kind, f"{fix}[a-z]+", lambda r: fix + body(r),
                    lambda r: r.choice([other(r) + body(r), fix + body(r) + r.choice("0123456789"), fix]))
        return (kind, f"[a-z]+{fix}", lambda r: body(r) + fix,
                lambda r: r.choice([body(r) + other(r), "9" + body(r) + fix, fix + body(r) + "q"]))
    if kind == "hex":
        return (kind, r"#[0-9a-f]{6}", lambda r: "#" + _word(r, 6, 6, "0123456789abcdef"),
                lambda r: r.choice(["#" + _word(r, 5, 5, "0123456789abcdef"), _word(r, 6, 6, "0123456789abcdef"),
                                    "#" + _word(r, 5, 5, "0123456789abcdef") + r.choice("ghxz"),
                                    "#" + _word(r, 7, 7, "0123456789abcdef")]))
    if kind == "ident":
        first = string.ascii_letters + "_"
        rest = first + string.digits
        return (kind, r"[A-Za-z_][A-Za-z0-9_]*", lambda r: r.choice(first) + _word(r, 0, 6, rest),
                lambda r: r.choice([r.choice(string.digits) + _word(r, 0, 5, rest),
                                    r.choice(first) + _word(r, 0, 3, rest) + r.choice("-. $") + _word(r, 1, 3, rest)]))
    if kind == "repeat":
        unit = _word(rng, 2, 2)
        while unit[0] == unit[1]:
            unit = _word(rng, 2, 2)
        return (kind, f"(?:{unit})+", lambda r: unit * r.randint(1, 12),
                lambda r: r.choice([unit * r.randint(1, 4) + unit[0], unit[::-1] * r.randint(1, 3),
                                    unit * r.randint(1, 2) + unit[1] + unit * r.randint(1, 2)]))
    if kind == "date":
        d = lambda r, n: _word(r, n, n, string.digits)  # noqa: E731
        return (kind, r"\d{4}-\d{2}-\d{2}", lambda r: f"{d(r, 4)}-{d(r, 2)}-{d(r, 2)}",
                lambda r: r.choice([f"{d(r, 2)}-{d(r, 2)}-{d(r, 4)}", f"{d(r, 4)}/{d(r, 2)}/{d(r, 2)}",
                                    f"{d(r, 4)}-{d(r, 1)}-{d(r, 2)}", f"{d(r, 4)}{d(r, 2)}{d(r, 2)}"]))
    if kind == "email":
        return (kind, r"[a-z]+@[a-z]+\.(?:com|org)",
                lambda r: f"{_word(r, 1, 6)}@{_word(r, 2, 6)}.{r.choice(['com', 'org'])}",
                lambda r: r.choice([f"{_word(r, 1, 6)}{_word(r, 2, 6)}.com", f"{_word(r, 1, 6)}@{_word(r, 2, 6)}.net",
                                    f"{_word(r, 1, 6)}@{_word(r, 2, 6)}", f"@{_word(r, 2, 6)}.org"]))
    up = string.ascii_uppercase
    return (kind, r"[A-Z]{2,3}-\d{3}", lambda r: f"{_word(r, 2, 3, up)}-{_word(r, 3, 3, string.digits)}",
            lambda r: r.choice([f"{_word(r, 1, 1, up)}-{_word(r, 3, 3, string.digits)}",
                                f"{_word(r, 2, 3, up)}{_word(r, 3, 3, string.digits)}",
                                f"{_word(r, 2, 3, up)}-{_word(r, 4, 4, string.digits)}",
                                f"{_word(r, 2, 3).lower()}-{_word(r, 3, 3, string.digits)}"]))


def _distinct(rng: random.Random, gen: Gen, ok: Callable[[str], bool], k: int, avoid: set[str]) -> list[str]:
    out: list[str] = []
    for _ in range(k * 50):
        s = gen(rng)
        if s not in avoid and s not in out and ok(s):
            out.append(s)
            if len(out) == k:
                break
    return out


def run_pattern(pattern: str, strings: list[str]) -> list[bool] | None:
    """Full-match results computed in a child process; None on error, crash or timeout.

    A forked child (about a millisecond) where the OS allows it, else a fresh interpreter.
    The child is killed at the deadline, so a backtracking pattern cannot stall the caller.
    """
    if not hasattr(os, "fork"):
        return _run_subprocess(pattern, strings)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: match, write, exit without running any parent cleanup
        try:
            os.close(r)
            rx = re.compile(pattern)
            os.write(w, json.dumps([rx.fullmatch(x) is not None for x in strings]).encode())
        finally:
            os._exit(0)
    os.close(w)
    data, deadline = b"", time.monotonic() + TIMEOUT_S
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                data = b""
                break
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    try:
        res = json.loads(data) if data else None
    except ValueError:
        return None
    return res if isinstance(res, list) and len(res) == len(strings) else None


def _run_subprocess(pattern: str, strings: list[str]) -> list[bool] | None:
    try:
        out = subprocess.run([sys.executable, "-I", "-S", "-c", _RUNNER], input=json.dumps({"p": pattern, "s": strings}),
                             capture_output=True, text=True, timeout=TIMEOUT_S)
        res = json.loads(out.stdout) if out.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return None
    return res if isinstance(res, list) and len(res) == len(strings) else None


ID_REGEX_SYNTHESIS = "text_data.regex_synthesis-v1"
DOC_REGEX_SYNTHESIS = """Write a regular expression matching every positive and no negative example.

Scored on hidden examples of the same concept: Youden's J (true-positive rate + true-
negative rate - 1, floor 0), so match-everything and match-nothing both earn 0.
Not covered: regex golf (shortness), flags. Probes: ``.*``, an alternation of the shown
positives (memorisation), a pattern that never matches.
"""


def _regex_synthesis_draw(rng: random.Random, difficulty: int) -> Draft:
    hid_p: list[str] = []
    hid_n: list[str] = []
    while len(hid_p) < 6 or len(hid_n) < 6:
        _, ref, pos, neg = _concept(rng, difficulty)
        rx = re.compile(ref)
        is_pos = lambda s, rx=rx: rx.fullmatch(s) is not None  # noqa: E731
        shown_p = _distinct(rng, pos, is_pos, 5, set())
        shown_n = _distinct(rng, neg, lambda s: not is_pos(s), 5, set())
        seen = set(shown_p + shown_n)
        hid_p = _distinct(rng, pos, is_pos, 8, seen)
        hid_n = _distinct(rng, neg, lambda s: not is_pos(s), 8, seen)
    prompt = ("Write a Python regular expression that fully matches strings like the positive examples and none "
              "like the negative ones; it will be tested on other strings of the same kinds.\nPositive: "
              + ", ".join(json.dumps(s) for s in shown_p) + "\nNegative: " + ", ".join(json.dumps(s) for s in shown_n)
              + "\nAnswer with the pattern only (no slashes, quotes or flags), nothing else.")
    return Draft(prompt, public={"positive": shown_p, "negative": shown_n},
                 hidden={"regex": ref, "positive": hid_p, "negative": hid_n})


def _regex_synthesis_reference(task: Task) -> str:
    return task.hidden["regex"]


def _regex_synthesis_check(task: Task, answer: str) -> Score:
    pat = answer_text(answer)
    fail = lambda why: Score(0.0, components={"youden_j": (0.0, 1.0)}, reason=why,  # noqa: E731
                             verifier_version=task.domain)
    if not pat or len(pat) > MAX_PATTERN or "\n" in pat:
        return fail("empty, multi-line or over-long pattern")
    try:
        re.compile(pat)
    except (re.error, RecursionError, OverflowError, ValueError):
        return fail("does not compile")
    p, n = task.hidden["positive"], task.hidden["negative"]
    res = run_pattern(pat, p + n)
    if res is None:
        return fail("matching failed or timed out")
    tpr, tnr = sum(res[: len(p)]) / len(p), sum(not r for r in res[len(p):]) / len(n)
    v = max(0.0, tpr + tnr - 1.0)
    return Score(v, components={"youden_j": (v, 1.0)}, passed=sum(res[: len(p)]) + sum(not r for r in res[len(p):]),
                 total=len(res), reason=f"TPR {tpr:.2f} TNR {tnr:.2f}", verifier_version=task.domain)


def _regex_synthesis_probes(task: Task) -> dict[str, str]:
    return {"dot_star": ".*", "memorised": "|".join(re.escape(s) for s in task.public["positive"]),
            "never": "(?!)"}


register_domain(SingleTurnDomain(
    ID_REGEX_SYNTHESIS, _regex_synthesis_draw, _regex_synthesis_check, _regex_synthesis_probes,
    reference=_regex_synthesis_reference, description=DOC_REGEX_SYNTHESIS))
