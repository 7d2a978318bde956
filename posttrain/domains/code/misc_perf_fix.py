"""Make a slow function fast: ``code.misc_perf_fix-v1``.

Trains: replacing a quadratic or exponential algorithm with an efficient one while keeping
its behaviour: counting pairs with a given sum (nested loops → a counter), order-preserving
de-duplication (list membership → a set), range-sum queries (re-summing slices → prefix
sums), counting stair climbs (naive recursion → dynamic programming). Difficulty picks the
problem family (1: pairs/dedupe, 2: range sums, 3: stair climbs).

Verifier: the submission must not be the given program (compared as ASTs: it is known to be
slow, so it is not run), then the family's verifier on 12 small hidden tests (static gate,
fresh sandbox, results compared on the host) gives ``correct``; when it is above 0, two large
hidden inputs (regenerated from a hidden seed; expected outputs from the reference on the
host) run in a fresh sandbox with a CPU budget of 1 s: ``fast`` = 1 when both outputs are
right within the budget, falling linearly to 0 at 2 s (the run is killed there); a wrong
large output makes it 0. Reward = correct × fast.

Probes (≤ 0.05): the slow program unchanged or only re-commented (the same AST), hard-coded
small examples, constant output, exit(0), and the family's other program probes. The slow
program with a no-op statement added runs and is killed at the budget (scores 0; tested in
``tests/domains_ext/test_code_repair_misc.py``, not a probe: it costs 2 s of CPU a run).
"""

from __future__ import annotations

import ast
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer, pool_lease
from posttrain.verifiers.code import extract_code, run_hidden_tests, same_value, verify_function

from ._kit import answer_reference, program_exploits
from ._problems import examples_text, run_source

BUDGET_S = 1.0

# name: (level, spec, slow source, fast source, small input, large input)
PROBLEMS = {
    "count_pairs": (1, "count_pairs(xs, t) returns the number of index pairs i < j with xs[i] + xs[j] == t.",
                    "def count_pairs(xs, t):\n    n = 0\n    for i in range(len(xs)):\n"
                    "        for j in range(i + 1, len(xs)):\n            if xs[i] + xs[j] == t:\n"
                    "                n += 1\n    return n\n",
                    "def count_pairs(xs, t):\n    seen = {}\n    n = 0\n    for x in xs:\n"
                    "        n += seen.get(t - x, 0)\n        seen[x] = seen.get(x, 0) + 1\n    return n\n",
                    lambda r: [[r.randint(0, 9) for _ in range(r.randint(0, 10))], r.randint(0, 18)],
                    lambda r: [[r.randint(0, 5000) for _ in range(12000)], r.randint(2000, 8000)]),
    "dedupe": (1, "dedupe(xs) returns the elements of xs without repetitions, keeping first occurrences in order.",
               "def dedupe(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n"
               "            out.append(x)\n    return out\n",
               "def dedupe(xs):\n    seen = set()\n    out = []\n    for x in xs:\n        if x not in seen:\n"
               "            seen.add(x)\n            out.append(x)\n    return out\n",
               lambda r: [[r.randint(0, 6) for _ in range(r.randint(0, 10))]],
               lambda r: [[r.randint(0, 15000) for _ in range(15000)]]),
    "range_sums": (2, "range_sums(xs, queries) returns, for each [a, b] in queries, sum(xs[a:b]).",
                   "def range_sums(xs, queries):\n    return [sum(xs[a:b]) for a, b in queries]\n",
                   "def range_sums(xs, queries):\n    pre = [0]\n    for x in xs:\n        pre.append(pre[-1] + x)\n"
                   "    return [pre[b] - pre[a] if b > a else 0 for a, b in queries]\n",
                   lambda r: (lambda xs: [xs, [sorted([r.randint(0, len(xs)), r.randint(0, len(xs))])
                                               for _ in range(r.randint(1, 4))]])([r.randint(-9, 9) for _ in range(r.randint(1, 8))]),
                   lambda r: [[r.randint(-99, 99) for _ in range(20000)],
                              [sorted([r.randint(0, 2000), r.randint(18000, 20000)]) for _ in range(40000)]]),
    "climbs": (3, "climbs(n) returns the number of ways to climb n stairs taking 1, 2 or 3 steps at a time, "
                  "modulo 1000000007 (climbs(0) == 1).",
               "def climbs(n):\n    if n < 0:\n        return 0\n    if n == 0:\n        return 1\n"
               "    return (climbs(n - 1) + climbs(n - 2) + climbs(n - 3)) % 1000000007\n",
               "def climbs(n):\n    a, b, c = 0, 0, 1\n    for _ in range(n):\n"
               "        a, b, c = b, c, (a + b + c) % 1000000007\n    return c\n",
               lambda r: [r.randint(0, 16)], lambda r: [r.randint(300, 900)]),
}


