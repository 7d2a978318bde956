"""Deduction puzzles: knights and knaves, zebra grids, orderings, syllogisms.

Every generated puzzle has a unique solution, checked by exhaustive search at generation
time; verifiers compare against that solution (or decide validity semantically).

Not covered: puzzles needing world knowledge (terms are nonsense words or plain names).
"""

from __future__ import annotations

import itertools
import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain, exact_check
from posttrain.verifiers.structured import answer_text, parse_assignment, parse_word_list

NAMES = ["Alice", "Bob", "Cara", "Dan", "Eve", "Finn", "Gia", "Hal", "Ivy", "Jon"]


def _kk_statement(rng: random.Random, me: int, n: int) -> tuple[str, list]:
    kind = rng.choice(["is", "isnt", "both", "oneknave", "same", "diff"])
    others = [i for i in range(n) if i != me]
    a = rng.choice(others)
    b = rng.choice([i for i in range(n) if i != a])
    return kind, [a, b]


def _kk_truth(kind: str, a: int, b: int, w: tuple[bool, ...]) -> bool:
    return {"is": w[a], "isnt": not w[a], "both": w[a] and w[b], "oneknave": (not w[a]) or (not w[b]),
            "same": w[a] == w[b], "diff": w[a] != w[b]}[kind]


def _kk_text(kind: str, a: str, b: str) -> str:
    return {"is": f"{a} is a knight.", "isnt": f"{a} is a knave.",
            "both": f"{a} and {b} are both knights.", "oneknave": f"At least one of {a} and {b} is a knave.",
            "same": f"{a} and {b} are the same kind.", "diff": f"{a} and {b} are different kinds."}[kind]


ID_KNIGHTS_KNAVES = "logic.knights_knaves-v1"


def _knights_knaves_draw(rng: random.Random, difficulty: int) -> Task:
    n = 1 + difficulty
    names = rng.sample(NAMES, n)
    while True:
        stmts = [_kk_statement(rng, i, n) for i in range(n)]
        sols = [w for w in itertools.product([True, False], repeat=n)
                if all(_kk_truth(k, a, b, w) == w[i] for i, (k, (a, b)) in enumerate(stmts))]
        if len(sols) == 1:
            break
    lines = [f"{names[i]} says: \"{_kk_text(k, names[a], names[b])}\"" for i, (k, (a, b)) in enumerate(stmts)]
    prompt = ("On an island every person is a knight (always tells the truth) or a knave (always lies).\n"
              + "\n".join(lines) + "\nAnswer with every person as Name=knight or Name=knave, "
              f"comma-separated, e.g. {names[0]}=knight, {names[1]}=knave.")
    sol = {names[i]: "knight" if sols[0][i] else "knave" for i in range(n)}
    return make_task(ID_KNIGHTS_KNAVES, difficulty, prompt, public={"names": names}, hidden={"solution": sol})


def _knights_knaves_reference(task: Task) -> str:
    return ", ".join(f"{k}={v}" for k, v in task.hidden["solution"].items())


def _knights_knaves_check(task: Task, answer: str) -> Score:
    got = parse_assignment(answer, task.public["names"], ("knight", "knave"))
    sol = {k.lower(): v for k, v in task.hidden["solution"].items()}
    v = 1.0 if got == sol else 0.0
    return Score(v, components={"all_correct": (v, 1.0)}, verifier_version=task.domain,
                 reason="bad format" if got is None else ("correct" if v else "wrong"))


def _knights_knaves_probes(task: Task) -> dict[str, str]:
    sol = task.hidden["solution"]
    flip = {"knight": "knave", "knave": "knight"}
    return {"flipped": ", ".join(f"{k}={flip[v]}" for k, v in sol.items()),
            "missing": ", ".join(f"{k}={v}" for k, v in list(sol.items())[1:])}


