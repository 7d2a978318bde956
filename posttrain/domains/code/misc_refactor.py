"""Refactor without changing behaviour: ``code.misc_refactor-v1``.

Trains: simplifying convoluted code — flag variables, redundant nested conditions,
duplicated branches — into its plain form while keeping its behaviour exactly. Generated
programs: a threshold classifier written as a tower of nested, redundant checks with a
``done`` flag (difficulty 1: 2 thresholds, 3: 4 thresholds), and a tally loop whose branches
duplicate each other (difficulty 2).

Verifier: the family's verifier on 16 hidden inputs (static gate, fresh sandbox, results
compared on the host) must pass every test (``correct`` = 1: a refactor that changes
behaviour is worth nothing); then ``simpler`` = how much of the way from the given program's
cyclomatic complexity to the reference's the answer went, clipped to [0, 1] (decision
points: if, conditional expressions, loops, boolean operators, comprehension filters,
handlers). Reward = [correct = 1] × simpler.

Probes (≤ 0.05): the program unchanged (correct but no simpler), hard-coded examples,
constant output, exit(0), patching json, always-equal, and a simplification that drops a
branch (simpler but wrong).
"""

from __future__ import annotations

import ast
import json
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer, pool_lease
from posttrain.verifiers.code import extract_code, verify_function

from ._kit import answer_reference, program_exploits
from ._problems import examples_text, run_source


def complexity(code: str) -> int:
    """Cyclomatic complexity of a whole module (1 + decision points)."""
    n = 1
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.If, ast.IfExp, ast.For, ast.While, ast.ExceptHandler)):
            n += 1
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            n += len(node.ifs)
    return n


def _grade(rng: random.Random, k: int) -> tuple[str, str, str, list[list]]:
    ts = sorted(rng.sample(range(-20, 60), k))
    labels = rng.sample(["low", "mid", "high", "top", "max", "cold", "warm"], k + 1)
    spec = f"grade(x) maps the integer x to a label by the thresholds {ts} (labels {labels})."
    clean = ["def grade(x):"] + [f"    {'if' if i == 0 else 'elif'} x < {t}:\n        return {labels[i]!r}"
                                 for i, t in enumerate(ts)] + [f"    return {labels[-1]!r}"]
    messy = ["def grade(x):", "    result = None", "    done = False"]
    for i in range(k + 1):
        conds = ([f"x >= {ts[i - 1]}"] if i > 0 else []) + ([f"x < {ts[i]}"] if i < k else [])
        pad = "    "
        for c in conds:
            messy.append(f"{pad}if {c}:")
            pad += "    "
        messy += [f"{pad}if done == False:", f"{pad}    result = {labels[i]!r}", f"{pad}    done = True"]
    messy += ["    if done == True:", "        return result", "    else:", "        return result"]
    inputs = [[x] for x in rng.sample(range(-30, 70), 19)] + [[t] for t in ts]
    return spec, "\n".join(clean) + "\n", "\n".join(messy) + "\n", inputs


def _tally(rng: random.Random) -> tuple[str, str, str, list[list]]:
    a, b, t = rng.randint(2, 5), rng.randint(1, 9), rng.randint(0, 10)
    spec = f"tally(xs) adds x * {a} for every even x of xs and {b} for every odd x, and returns the sum."
    clean = f"def tally(xs):\n    return sum(x * {a} if x % 2 == 0 else {b} for x in xs)\n"
    messy = (f"def tally(xs):\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n"
             f"            if x > {t}:\n                total = total + x * {a}\n            else:\n"
             f"                total = total + x * {a}\n        else:\n            if x > {t}:\n"
             f"                total = total + {b}\n            elif x < 0 and x > {t}:\n"
             f"                total = total + {b}\n            else:\n                total = total + {b}\n"
             f"    return total\n")
    inputs = [[[rng.randint(-9, 20) for _ in range(rng.randint(0, 7))]] for _ in range(25)]
    return spec, clean, messy, inputs


def _draw(rng: random.Random, difficulty: int) -> Draft:
    spec, clean, messy, inputs = _tally(rng) if difficulty == 2 else _grade(rng, 2 if difficulty == 1 else 4)
    fn = "tally" if difficulty == 2 else "grade"
    uniq = list({json.dumps(i): i for i in inputs}.values())
    rng.shuffle(uniq)
    outs = run_source(clean, fn, uniq)
    public = list(zip(uniq[:3], outs[:3]))
    prompt = (f"Refactor this function into a simple, readable form with exactly the same "
              f"behaviour. {spec}\n{examples_text(fn, public)}\n```python\n{messy}```\n"
              "Reply with the whole program inside <answer>...</answer>.")
    return Draft(prompt, public={"function": fn, "program": messy, "examples": [[a, o] for a, o in public]},
                 hidden={"inputs": uniq[3:19], "expected": outs[3:19], "reference": clean})


def _check(task: Task, answer: str) -> Score:
    code, h = extract_code(answer), task.hidden
    res = verify_function(code, fn_name=task.public["function"], inputs=h["inputs"],
                          expected=h["expected"], reference=h["reference"],
                          sandbox_factory=pool_lease(), version=task.domain)
    exact = res.passed == res.total and res.value > 0
    c_old, c_ref = complexity(task.public["program"]), complexity(h["reference"])
    simpler = 0.0
    if exact:
        simpler = max(0.0, min(1.0, (c_old - complexity(code)) / max(1, c_old - c_ref)))
    return Score(simpler if exact else 0.0,
                 components={"correct": (float(exact), 0.0), "simpler": (simpler, 1.0)},
                 passed=res.passed, total=res.total,
                 reason=f"{res.reason}; complexity {c_old} -> {complexity(code) if exact else '?'} "
                        f"(reference {c_ref})", verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    out = program_exploits(task)
    ref = task.hidden["reference"].splitlines()
    out["drop_branch"] = format_answer("\n".join(ref[:1] + ref[3:]) + "\n")
    return out


Refactor = register_domain(SingleTurnDomain(
    "code.misc_refactor-v1", _draw, _check, _exploits, reference=answer_reference,
    description=__doc__, env_kind="sandbox"))
