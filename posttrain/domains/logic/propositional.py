"""Propositional-logic domains: evaluation, truth tables, equivalence, SAT, model counting, circuits.

Formulas are JSON-able nested lists (``["and", f, g]``, ``["not", f]``, ``["var", "a"]``) so
a Task round-trips through JSON unchanged. Every verifier evaluates formulas itself; no
answer is trusted.

Not covered: first-order logic, formulas larger than ~6 variables (truth tables stay small).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task, numeric_score
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain, exact_check
from posttrain.verifiers.structured import agreement_score, answer_text, parse_assignment

BIN = ("and", "or", "imp", "iff", "xor")
SYM = {"and": "AND", "or": "OR", "imp": "->", "iff": "<->", "xor": "XOR"}
FORMAT_NOTE = ("Operators: NOT, AND, OR, XOR, -> (implies), <-> (if and only if); "
               "parentheses are explicit.")


def random_formula(rng: random.Random, names: list[str], depth: int) -> list:
    if depth <= 0 or rng.random() < 0.15:
        return ["var", rng.choice(names)]
    if rng.random() < 0.2:
        return ["not", random_formula(rng, names, depth - 1)]
    return [rng.choice(BIN), random_formula(rng, names, depth - 1),
            random_formula(rng, names, depth - 1)]


def evaluate(f: list, env: dict[str, bool]) -> bool:
    op = f[0]
    if op == "var":
        return env[f[1]]
    if op == "not":
        return not evaluate(f[1], env)
    a, b = evaluate(f[1], env), evaluate(f[2], env)
    return {"and": a and b, "or": a or b, "imp": (not a) or b, "iff": a == b, "xor": a != b}[op]


def render(f: list, top: bool = True) -> str:
    if f[0] == "var":
        return f[1]
    if f[0] == "not":
        return "NOT " + render(f[1], False)
    s = f"{render(f[1], False)} {SYM[f[0]]} {render(f[2], False)}"
    return s if top else f"({s})"


def rows(names: list[str]) -> list[dict[str, bool]]:
    """All assignments, first name most significant, counting from all-false."""
    return [dict(zip(names, bits)) for bits in itertools.product([False, True], repeat=len(names))]


def table(f: list, names: list[str]) -> str:
    return "".join("1" if evaluate(f, r) else "0" for r in rows(names))


def parse_bits_assignment(answer: str, names: list[str]) -> dict[str, bool] | None:
    got = parse_assignment(answer, names, ("0", "1", "true", "false"))
    if got is None:
        return None
    return {n: got[n.lower()] in ("1", "true") for n in names}


VARS = ["p", "q", "r", "s", "t", "u"]


ID_BOOL_EVAL = "logic.bool_eval-v1"


def _bool_eval_draw(rng: random.Random, difficulty: int) -> Task:
    names = VARS[: 2 + difficulty]
    f = random_formula(rng, names, 1 + difficulty)
    env = {n: rng.random() < 0.5 for n in names}
    vals = ", ".join(f"{n}={'true' if v else 'false'}" for n, v in env.items())
    ans = "true" if evaluate(f, env) else "false"
    prompt = (f"Evaluate the formula {render(f)} with {vals}. {FORMAT_NOTE}\n"
              "Answer with exactly one word: true or false.")
    return make_task(ID_BOOL_EVAL, difficulty, prompt, answer=ans, public={"formula": f, "env": env})


def _bool_eval_probes(task: Task) -> dict[str, str]:
    return {"opposite": "false" if task.hidden["answer"] == "true" else "true",
            "both": "true or false"}


register_domain(SingleTurnDomain(
    ID_BOOL_EVAL, _bool_eval_draw, exact_check, _bool_eval_probes,
    difficulties=(1, 2, 3, 4), description="""\
Evaluate a propositional formula under a given assignment.

