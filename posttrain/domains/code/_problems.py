"""The problem bank of the ``code`` family: parametrised function-synthesis problems.

Each :class:`Template` draws its constants from the task's rng and gives a concrete problem:
a specification, a reference implementation (source text), an input generator, and known
bugs (text edits of the reference that make it wrong on some inputs). Expected outputs are
computed by running the *reference* source on the host at generation time — our own code,
never the policy's — and JSON-normalised.

Guarantees: every generated problem has public examples disjoint from its hidden inputs,
hidden tests whose most common output covers at most half of them (so a constant function
earns nothing after baseline correction), and for repair tasks a bug that fails at least
a quarter of the hidden tests and at least one public example.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable

Gen = Callable[[random.Random], list[Any]]


@dataclass(frozen=True)
class Template:
    name: str
    level: int
    spec: str  # format string over the constants
    source: str  # reference implementation, format string over the constants
    consts: Callable[[random.Random], dict[str, Any]]
    inputs: Callable[[random.Random, dict[str, Any]], list[Any]]
    bugs: tuple[tuple[str, str], ...]


def _ints(rng: random.Random, n: int, lo: int = -20, hi: int = 40) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _word(rng: random.Random, alphabet: str = "abcde", lo: int = 1, hi: int = 9) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


TEMPLATES = (
    Template("sum_multiples", 1, "sum_multiples(xs) returns the sum of the elements of the integer list xs that are divisible by {k}.",
             "def sum_multiples(xs):\n    return sum(x for x in xs if x % {k} == 0)\n",
             lambda r: {"k": r.randint(2, 7)}, lambda r, c: [_ints(r, r.randint(0, 9))],
             (("x % {k} == 0", "x % {k} != 0"), ("return sum(", "return 1 + sum("))),
    Template("count_above", 1, "count_above(xs) returns how many elements of the integer list xs are greater than {t}.",
             "def count_above(xs):\n    return sum(1 for x in xs if x > {t})\n",
             lambda r: {"t": r.randint(-5, 20)}, lambda r, c: [_ints(r, r.randint(0, 12))],
             (("x > {t}", "x >= {t}"), ("sum(1 for", "sum(x for"))),
    Template("affine", 1, "affine(x) returns {a} * x + {b} for an integer x.",
             "def affine(x):\n    return {a} * x + {b}\n",
             lambda r: {"a": r.randint(2, 9), "b": r.randint(-9, 9)}, lambda r, c: [r.randint(-1000, 1000)],
             (("{a} * x + {b}", "{a} * (x + {b})"), ("{a} * x + {b}", "{a} * x - {b}"))),
    Template("repeat_chars", 1, "repeat_chars(s) returns s with every character repeated {k} times (\"ab\" -> \"{ex}\").",
             "def repeat_chars(s):\n    return \"\".join(ch * {k} for ch in s)\n",
             lambda r: (lambda k: {"k": k, "ex": "a" * k + "b" * k})(r.randint(2, 4)), lambda r, c: [_word(r, "abcdxyz", 0, 8)],
             (("ch * {k}", "ch * ({k} - 1)"), ("for ch in s", "for ch in s[1:]"))),
    Template("rle", 2, "rle(s) returns the run-length encoding of s: each maximal run of a character c of length n becomes c followed by n (\"aaab\" -> \"a3b1\").",
             "def rle(s):\n    out = []\n    i = 0\n    while i < len(s):\n        j = i\n        while j < len(s) and s[j] == s[i]:\n            j += 1\n        out.append(s[i] + str(j - i))\n        i = j\n    return \"\".join(out)\n",
             lambda r: {}, lambda r, c: [_word(r, "aab", 0, 12)],
             (("str(j - i)", "str(j - i + 1)"), ("while i < len(s):", "while i < len(s) - 1:"))),
    Template("rotate", 2, "rotate(xs) returns the list xs rotated left by {k} positions (modulo its length; [] stays []).",
             "def rotate(xs):\n    if not xs:\n        return []\n    k = {k} % len(xs)\n    return xs[k:] + xs[:k]\n",
             lambda r: {"k": r.randint(1, 9)}, lambda r, c: [_ints(r, r.randint(0, 8), 0, 99)],
             (("xs[k:] + xs[:k]", "xs[-k:] + xs[:-k]"), ("{k} % len(xs)", "{k}"))),
    Template("caesar", 2, "caesar(s) shifts every lowercase letter of s forward by {k} in the alphabet, wrapping z to a; other characters are unchanged.",
             "def caesar(s):\n    return \"\".join(chr((ord(c) - 97 + {k}) % 26 + 97) if \"a\" <= c <= \"z\" else c for c in s)\n",
             lambda r: {"k": r.randint(1, 25)}, lambda r, c: [_word(r, "abcxyz -!", 0, 10)],
             (("% 26 + 97", "% 25 + 97"), ("\"a\" <= c <= \"z\"", "\"a\" <= c < \"z\""))),
    Template("running_max", 2, "running_max(xs) returns the list whose i-th element is the maximum of xs[0..i].",
             "def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out or x > out[-1] else out[-1])\n    return out\n",
             lambda r: {}, lambda r, c: [_ints(r, r.randint(0, 9))],
             (("x > out[-1]", "x < out[-1]"), ("for x in xs:", "for x in xs[1:]:"))),
    Template("longest_run", 3, "longest_run(xs) returns the length of the longest strictly increasing run of consecutive elements of xs (0 for []).",
             "def longest_run(xs):\n    best = cur = 0\n    for i, x in enumerate(xs):\n        cur = cur + 1 if i and x > xs[i - 1] else 1\n        best = max(best, cur)\n    return best\n",
             lambda r: {}, lambda r, c: [_ints(r, r.randint(0, 12), 0, 9)],
             (("x > xs[i - 1]", "x >= xs[i - 1]"), ("best = max(best, cur)", "best = cur"))),
    Template("depth", 3, "depth(s) returns the maximum nesting depth of the brackets \"{o}{c}\" in s, or -1 when they are unbalanced (other characters are ignored).",
             "def depth(s):\n    d = best = 0\n    for ch in s:\n        if ch == \"{o}\":\n            d += 1\n            best = max(best, d)\n        elif ch == \"{c}\":\n            d -= 1\n            if d < 0:\n                return -1\n    return best if d == 0 else -1\n",
             lambda r: dict(zip("oc", r.choice(["()", "[]", "<>"]))), lambda r, c: [_word(r, c["o"] * 3 + c["c"] * 3 + "x", 0, 10)],
             (("if d < 0:", "if d < -1:"), ("best if d == 0 else -1", "best"))),
    Template("merge_intervals", 3, "merge_intervals(pairs) merges overlapping or touching closed intervals [a, b] (a <= b) and returns them sorted by start, as a list of [a, b] lists.",
             "def merge_intervals(pairs):\n    out = []\n    for a, b in sorted(pairs):\n        if out and a <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], b)\n        else:\n            out.append([a, b])\n    return out\n",
             lambda r: {}, lambda r, c: [[sorted([r.randint(0, 30), r.randint(0, 30)]) for _ in range(r.randint(0, 6))]],
             (("a <= out[-1][1]", "a < out[-1][1]"), ("max(out[-1][1], b)", "b"))),
    Template("to_base", 3, "to_base(n) returns the non-negative integer n written in base {b} with digits 0-9 then a-z (\"0\" for 0).",
             "def to_base(n):\n    digits = \"0123456789abcdefghijklmnopqrstuvwxyz\"\n    out = \"\"\n    while n:\n        out = digits[n % {b}] + out\n        n //= {b}\n    return out or \"0\"\n",
             lambda r: {"b": r.choice([2, 3, 5, 7, 8, 12, 16])}, lambda r, c: [r.randint(0, 5000)],
             (("out or \"0\"", "out"), ("digits[n % {b}] + out", "out + digits[n % {b}]"))),
)


@dataclass(frozen=True)
class Problem:
    fn: str
    spec: str
    reference: str
    public: list[tuple[list[Any], Any]]
    hidden_inputs: list[list[Any]]
    hidden_expected: list[Any]
    buggy: str | None = None
    buggy_rate: float = 0.0


def run_source(source: str, fn: str, inputs: list[list[Any]]) -> list[Any]:
    """Outputs of *our own* source (reference or seeded bug) on inputs, JSON-normalised."""
    ns: dict[str, Any] = {}
    exec(compile(source, f"<{fn}>", "exec"), ns)  # trusted: generated from TEMPLATES only
    out = []
    for args in inputs:
        try:
            out.append(json.loads(json.dumps(ns[fn](*json.loads(json.dumps(args))))))
        except Exception as exc:  # a seeded bug may crash: that is a failing output
            out.append({"error": type(exc).__name__})
    return out


def distinct_inputs(draw: Callable[[], list], n: int, tries: int, sort_keys: bool = False) -> list[list[Any]]:
    """Up to ``n`` argument lists from ``draw()``, none repeated (compared as JSON), drawing
    at most ``tries`` times (fewer than ``n`` when the generator repeats itself)."""
    seen, out = set(), []
    for _ in range(tries):
        args = draw()
        key = json.dumps(args, sort_keys=sort_keys)
        if key not in seen:
            seen.add(key)
            out.append(args)
            if len(out) == n:
                break
    return out


def make_problem(rng: random.Random, difficulty: int, *, with_bug: bool = False,
                 n_public: int = 3, n_hidden: int = 20) -> Problem:
    pool = [t for t in TEMPLATES if t.level == difficulty]
    for _ in range(50):
        t = rng.choice(pool)
        c = t.consts(rng)
        ref = t.source.format(**c)
        inputs = distinct_inputs(lambda: t.inputs(rng, c), n_public + n_hidden, 400)
        if len(inputs) < n_public + n_hidden:
            continue
        outs = run_source(ref, t.name, inputs)
        hidden_out = outs[n_public:]
        if max(hidden_out.count(o) for o in hidden_out) > n_hidden // 2:
            continue
        public = list(zip(inputs[:n_public], outs[:n_public]))
        prob = Problem(t.name, t.spec.format(**c), ref, public, inputs[n_public:], hidden_out)
        if not with_bug:
            return prob
        old, new = rng.choice(t.bugs)
        buggy = ref.replace(old.format(**c), new.format(**c), 1)
        try:
            b_out = run_source(buggy, t.name, inputs)
        except Exception:  # a bug that does not even compile is not a repair task
            continue
        fails_public = [i for i in range(n_public) if b_out[i] != outs[i]]
        b_rate = sum(a == b for a, b in zip(b_out[n_public:], hidden_out)) / n_hidden
        if buggy != ref and fails_public and b_rate <= 0.75:
            first = fails_public[0]  # show the failing example first
            public = [public[first]] + [p for i, p in enumerate(public) if i != first]
            return Problem(t.name, t.spec.format(**c), ref, public, inputs[n_public:], hidden_out,
                           buggy, b_rate)
    raise RuntimeError(f"could not draw a code problem at difficulty {difficulty}")


def call_text(fn: str, args: list[Any]) -> str:
    return f"{fn}({', '.join(json.dumps(a) for a in args)})"


def examples_text(fn: str, public: list[tuple[list[Any], Any]]) -> str:
    return "\n".join(f"{call_text(fn, a)} == {json.dumps(o)}" for a, o in public)


def public_test_file(fn: str, module: str, public: list[tuple[list[Any], Any]]) -> str:
    """A runnable test script of the public examples (what ``run_tests`` runs)."""
    lines = ["import json", f"from {module} import {fn}", "failed = 0"]
    for a, o in public:
        call = call_text(fn, a)
        lines += ["try:", f"    got = json.loads(json.dumps({call}))", "except Exception as exc:",
                  "    got = repr(exc)", f"want = json.loads({json.dumps(json.dumps(o))})",
                  "if got != want:", f"    failed += 1",
                  f"    print('FAIL {call} ->', repr(got), 'expected', repr(want))",
                  "else:", f"    print('PASS {call}')"]
    lines.append("print(f'{failed} failed')")
    lines.append("raise SystemExit(1 if failed else 0)")
    return "\n".join(lines) + "\n"