register_domain(SingleTurnDomain(
    ID_KNIGHTS_KNAVES, _knights_knaves_draw, _knights_knaves_check, _knights_knaves_probes,
    reference=_knights_knaves_reference, description="""\
Knights always tell the truth, knaves always lie: identify everyone.

Trains: case analysis over self-referential statements. All-or-nothing (a per-person
coin flip is not evidence of reasoning). Not covered: "normals"/spies.
Probes: everyone flipped, a missing person.
"""))


ZEBRA_CATS = {"colour": ["red", "green", "blue", "white", "yellow"],
              "pet": ["dog", "cat", "fish", "bird", "horse"],
              "drink": ["tea", "coffee", "milk", "juice", "water"]}


def _zebra_clue(rng: random.Random, sol: tuple, cats: list[str], n: int) -> tuple:
    """A random clue true of ``sol`` (sol[c][v] = house of value v in category c)."""
    c1, c2 = rng.randrange(len(cats)), rng.randrange(len(cats))
    v1, v2 = rng.randrange(n), rng.randrange(n)
    h1, h2 = sol[c1][v1], sol[c2][v2]
    kind = rng.choice(["at", "same", "left", "next", "not_at", "before"])
    if kind == "at":
        return ("at", c1, v1, h1)
    if kind == "not_at":
        return ("not_at", c1, v1, rng.choice([h for h in range(n) if h != h1]))
    if (c1, v1) == (c2, v2):
        return ("at", c1, v1, h1)
    if h1 == h2:
        return ("same", c1, v1, c2, v2)
    if h1 + 1 == h2:
        return ("left", c1, v1, c2, v2)
    if abs(h1 - h2) == 1:
        return ("next", c1, v1, c2, v2)
    return ("before", c1, v1, c2, v2) if h1 < h2 else ("before", c2, v2, c1, v1)


def _zebra_holds(cl: tuple, s: tuple) -> bool:
    k = cl[0]
    if k == "at":
        return s[cl[1]][cl[2]] == cl[3]
    if k == "not_at":
        return s[cl[1]][cl[2]] != cl[3]
    a, b = s[cl[1]][cl[2]], s[cl[3]][cl[4]]
    return {"same": a == b, "left": a + 1 == b, "next": abs(a - b) == 1, "before": a < b}[k]


def _zebra_text(cl: tuple, cats: list[str]) -> str:
    def who(c: int, v: int) -> str:
        return f"the house with the {ZEBRA_CATS[cats[c]][v]} {cats[c]}"
    k = cl[0]
    if k in ("at", "not_at"):
        return f"{who(cl[1], cl[2]).capitalize()} is {'not ' if k == 'not_at' else ''}house {cl[3] + 1}."
    a, b = who(cl[1], cl[2]).capitalize(), who(cl[3], cl[4])
    return {"same": f"{a} is also {b}.", "left": f"{a} is directly left of {b}.",
            "next": f"{a} is next to {b}.", "before": f"{a} is somewhere left of {b}."}[k]


ID_ZEBRA = "logic.zebra-v1"


def _zebra_draw(rng: random.Random, difficulty: int) -> Task:
    n, k = (3, 2) if difficulty == 1 else (3, 3) if difficulty == 2 else (4, 3)
    cats = list(ZEBRA_CATS)[:k]
    perms = list(itertools.permutations(range(n)))
    sol = tuple(rng.choice(perms) for _ in cats)
    cands = list(itertools.product(perms, repeat=k))
    clues: list[tuple] = []
    while len(cands) > 1:
        cl = _zebra_clue(rng, sol, cats, n)
        kept = [s for s in cands if _zebra_holds(cl, s)]
        if len(kept) < len(cands):
            clues.append(cl)
            cands = kept
    vals = {c: ZEBRA_CATS[c][:n] for c in cats}
    grid = [[vals[c][sol[ci].index(h)] for ci, c in enumerate(cats)] for h in range(n)]
    prompt = (f"{n} houses stand in a row, numbered 1 to {n} from left to right. Each has one "
              + ", one ".join(f"{c} ({'/'.join(vals[c])})" for c in cats)
              + ", all different.\n" + "\n".join(_zebra_text(c, cats) for c in clues)
              + f"\nAnswer with one line per house, in order, as `house N: "
              + ", ".join(f"<{c}>" for c in cats) + "`, e.g. `house 1: "
              + ", ".join(vals[c][0] for c in cats) + "`.")
    return make_task(ID_ZEBRA, difficulty, prompt, public={"cats": cats, "n": n},
                     hidden={"grid": grid})