Trains: operator semantics (including implication and xor) and nested evaluation.
Not covered: simplification, quantifiers. Probes: the opposite truth value.
"""))


ID_TRUTH_TABLE = "logic.truth_table-v1"


def _truth_table_draw(rng: random.Random, difficulty: int) -> Task:
    names = VARS[: 1 + difficulty]
    while True:
        f = random_formula(rng, names, 1 + difficulty)
        col = table(f, names)
        if 0.25 <= col.count("1") / len(col) <= 0.75:
            break
    prompt = (f"Variables in order: {', '.join(names)}. List the rows of the truth table with the "
              f"first variable most significant, from all-false (0) to all-true (1), "
              f"{len(col)} rows. Formula: {render(f)}. {FORMAT_NOTE}\n"
              f"Answer with the formula's value in each row as a string of {len(col)} "
              "characters 0/1 (e.g. 0110...), nothing else.")
    return make_task(ID_TRUTH_TABLE, difficulty, prompt, answer=col, public={"formula": f, "vars": names})


def _truth_table_check(task: Task, answer: str) -> Score:
    exp = task.hidden["answer"]
    t = (answer_text(answer) or "").replace(" ", "")
    ok = len(t) == len(exp) and set(t) <= {"0", "1"}
    acc = sum(a == b for a, b in zip(t, exp)) / len(exp) if ok else 0.0
    base = max(exp.count("0"), exp.count("1")) / len(exp)
    v = max(0.0, (acc - base) / (1 - base)) if acc < 1 else 1.0
    return Score(v, components={"rows": (v, 1.0)}, passed=round(acc * len(exp)),
                 total=len(exp), reason=f"row accuracy {acc:.2f}", verifier_version=task.domain)


def _truth_table_probes(task: Task) -> dict[str, str]:
    exp = task.hidden["answer"]
    maj = "1" if exp.count("1") >= exp.count("0") else "0"
    return {"constant": maj * len(exp), "complement": exp.translate(str.maketrans("01", "10")),
            "too_long": exp + "0"}


register_domain(SingleTurnDomain(
    ID_TRUTH_TABLE, _truth_table_draw, _truth_table_check, _truth_table_probes,
    description="""\
Write the truth-table column of a formula as a bit string.

Trains: systematic enumeration of assignments and evaluation. Partial credit: per-row
accuracy corrected against the majority-bit baseline, so a constant column earns 0.
Not covered: minimisation. Probes: the constant column, the complement, a wrong length.
"""))


def rewrite(f: list, rng: random.Random) -> list:
    """An equivalent formula: implication/xor/iff elimination, De Morgan, commutation."""
    op = f[0]
    if op == "var":
        return ["not", ["not", f]] if rng.random() < 0.1 else f
    if op == "not":
        g = f[1]
        if g[0] in ("and", "or") and rng.random() < 0.7:
            dual = "or" if g[0] == "and" else "and"
            return [dual, rewrite(["not", g[1]], rng), rewrite(["not", g[2]], rng)]
        return ["not", rewrite(g, rng)]
    a, b = rewrite(f[1], rng), rewrite(f[2], rng)
    r = rng.random()
    if op == "imp" and r < 0.6:
        return ["or", ["not", a], b]
    if op == "xor" and r < 0.5:
        return ["or", ["and", a, ["not", b]], ["and", ["not", a], b]]
    if op == "iff" and r < 0.5:
        return ["and", ["imp", a, b], ["imp", b, a]]
    if op in ("and", "or", "xor", "iff") and r < 0.8:
        return [op, b, a]
    return [op, a, b]


def mutate(f: list, rng: random.Random) -> list:
    if f[0] == "var" or rng.random() < 0.3:
        return ["not", f] if f[0] != "not" else f[1]
    if f[0] == "not":
        return ["not", mutate(f[1], rng)]
    if rng.random() < 0.3:
        return [rng.choice([o for o in BIN if o != f[0]]), f[1], f[2]]
    i = rng.choice([1, 2])
    g = list(f)
    g[i] = mutate(f[i], rng)
    return g


ID_EQUIVALENCE = "logic.equivalence-v1"


def _equivalence_witness(task: Task, differ: bool) -> str:
    f, g, names = task.public["f"], task.public["g"], task.public["vars"]
    for r in rows(names):
        if (evaluate(f, r) != evaluate(g, r)) == differ:
            return ", ".join(f"{n}={int(r[n])}" for n in names)
    return ""


def _equivalence_draw(rng: random.Random, difficulty: int) -> Task:
    names = VARS[: 1 + difficulty]
    f = random_formula(rng, names, 1 + difficulty)
    g = rewrite(f, rng)
    if rng.random() < 0.6:
        while table(g, names) == table(f, names):
            g = mutate(g, rng)
    equiv = table(g, names) == table(f, names)
    prompt = (f"F = {render(f)}\nG = {render(g)}\n{FORMAT_NOTE}\nVariables: {', '.join(names)}. "
              "If F and G are logically equivalent, answer exactly: equivalent. Otherwise answer "
              "an assignment of every variable where they differ, as "
              + ", ".join(f"{n}=0" for n in names[:2]) + ", ... (values 0 or 1).")
    return make_task(ID_EQUIVALENCE, difficulty, prompt, public={"f": f, "g": g, "vars": names},
                     hidden={"equivalent": equiv})


def _equivalence_reference(task: Task) -> str:
    return "equivalent" if task.hidden["equivalent"] else _equivalence_witness(task, True)


def _equivalence_check(task: Task, answer: str) -> Score:
    f, g, names = task.public["f"], task.public["g"], task.public["vars"]
    said_eq = (answer_text(answer) or "").strip().lower().rstrip(".") == "equivalent"
    if task.hidden["equivalent"]:
        v = 1.0 if said_eq else 0.0
    else:
        env = parse_bits_assignment(answer, names)
        v = 1.0 if env is not None and evaluate(f, env) != evaluate(g, env) else 0.0
    return Score(v, components={"verdict": (v, 1.0)}, verifier_version=task.domain,
                 reason="correct" if v else "wrong verdict or non-distinguishing assignment")


def _equivalence_probes(task: Task) -> dict[str, str]:
    if task.hidden["equivalent"]:
        return {"bogus_counterexample": ", ".join(f"{n}=1" for n in task.public["vars"])}
    return {"claim_equivalent": "equivalent", "agreeing_row": _equivalence_witness(task, False)}


register_domain(SingleTurnDomain(
    ID_EQUIVALENCE, _equivalence_draw, _equivalence_check, _equivalence_probes,
    reference=_equivalence_reference, description="""\