def _same_ast(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _draw(rng: random.Random, difficulty: int) -> Draft:
    name = rng.choice(sorted(k for k, v in PROBLEMS.items() if v[0] == difficulty))
    _, spec, slow, fast, small, _ = PROBLEMS[name]
    inputs, seen = [], set()
    while len(inputs) < 15:
        args = small(rng)
        if repr(args) not in seen:
            seen.add(repr(args))
            inputs.append(args)
    outs = run_source(fast, name, inputs)
    public = list(zip(inputs[:3], outs[:3]))
    prompt = (f"This function is correct but far too slow on large inputs: {spec}\n"
              f"{examples_text(name, public)}\n```python\n{slow}```\nRewrite it to be fast "
              "(large hidden inputs run under a CPU budget of about a second) with the same "
              "behaviour. Reply with the whole program inside <answer>...</answer>.")
    return Draft(prompt, public={"function": name, "spec": spec, "program": slow,
                                 "examples": [[a, o] for a, o in public]},
                 hidden={"inputs": inputs[3:], "expected": outs[3:], "reference": fast,
                         "large_seed": rng.randrange(1 << 30)})


def _check(task: Task, answer: str) -> Score:
    code, h, fn = extract_code(answer), task.hidden, task.public["function"]
    if _same_ast(code, task.public["program"]):
        return Score(0.0, components={"correct": (0.0, 0.5), "fast": (0.0, 0.5)},
                     reason="the slow program unchanged", verifier_version=task.domain)
    small = verify_function(code, fn_name=fn, inputs=h["inputs"], expected=h["expected"],
                            reference=h["reference"], sandbox_factory=pool_lease(),
                            version=task.domain)
    correct = small.components.get("correct", (0.0, 0.0))[0]
    fast = 0.0
    why = small.reason
    if correct > 0:
        rng = random.Random(h["large_seed"])
        large = [PROBLEMS[fn][5](rng) for _ in range(2)]
        want = run_source(h["reference"], fn, large)
        run = run_hidden_tests({"solution.py": code}, "solution", fn, large, pool_lease(),
                               timeout=2 * BUDGET_S)
        right = not run.tampered and all(ok and same_value(o, e) for ok, o, e
                                         in zip(run.reported, run.outputs, want))
        fast = max(0.0, min(1.0, 2.0 - run.cpu_s / BUDGET_S)) if right else 0.0
        why += f"; large inputs {'right' if right else 'wrong or unfinished'} in {run.cpu_s:.2f}s CPU"
    return Score(correct * fast, components={"correct": (correct, 0.5), "fast": (fast, 0.5)},
                 passed=small.passed, total=small.total, reason=why, verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    out = program_exploits(task)
    out["slow_commented"] = format_answer("# optimised\n" + task.public["program"] + "\n# done\n")
    return out


PerfFix = register_domain(SingleTurnDomain(
    "code.misc_perf_fix-v1", _draw, _check, _exploits, reference=answer_reference,
    description=__doc__, env_kind="sandbox"))