def _zebra_reference(task: Task) -> str:
    return "\n".join(f"house {h + 1}: {', '.join(row)}" for h, row in enumerate(task.hidden["grid"]))


def _zebra_check(task: Task, answer: str) -> Score:
    grid, n = task.hidden["grid"], task.public["n"]
    got: dict[int, list[str]] = {}
    for line in (answer_text(answer) or "").splitlines():
        m = re.fullmatch(r"\s*(?:house\s*)?(\d+)\s*:\s*(.+?)\s*", line, re.I)
        if not line.strip():
            continue
        vals = [v.strip().lower() for v in m.group(2).split(",")] if m else []
        if not m or int(m.group(1)) - 1 in got or len(vals) != len(grid[0]):
            got = {}
            break
        got[int(m.group(1)) - 1] = vals
    ok = sorted(got) == list(range(n))
    hit = sum(got[h][c] == grid[h][c] for h in range(n) for c in range(len(grid[0]))) if ok else 0
    v = hit / (n * len(grid[0]))
    return Score(v, components={"cells": (v, 1.0)}, passed=hit, total=n * len(grid[0]),
                 reason="ok" if ok else "bad format", verifier_version=task.domain)


def _zebra_probes(task: Task) -> dict[str, str]:
    g = task.hidden["grid"]
    return {"shifted": "\n".join(f"house {h + 1}: {', '.join(g[(h + 1) % len(g)])}" for h in range(len(g)))}


register_domain(SingleTurnDomain(
    ID_ZEBRA, _zebra_draw, _zebra_check, _zebra_probes, reference=_zebra_reference, description="""\
Zebra (Einstein) grid puzzle with a unique solution: fill every house's attributes.

Trains: constraint propagation over several categories. Partial credit: fraction of
(house, category) cells right; every house must be listed once with one value per
category. Not covered: more than 4 houses. Probes: the solution shifted by one house.
"""))


ID_ORDERING = "logic.ordering-v1"


def _ordering_draw(rng: random.Random, difficulty: int) -> Task:
    order = rng.sample(NAMES, 2 + 2 * difficulty)
    pairs = [(order[i], order[i + 1]) for i in range(len(order) - 1)]
    pairs += [tuple(sorted(rng.sample(order, 2), key=order.index)) for _ in range(difficulty)]
    rng.shuffle(pairs)
    facts = [f"{a} is taller than {b}." if rng.random() < 0.5 else f"{b} is shorter than {a}."
             for a, b in pairs]
    prompt = (" ".join(facts) + "\nList everyone from tallest to shortest, comma-separated names, "
              "nothing else.")
    return make_task(ID_ORDERING, difficulty, prompt, answer=order, public={"names": sorted(order)})


def _ordering_reference(task: Task) -> str:
    return ", ".join(task.hidden["answer"])


def _ordering_check(task: Task, answer: str) -> Score:
    exp = [x.lower() for x in task.hidden["answer"]]
    got = parse_word_list(answer)
    if got is None or sorted(got) != sorted(exp):
        return Score(0.0, components={"pairs": (0.0, 1.0)}, reason="not a permutation of the names",
                     verifier_version=task.domain)
    pos = {x: i for i, x in enumerate(got)}
    pairs = list(itertools.combinations(exp, 2))
    conc = sum(pos[a] < pos[b] for a, b in pairs) / len(pairs)
    v = max(0.0, 2 * conc - 1)
    return Score(v, components={"pairs": (v, 1.0)}, reason=f"concordant {conc:.2f}",
                 verifier_version=task.domain)