Decide whether two formulas are equivalent; if not, give a distinguishing assignment.

Trains: equivalence laws and counterexample search. Verified: any assignment on which the
formulas differ is accepted. Not covered: proofs of equivalence.
Probes: "equivalent" for a non-equivalent pair, an agreeing assignment for it.
"""))


def planted_cnf(rng: random.Random, n: int, m: int) -> tuple[list[list[int]], dict[int, bool]]:
    """m 3-literal clauses over x1..xn, all satisfied by a planted assignment, none by all-true
    or all-false (so those trivial answers are always wrong)."""
    while True:
        plant = {i: rng.random() < 0.5 for i in range(1, n + 1)}
        clauses = []
        while len(clauses) < m:
            vs = rng.sample(range(1, n + 1), 3)
            c = [v if rng.random() < 0.5 else -v for v in vs]
            if any((l > 0) == plant[abs(l)] for l in c):
                clauses.append(c)
        sat = lambda env: all(any((l > 0) == env[abs(l)] for l in c) for c in clauses)  # noqa: E731
        if not sat({i: True for i in plant}) and not sat({i: False for i in plant}):
            return clauses, plant


def cnf_text(clauses: list[list[int]]) -> str:
    lit = lambda l: f"x{l}" if l > 0 else f"NOT x{-l}"  # noqa: E731
    return " AND ".join("(" + " OR ".join(lit(l) for l in c) + ")" for c in clauses)


ID_SAT_ASSIGN = "logic.sat_assign-v1"


def _sat_assign_draw(rng: random.Random, difficulty: int) -> Task:
    n = 3 + 2 * difficulty
    clauses, plant = planted_cnf(rng, n, int(n * (2.5 + 0.5 * difficulty)))
    prompt = (f"Find values for x1..x{n} that make this formula true:\n{cnf_text(clauses)}\n"
              f"Answer with every variable exactly once as x1=0, x2=1, ... (values 0 or 1).")
    return make_task(ID_SAT_ASSIGN, difficulty, prompt, public={"clauses": clauses, "n": n},
                     hidden={"planted": {str(k): v for k, v in plant.items()}})


def _sat_assign_reference(task: Task) -> str:
    return ", ".join(f"x{k}={int(v)}" for k, v in task.hidden["planted"].items())


def _sat_assign_check(task: Task, answer: str) -> Score:
    n = task.public["n"]
    env = parse_bits_assignment(answer, [f"x{i}" for i in range(1, n + 1)])
    clauses = task.public["clauses"]
    ok = 0 if env is None else sum(any((l > 0) == env[f"x{abs(l)}"] for l in c) for c in clauses)
    v = 1.0 if ok == len(clauses) else 0.0
    return Score(v, components={"satisfied": (v, 1.0)}, passed=ok, total=len(clauses),
                 reason=f"{ok}/{len(clauses)} clauses", verifier_version=task.domain)


def _sat_assign_probes(task: Task) -> dict[str, str]:
    n = task.public["n"]
    return {b: ", ".join(f"x{i}={v}" for i in range(1, n + 1)) for b, v in
            (("all_true", 1), ("all_false", 0))}


register_domain(SingleTurnDomain(
    ID_SAT_ASSIGN, _sat_assign_draw, _sat_assign_check, _sat_assign_probes,
    reference=_sat_assign_reference, description="""\
Find a satisfying assignment of a 3-CNF formula (planted, so one always exists).

