"""Deduction over stated facts: family relations, rule chaining, set algebra.

Answers are sets; the verifiers demand the exact set (order free, no duplicates), because
listing every candidate would otherwise harvest partial credit.

Not covered: defeasible rules, negation as failure, infinite sets.
"""

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain
from posttrain.verifiers.structured import answer_text, parse_int_list, parse_word_list

MALE = ["Adam", "Ben", "Carl", "Dev", "Eli", "Fred", "Gus", "Hugo", "Ian", "Jack", "Karl", "Leo",
        "Max", "Ned", "Otto", "Paul", "Quin", "Ray"]
FEMALE = ["Anna", "Beth", "Cleo", "Dora", "Emma", "Faye", "Gwen", "Hana", "Iris", "Jade", "Kim",
          "Lily", "Mia", "Nora", "Olga", "Pia", "Rosa", "Sara"]


def set_score(domain_id: str, got: list | None, exp: list) -> Score:
    ok = got is not None and len(got) == len(set(got)) and set(got) == set(exp)
    v = 1.0 if ok else 0.0
    return Score(v, components={"set": (v, 1.0)}, verifier_version=domain_id,
                 reason="exact set" if ok else ("bad format" if got is None else "different set"))


def _family(rng: random.Random, difficulty: int) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(gender by name, parents by child) of a three-generation family."""
    males, females = rng.sample(MALE, len(MALE)), rng.sample(FEMALE, len(FEMALE))
    gender: dict[str, str] = {}
    parents: dict[str, list[str]] = {}

    def person(g: str) -> str:
        left = males if g == "m" else females
        if left:
            name = left.pop()
        else:  # a large family used every name: the next ones get a suffix (unique, stable)
            base = MALE if g == "m" else FEMALE
            k = len(gender)
            name = f"{base[k % len(base)]} {k // len(base) + 2}"
        gender[name] = g
        return name

    couples = [(person("m"), person("f"))]
    for gen in range(2):
        nxt = []
        for dad, mum in couples:
            for _ in range(rng.randint(2, 2 + difficulty)):
                child = person(rng.choice("mf"))
                parents[child] = [dad, mum]
                if gen == 0 and rng.random() < 0.85:
                    spouse = person("f" if gender[child] == "m" else "m")
                    nxt.append((child, spouse) if gender[child] == "m" else (spouse, child))
        couples = nxt
    return gender, parents


def relatives(rel: str, x: str, gender: dict[str, str], parents: dict[str, list[str]]) -> list[str]:
    kids = lambda p: [c for c, ps in parents.items() if p in ps]  # noqa: E731
    sibs = lambda p: [s for s in parents if s != p and p in parents and parents[s] == parents[p]]  # noqa: E731
    if rel in ("siblings", "brothers", "sisters"):
        out = sibs(x)
    elif rel in ("grandparents", "grandmothers", "grandfathers"):
        out = [g for p in parents.get(x, []) for g in parents.get(p, [])]
    elif rel in ("uncles", "aunts"):
        out = [s for p in parents.get(x, []) for s in sibs(p)]
    elif rel == "cousins":
        out = [c for p in parents.get(x, []) for s in sibs(p) for c in kids(s)]
    elif rel in ("grandchildren", "grandsons", "granddaughters"):
        out = [g for c in kids(x) for g in kids(c)]
    else:
        raise ValueError(rel)
    want = {"brothers": "m", "sisters": "f", "grandmothers": "f", "grandfathers": "m", "uncles": "m",
            "aunts": "f", "grandsons": "m", "granddaughters": "f"}.get(rel)
    return sorted({p for p in out if want is None or gender[p] == want})


RELS = ["siblings", "brothers", "sisters", "grandparents", "grandmothers", "grandfathers", "uncles",
        "aunts", "cousins", "grandchildren", "grandsons", "granddaughters"]


ID_FAMILY_RELATIONS = "logic.family_relations-v1"


def _family_relations_draw(rng: random.Random, difficulty: int) -> Task:
    while True:
        gender, parents = _family(rng, difficulty)
        rel, x = rng.choice(RELS), rng.choice(sorted(gender))
        ans = relatives(rel, x, gender, parents)
        if ans:
            break
    facts = [f"{ps[0]} and {ps[1]} are the parents of {c}." for c, ps in parents.items()]
    rng.shuffle(facts)
    people = ", ".join(f"{n} ({'male' if g == 'm' else 'female'})" for n, g in sorted(gender.items()))
    prompt = (f"People: {people}.\n" + "\n".join(facts) + "\nSiblings share both parents; uncles and "
              "aunts are siblings of a parent (not their spouses); cousins are children of a "
              f"parent's sibling.\nWho are all the {rel} of {x}? Answer with the names, comma-separated, "
              "nothing else.")
    return make_task(ID_FAMILY_RELATIONS, difficulty, prompt, answer=ans, public={"people": sorted(gender)})


def _family_relations_reference(task: Task) -> str:
    return ", ".join(task.hidden["answer"])


def _family_relations_check(task: Task, answer: str) -> Score:
    return set_score(task.domain, parse_word_list(answer), [a.lower() for a in task.hidden["answer"]])


def _family_relations_probes(task: Task) -> dict[str, str]:
    ans = task.hidden["answer"]
    out = {"everyone": ", ".join(task.public["people"])}
    if len(ans) > 1:
        out["minus_one"] = ", ".join(ans[1:])
    return out


register_domain(SingleTurnDomain(
    ID_FAMILY_RELATIONS, _family_relations_draw, _family_relations_check, _family_relations_probes,
    reference=_family_relations_reference, description="""\
