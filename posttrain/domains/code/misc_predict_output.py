"""Predict a program's output: ``code.misc_predict_output-v1``.

Trains: reading Python precisely — slicing, integer division and modulo, loop bounds,
aliasing of lists, dictionary counting, recursion — by predicting exactly what a generated
program prints. The program is a sequence of independent blocks drawn from the task's rng
(difficulty: 1 = one or two straight-line blocks, 2 = two or three blocks with loops and
branches, 3 = three or four blocks including recursion, nested loops and aliasing).

Ground truth: the real output of the program, obtained by executing it (our own generated
code, never the policy's) at generation time; it is stored only in ``task.hidden``.

Reward: the answer is the one ``<answer>`` block ending the reply (several blocks, or text
after it, score 0). 1.0 for the exact output (lines compared after stripping trailing spaces
and surrounding blank lines); otherwise, when the answer has exactly as many lines and at
least half of them are right, 0.5 × the share of lines right (component ``lines``); else 0.

Probes (≤ 0.05): the program itself, only the last line, the output with its lines reversed
(when that differs), every line ``0``; plus the generic ones (padded candidates have more
lines and score 0).
"""

from __future__ import annotations

import contextlib
import io
import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer

_ANS = re.compile(r"<answer>(.*?)</answer>", re.S)


def _w(r: random.Random) -> str:
    return "".join(r.choice("abcdeloprst") for _ in range(r.randint(4, 7)))


def _arith(r, i):
    a, b, z = r.randint(-20, 40), r.randint(2, 9), r.randint(2, 7)
    return f"a{i} = {a}\nb{i} = {b}\nprint(a{i} * b{i} - a{i} // {z}, a{i} % {z})\n"


def _string(r, i):
    s, a, b = _w(r), r.randint(0, 2), r.randint(3, 6)
    return f"s{i} = \"{s}\"\nprint(s{i}[{a}:{b}], s{i}[::-1][:{r.randint(1, 3)}], s{i}.count(\"{r.choice(s)}\"))\n"


def _listops(r, i):
    xs = [r.randint(0, 20) for _ in range(r.randint(4, 7))]
    return f"xs{i} = {xs}\nxs{i}.sort(reverse=True)\nprint(xs{i}[:{r.randint(1, 3)}], sum(xs{i}[1::2]))\n"


def _loop(r, i):
    n, m = r.randint(5, 12), r.randint(2, 4)
    return (f"t{i} = 0\nfor k in range({n}):\n    if k % {m} == {r.randint(0, m - 1)}:\n        t{i} += k\n"
            f"    else:\n        t{i} -= 1\nprint(t{i})\n")


def _count(r, i):
    return (f"d{i} = {{}}\nfor ch in \"{_w(r) + _w(r)}\":\n    d{i}[ch] = d{i}.get(ch, 0) + 1\n"
            f"print(sorted(d{i}.items())[:{r.randint(2, 4)}])\n")


def _while(r, i):
    return (f"n{i} = {r.randint(3, 30)}\nsteps{i} = 0\nwhile n{i} != 1 and steps{i} < {r.randint(5, 12)}:\n"
            f"    n{i} = n{i} // 2 if n{i} % 2 == 0 else 3 * n{i} + 1\n    steps{i} += 1\nprint(steps{i}, n{i})\n")


def _enum(r, i):
    xs = [r.randint(0, 9) for _ in range(r.randint(4, 6))]
    return f"print([j * x for j, x in enumerate({xs}) if x % 2])\n"


def _words(r, i):
    ws = " ".join(_w(r)[:r.randint(2, 4)] for _ in range(3))
    return f"print(\"{r.choice('-+:')}\".join(w[::-1] for w in \"{ws}\".split() if len(w) > 2))\n"


def _recursion(r, i):
    return (f"def f{i}(n):\n    return n if n < 2 else f{i}(n - 1) + f{i}(n - {r.randint(2, 3)})\n"
            f"print([f{i}(k) for k in range({r.randint(4, 8)})])\n")


def _nested(r, i):
    n, m = r.randint(4, 7), r.randint(2, 5)
    return (f"c{i} = 0\nfor a in range({n}):\n    for b in range(a):\n        if (a + b) % {m} == 0:\n"
            f"            c{i} += 1\nprint(c{i})\n")


def _alias(r, i):
    return (f"p{i} = {[r.randint(0, 9) for _ in range(2)]}\nq{i} = p{i}\nq{i}.append({r.randint(0, 9)})\n"
            f"w{i} = p{i}[:]\nw{i}.append({r.randint(0, 9)})\nprint(p{i}, len(w{i}), q{i} is p{i})\n")


LEVELS = {1: ((_arith, _string, _listops), (1, 2)),
          2: ((_arith, _string, _listops, _loop, _count, _while, _enum, _words), (2, 3)),
          3: ((_loop, _count, _while, _enum, _words, _recursion, _nested, _alias), (3, 4))}


def run_program(src: str) -> str:
    """The stdout of our own generated program (trusted; never called on policy text)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "<program>", "exec"), {"__name__": "__main__"})
    return buf.getvalue()


def strict_answer(text: str) -> str | None:
    """The one ``<answer>`` block ending the reply (None for several, or text after it)."""
    text = text or ""
    blocks = _ANS.findall(text)
    if len(blocks) != 1 or text[text.rindex("</answer>") + len("</answer>"):].strip():
        return None
    return blocks[0]


def norm_lines(text: str) -> list[str]:
    return [ln.rstrip() for ln in (text or "").strip("\n").splitlines()]


def _draw(rng: random.Random, difficulty: int) -> Draft:
    gens, (lo, hi) = LEVELS[difficulty]
    blocks = [rng.choice(gens)(rng, i) for i in range(rng.randint(lo, hi))]
    src = "\n".join(blocks)
    out = run_program(src)
    prompt = (f"What does this Python program print? Reply with its exact output inside "
              f"<answer>...</answer>.\n```python\n{src}```")
    return Draft(prompt, public={"program": src},
                 hidden={"answer": "\n".join(norm_lines(out))})


def _reference(task: Task) -> str:
    return format_answer(task.hidden["answer"])


def _check(task: Task, answer: str) -> Score:
    want = norm_lines(task.hidden["answer"])
    raw = strict_answer(answer)
    got = norm_lines(raw) if raw is not None else []
    if got == want:
        return Score(1.0, components={"exact": (1.0, 0.5), "lines": (1.0, 0.5)},
                     passed=len(want), total=len(want), reason="exact output",
                     verifier_version=task.domain)
    right = sum(a == b for a, b in zip(got, want)) if len(got) == len(want) else 0
    # partial credit from half the lines up: a shuffle that hits one line by chance gets none
    frac = right / len(want) if 2 * right >= len(want) and len(want) > 1 else 0.0
    return Score(0.5 * frac, components={"exact": (0.0, 0.5), "lines": (frac, 0.5)},
                 passed=right, total=len(want),
                 reason=f"{right}/{len(want)} lines right" if len(got) == len(want)
                 else f"{len(got)} lines, expected {len(want)}", verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    want = norm_lines(task.hidden["answer"])
    out = {"program": format_answer(task.public["program"]),
           "last_line": format_answer(want[-1]) if len(want) > 1 else "",
           "zeros": format_answer("\n".join("0" for _ in want))}
    if len(want) > 1 and all(a != b for a, b in zip(want, reversed(want))):
        out["reversed"] = format_answer("\n".join(reversed(want)))
    return out


PredictOutput = register_domain(SingleTurnDomain(
    "code.misc_predict_output-v1", _draw, _check, _exploits, reference=_reference,
    description=__doc__))
