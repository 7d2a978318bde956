"""Late-binding closure repair: ``code.repair_late_binding-v1``.

Trains: the classic Python closure bug: functions created in a loop capture the loop
*variable*, not its value, so every one of them sees the last value. The reference binds the
value (a default argument); the planted bug drops the binding. Difficulty: 1 = lambdas in a
comprehension, 2 = named inner functions or an operation table built in a loop, 3 = either,
among unrelated helper functions.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain

TEMPLATES = (
    BugTemplate(
        "multiples_table", 1,
        "multiples_table(xs) returns, for each x of xs, the list [x * 0, x * 1, ..., x * {n1}] "
        "computed by a list of {n} multiplier functions.",
        "def multiples_table(xs):\n    fns = [lambda v, k=k: v * k for k in range({n})]\n"
        "    return [[f(x) for f in fns] for x in xs]\n",
        ("lambda v, k=k: v * k", "lambda v: v * k"),
        lambda r: (lambda n: {"n": n, "n1": n - 1})(r.randint(2, 4)), lambda r, c: [ints(r, 0, 4)]),
    BugTemplate(
        "apply_ops", 2,
        "apply_ops(x, names) applies to x, in order, the operations named in names: \"inc\" adds "
        "{a}, \"dec\" subtracts {b}, \"jump\" adds {c}; it returns the result.",
        "def apply_ops(x, names):\n    ops = {{}}\n"
        "    for name, d in ((\"inc\", {a}), (\"dec\", -{b}), (\"jump\", {c})):\n"
        "        def op(v, d=d):\n            return v + d\n        ops[name] = op\n"
        "    for name in names:\n        x = ops[name](x)\n    return x\n",
        ("def op(v, d=d):", "def op(v):"),
        lambda r: {"a": r.randint(1, 5), "b": r.randint(1, 5), "c": r.randint(6, 20)},
        lambda r, c: [r.randint(-10, 10), [r.choice(["inc", "dec", "jump"])
                                           for _ in range(r.randint(1, 4))]]),
    BugTemplate(
        "shift_all", 2,
        "shift_all(s) returns the list of the strings obtained by rotating the string s left by "
        "1, 2, ..., {n} positions (each rotation modulo len(s); \"\" stays \"\").",
        "def shift_all(s):\n    rots = []\n    for k in range(1, {n} + 1):\n"
        "        rots.append(lambda t, k=k: t[k % len(t):] + t[:k % len(t)] if t else t)\n"
        "    return [f(s) for f in rots]\n",
        ("lambda t, k=k:", "lambda t:"),
        lambda r: {"n": r.randint(2, 3)},
        lambda r, c: ["".join(r.choice("abcdef") for _ in range(r.randint(0, 6)))]),
)

RepairLateBinding = repair_domain("code.repair_late_binding-v1", "a late-binding closure",
                                  TEMPLATES, description=__doc__)