Name everyone in a given relation to a person, from parent facts and genders.

Trains: composing parent/child facts into kinship terms (relations are defined in the
prompt, blood relatives only). Exact set required. Not covered: in-laws, step-relations.
Probes: every person in the family, the set minus one member.
"""))


ATOMS = [f"{a}{b}" for a in "pqrstuvw" for b in "123"]


ID_FORWARD_CHAINING = "logic.forward_chaining-v1"


def _forward_chaining_draw(rng: random.Random, difficulty: int) -> Task:
    atoms = rng.sample(ATOMS, 6 + 3 * difficulty)
    facts = atoms[:2 + difficulty // 2]
    rules = []
    for _ in range(4 + 3 * difficulty):
        body = rng.sample(atoms, rng.randint(1, min(3, difficulty + 1)))
        head = rng.choice([a for a in atoms if a not in body])
        rules.append([body, head])
    known = set(facts)
    while True:
        new = {h for b, h in rules if set(b) <= known} - known
        if not new:
            break
        known |= new
    prompt = ("Facts: " + ", ".join(facts) + ".\nRules:\n"
              + "\n".join(f"if {' and '.join(b)} then {h}" for b, h in rules)
              + "\nWhich atoms are true (facts and everything derivable)? Answer with all of them, "
              "comma-separated, nothing else.")
    return make_task(ID_FORWARD_CHAINING, difficulty, prompt, answer=sorted(known),
                     public={"atoms": atoms, "facts": facts})


def _forward_chaining_reference(task: Task) -> str:
    return ", ".join(task.hidden["answer"])


def _forward_chaining_check(task: Task, answer: str) -> Score:
    return set_score(task.domain, parse_word_list(answer), task.hidden["answer"])


def _forward_chaining_probes(task: Task) -> dict[str, str]:
    out = {"all_atoms": ", ".join(task.public["atoms"])}
    if set(task.public["facts"]) != set(task.hidden["answer"]):
        out["facts_only"] = ", ".join(task.public["facts"])
    return {k: v for k, v in out.items() if set(v.split(", ")) != set(task.hidden["answer"])}


register_domain(SingleTurnDomain(
    ID_FORWARD_CHAINING, _forward_chaining_draw, _forward_chaining_check, _forward_chaining_probes,
    reference=_forward_chaining_reference, description="""\
Derive every atom that follows from facts and Horn rules (forward chaining).

Trains: iterated rule application to a fixpoint. Exact set required. Not covered:
negation, disjunctive heads. Probes: every atom mentioned, the facts alone.
"""))


def _set_expr(rng: random.Random, names: list[str], depth: int) -> tuple[str, str]:
    """(display text, python expression) over sets named in ``names``."""
    if depth == 0:
        n = rng.choice(names)
        return n, n
    op = rng.choice(["∪", "∩", "\\", "Δ"])
    py = {"∪": "|", "∩": "&", "\\": "-", "Δ": "^"}[op]
    (a, pa), (b, pb) = _set_expr(rng, names, depth - 1), _set_expr(rng, names, rng.randint(0, depth - 1))
    return f"({a} {op} {b})", f"({pa} {py} {pb})"


ID_SET_OPS = "logic.set_ops-v1"


def _set_ops_draw(rng: random.Random, difficulty: int) -> Task:
    names = ["A", "B", "C"][: 1 + min(difficulty, 2)]
    sets = {n: sorted(rng.sample(range(1, 10 + 5 * difficulty), 4 + difficulty)) for n in names}
    while True:
        text, py = _set_expr(rng, names, difficulty)
        val = sorted(eval(py, {}, {n: set(v) for n, v in sets.items()}))  # noqa: S307 (our own expr)
        if any(n in py for n in names[1:]) and val != sorted(set().union(*map(set, sets.values()))):
            break
    prompt = ("; ".join(f"{n} = {{{', '.join(map(str, v))}}}" for n, v in sets.items())
              + f".\nCompute {text[1:-1] if text.startswith('(') else text} (∪ union, ∩ intersection, "
              "\\ difference, Δ symmetric difference). Answer with the set in increasing order as "
              "{1, 2, 3}, or {} if empty, nothing else.")
    return make_task(ID_SET_OPS, difficulty, prompt, answer=val, public={"sets": sets})


def _set_ops_reference(task: Task) -> str:
    return "{" + ", ".join(map(str, task.hidden["answer"])) + "}"


def _set_ops_check(task: Task, answer: str) -> Score:
    t = (answer_text(answer) or "").strip()
    got = parse_int_list(t[1:-1]) if t.startswith("{") and t.endswith("}") else None
    return set_score(task.domain, got, task.hidden["answer"])


def _set_ops_probes(task: Task) -> dict[str, str]:
    allv = sorted(set().union(*map(set, task.public["sets"].values())))
    return {"union_of_all": "{" + ", ".join(map(str, allv)) + "}"}


register_domain(SingleTurnDomain(
    ID_SET_OPS, _set_ops_draw, _set_ops_check, _set_ops_probes, reference=_set_ops_reference, description="""\
Evaluate a set-algebra expression (union, intersection, difference, symmetric difference).

Trains: operator semantics and nesting. Exact set required, written ``{1, 2}`` or ``{}``.
Not covered: complements w.r.t. a universe, cardinal arithmetic. Probes: the union of all sets.
"""))