Verified by evaluation: any satisfying assignment scores 1, anything else 0 (a random
assignment already satisfies ~7/8 of the clauses, so clause fractions are not credit).
Not covered: UNSAT proofs. Probes: all-true and all-false (generator makes both fail).
"""))


ID_MODEL_COUNT = "logic.model_count-v1"


def _model_count_draw(rng: random.Random, difficulty: int) -> Task:
    names = VARS[: 1 + difficulty]
    while True:
        f = random_formula(rng, names, 1 + difficulty)
        count = table(f, names).count("1")
        if 0 < count < 2 ** len(names):
            break
    prompt = (f"How many assignments of the variables {', '.join(names)} make {render(f)} true? "
              f"{FORMAT_NOTE}\nAnswer with a single integer.")
    return make_task(ID_MODEL_COUNT, difficulty, prompt, answer=count, public={"n": len(names)})


def _model_count_check(task: Task, answer: str) -> Score:
    return numeric_score(task, answer, task.domain)


def _model_count_probes(task: Task) -> dict[str, str]:
    return {"all": str(2 ** task.public["n"]), "off_by_one": str(task.hidden["answer"] + 1)}


register_domain(SingleTurnDomain(
    ID_MODEL_COUNT, _model_count_draw, _model_count_check, _model_count_probes,
    description="""\
Count the satisfying assignments of a formula (#SAT on small instances).

Trains: exhaustive case analysis. Exact integer answer. Not covered: large counts.
Probes: 2**n (every assignment), off-by-one.
"""))


GATES = {"AND": lambda a, b: a & b, "OR": lambda a, b: a | b, "XOR": lambda a, b: a ^ b,
         "NAND": lambda a, b: 1 - (a & b), "NOR": lambda a, b: 1 - (a | b)}


def run_circuit(inputs: dict[str, int], gates: list[list[Any]]) -> dict[str, int]:
    val = dict(inputs)
    for name, op, a, b in gates:
        val[name] = 1 - val[a] if op == "NOT" else GATES[op](val[a], val[b])
    return val


ID_CIRCUIT = "logic.circuit-v1"


def _circuit_draw(rng: random.Random, difficulty: int) -> Task:
    inputs = {f"i{k}": rng.randint(0, 1) for k in range(2 + difficulty)}
    wires, gates = list(inputs), []
    for k in range(3 + 3 * difficulty):
        op = rng.choice(list(GATES) + ["NOT"])
        a, b = rng.sample(wires[-4:], 2)
        gates.append([f"g{k}", op, a, b if op != "NOT" else ""])
        wires.append(f"g{k}")
    outs = sorted(rng.sample([g[0] for g in gates[len(gates) // 2:]], min(1 + difficulty, 3)),
                  key=lambda w: int(w[1:]))
    val = run_circuit(inputs, gates)
    net = "\n".join(f"{g} = NOT {a}" if op == "NOT" else f"{g} = {op}({a}, {b})"
                    for g, op, a, b in gates)
    prompt = (f"Inputs: {', '.join(f'{k}={v}' for k, v in inputs.items())}\nGates:\n{net}\n"
              f"Give the values of {', '.join(outs)} as " + ", ".join(f"{o}=0" for o in outs[:2])
              + (", ..." if len(outs) > 2 else "") + " (values 0 or 1), nothing else.")
    return make_task(ID_CIRCUIT, difficulty, prompt, public={"outputs": outs},
                     hidden={"values": {o: val[o] for o in outs}})


def _circuit_reference(task: Task) -> str:
    return ", ".join(f"{o}={v}" for o, v in task.hidden["values"].items())


def _circuit_check(task: Task, answer: str) -> Score:
    outs = task.public["outputs"]
    got = parse_assignment(answer, outs, ("0", "1"))
    exp = [str(task.hidden["values"][o]) for o in outs]
    v = agreement_score(None if got is None else [got[o] for o in outs], exp)
    return Score(v, components={"outputs": (v, 1.0)}, verifier_version=task.domain,
                 reason="parsed" if got is not None else "bad format")


def _circuit_probes(task: Task) -> dict[str, str]:
    vals = task.hidden["values"]
    return {"complement": ", ".join(f"{o}={1 - v}" for o, v in vals.items()),
            "missing_output": ", ".join(f"{o}={v}" for o, v in list(vals.items())[:-1])}


register_domain(SingleTurnDomain(
    ID_CIRCUIT, _circuit_draw, _circuit_check, _circuit_probes, reference=_circuit_reference, description="""\
Propagate inputs through a gate netlist and report the output wires.

Trains: sequential dependency tracking and gate truth tables (incl. NAND/NOR).
Partial credit: chance-corrected per-output accuracy (all outputs must be listed).
Not covered: sequential (clocked) circuits. Probes: complemented outputs, a missing output.
"""))