def _ordering_probes(task: Task) -> dict[str, str]:
    o = task.hidden["answer"]
    return {"reversed": ", ".join(o[::-1]), "repeated": ", ".join([o[0]] + o[:-1])}


register_domain(SingleTurnDomain(
    ID_ORDERING, _ordering_draw, _ordering_check, _ordering_probes, reference=_ordering_reference, description="""\
Recover a total order (tallest to shortest) from pairwise comparisons.

Trains: transitive closure. Partial credit: pairwise agreement corrected for chance
(2*concordant-1, floor 0); the answer must be a permutation of the names.
Not covered: partial orders with ties. Probes: the reversed order, a repeated name.
"""))


TERMS = ["blickets", "daxes", "wugs", "feps", "zorbs", "tufas", "glims", "moxes"]
FORMS = {"A": "All {} are {}.", "E": "No {} are {}.", "I": "Some {} are {}.", "O": "Some {} are not {}."}
NEG = {"A": "O", "O": "A", "E": "I", "I": "E"}


def _regions(form: str, x: int, y: int, nterms: int) -> tuple[bool, set[int]]:
    """(universal?, regions): universal statements empty the regions, particular ones need one."""
    rs = range(1 << nterms)
    inx = lambda r, t: bool(r >> t & 1)  # noqa: E731
    if form in ("A", "O"):
        regs = {r for r in rs if inx(r, x) and not inx(r, y)}
    else:
        regs = {r for r in rs if inx(r, x) and inx(r, y)}
    return form in ("A", "E"), regs


def _consistent(stmts: list[tuple[str, int, int]], nterms: int) -> bool:
    empty: set[int] = set()
    needs = []
    for f, x, y in stmts:
        uni, regs = _regions(f, x, y, nterms)
        if uni:
            empty |= regs
        else:
            needs.append(regs)
    return all(regs - empty for regs in needs)


ID_SYLLOGISM = "logic.syllogism-v1"


def _syllogism_draw(rng: random.Random, difficulty: int) -> Task:
    nt = 2 + difficulty
    terms = rng.sample(TERMS, nt)
    want_valid = rng.random() < 0.5
    while True:
        chain = [(rng.choice("AEIO"), i, i + 1) if rng.random() < 0.5 else (rng.choice("AEIO"), i + 1, i)
                 for i in range(nt - 1)]
        concl = (rng.choice("AEIO"), 0, nt - 1) if rng.random() < 0.5 else (rng.choice("AEIO"), nt - 1, 0)
        if not _consistent(chain, nt):
            continue
        valid = not _consistent(chain + [(NEG[concl[0]], concl[1], concl[2])], nt)
        if valid == want_valid:
            break
    rng.shuffle(chain)
    text = lambda s: FORMS[s[0]].format(terms[s[1]], terms[s[2]])  # noqa: E731
    prompt = ("Premises: " + " ".join(text(s) for s in chain) + f"\nConclusion: {text(concl)}\n"
              "Does the conclusion follow necessarily from the premises? Do not assume any "
              "category is non-empty unless a premise says so. Answer exactly one word: valid or invalid.")
    return make_task(ID_SYLLOGISM, difficulty, prompt, answer="valid" if valid else "invalid")


def _syllogism_probes(task: Task) -> dict[str, str]:
    return {"opposite": "invalid" if task.hidden["answer"] == "valid" else "valid"}


register_domain(SingleTurnDomain(
    ID_SYLLOGISM, _syllogism_draw, exact_check, _syllogism_probes,
    description="""\
Decide whether a conclusion follows from categorical premises (modern semantics).

Trains: quantifier reasoning; validity is decided exactly by region analysis of the Venn
diagram, no existential import. Not covered: relational or numerical quantifiers.
Probes: the opposite verdict.
"""))
