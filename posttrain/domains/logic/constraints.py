"""Constraint satisfaction and planning: seating, job schedules, water jugs, cryptarithms,
graph colouring.

Each verifier checks the answer by simulation or by evaluating every constraint, so any
valid answer counts; optimality (where asked) is measured against an exact optimum computed
at generation time.

Not covered: resource-constrained scheduling, plans longer than a few dozen steps.
"""

from __future__ import annotations

import random
import re
from collections import deque

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import SingleTurnDomain
from posttrain.verifiers.structured import answer_text, parse_assignment, parse_word_list

PEOPLE = ["Ada", "Ben", "Cy", "Di", "Ed", "Flo", "Gil", "Hap", "Ike", "Jo"]


def _seat_constraint(rng: random.Random, order: list[str]) -> list:
    n = len(order)
    a, b = rng.sample(order, 2)
    ia, ib = order.index(a), order.index(b)
    kind = rng.choice(["seat", "left_of", "next", "not_next", "end", "before"])
    if kind == "seat":
        return ["seat", a, ia + 1]
    if kind == "end":
        a = rng.choice([order[0], order[-1]])
        return ["end", a]
    if abs(ia - ib) == 1:
        return ["left_of", a, b] if ia + 1 == ib else ["next", a, b]
    if kind == "not_next":
        return ["not_next", a, b]
    return ["before", a, b] if ia < ib else ["before", b, a]


def seat_holds(c: list, pos: dict[str, int], n: int) -> bool:
    k = c[0]
    if k == "seat":
        return pos[c[1]] == c[2] - 1
    if k == "end":
        return pos[c[1]] in (0, n - 1)
    a, b = pos[c[1]], pos[c[2]]
    return {"left_of": a + 1 == b, "next": abs(a - b) == 1, "not_next": abs(a - b) != 1, "before": a < b}[k]


SEAT_TEXT = {"seat": "{0} sits in seat {1}.", "end": "{0} sits at one end of the row.",
             "left_of": "{0} sits immediately left of {1}.", "next": "{0} sits next to {1}.",
             "not_next": "{0} does not sit next to {1}.", "before": "{0} sits somewhere left of {1}."}


ID_SEATING = "logic.seating-v1"


def _seating_draw(rng: random.Random, difficulty: int) -> Task:
    order = rng.sample(PEOPLE, 3 + difficulty)
    cons = [_seat_constraint(rng, order) for _ in range(2 * len(order))]
    prompt = (f"Seat {', '.join(sorted(order))} in a row of {len(order)} seats numbered 1 to {len(order)} "
              "from left to right.\n" + "\n".join(SEAT_TEXT[c[0]].format(*c[1:]) for c in cons)
              + "\nAnswer with the names from seat 1 to the last seat, comma-separated, nothing else.")
    return make_task(ID_SEATING, difficulty, prompt, public={"people": sorted(order), "constraints": cons},
                     hidden={"order": order})


def _seating_reference(task: Task) -> str:
    return ", ".join(task.hidden["order"])


def _seating_check(task: Task, answer: str) -> Score:
    people = [p.lower() for p in task.public["people"]]
    got = parse_word_list(answer)
    if got is None or sorted(got) != sorted(people):
        return Score(0.0, components={"constraints": (0.0, 1.0)}, reason="not a permutation",
                     verifier_version=task.domain)
    pos = {p: got.index(p.lower()) for p in task.public["people"]}
    cons = task.public["constraints"]
    ok = sum(seat_holds(c, pos, len(people)) for c in cons)
    v = 1.0 if ok == len(cons) else 0.5 * ok / len(cons)
    return Score(v, components={"constraints": (v, 1.0)}, passed=ok, total=len(cons),
                 reason=f"{ok}/{len(cons)} constraints", verifier_version=task.domain)


def _seating_probes(task: Task) -> dict[str, str]:
    o = task.hidden["order"]
    return {"repeated": ", ".join([o[0]] + o[:-1]), "missing": ", ".join(o[1:])}


register_domain(SingleTurnDomain(
    ID_SEATING, _seating_draw, _seating_check, _seating_probes, reference=_seating_reference, description="""\
Seat people in a row so that every stated constraint holds.

Verified by checking each constraint on the answered order (any satisfying order counts);
partial credit 0.5 x fraction satisfied, only for a permutation of the people.
Not covered: circular tables. Probes: a repeated person, a missing person.
"""))


ID_PRECEDENCE_SCHEDULE = "logic.precedence_schedule-v1"


def _precedence_schedule_draw(rng: random.Random, difficulty: int) -> Task:
    jobs = [chr(65 + i) for i in range(3 + 2 * difficulty)]
    dur = {j: rng.randint(1, 9) for j in jobs}
    pre = {j: sorted(rng.sample(jobs[:i], min(i, rng.randint(0, 2)))) for i, j in enumerate(jobs)}
    if not any(pre.values()):
        pre[jobs[-1]] = [jobs[0]]
    start: dict[str, int] = {}
    for j in jobs:
        start[j] = max((start[p] + dur[p] for p in pre[j]), default=0)
    opt = max(start[j] + dur[j] for j in jobs)
    lines = [f"{j}: {dur[j]} h" + (f", after {', '.join(pre[j])}" if pre[j] else "") for j in jobs]
    prompt = ("Jobs (duration, prerequisites that must finish first):\n" + "\n".join(lines)
              + "\nAny number of jobs may run at once. Give a start time (whole hours from 0) for every "
              "job so that all jobs finish as early as possible.\nAnswer as A=0, B=3, ... with every job, "
              "nothing else.")
    return make_task(ID_PRECEDENCE_SCHEDULE, difficulty, prompt, public={"dur": dur, "pre": pre},
                     hidden={"start": start, "optimum": opt})


def _precedence_schedule_reference(task: Task) -> str:
    return ", ".join(f"{j}={t}" for j, t in task.hidden["start"].items())


def _precedence_schedule_check(task: Task, answer: str) -> Score:
    dur, pre = task.public["dur"], task.public["pre"]
    got = parse_assignment(answer, list(dur), lower=False)
    if got is None or any(not re.fullmatch(r"\d{1,4}", t) for t in got.values()):
        return Score(0.0, components={"valid": (0.0, 1.0)}, reason="bad format", verifier_version=task.domain)
    st = {j: int(t) for j, t in got.items()}
    bad = [j for j in dur if any(st[j] < st[p] + dur[p] for p in pre[j])]
    span = max(st[j] + dur[j] for j in dur)
    opt = task.hidden["optimum"]
    v = 0.0 if bad else (1.0 if span == opt else 0.25 * opt / span)
    return Score(v, components={"valid": (float(not bad), 0.0), "makespan": (v, 1.0)},
                 verifier_version=task.domain, reason=f"violations {bad[:3]}" if bad else f"makespan {span}/{opt}")


def _precedence_schedule_probes(task: Task) -> dict[str, str]:
    jobs = list(task.public["dur"])
    return {"all_zero": ", ".join(f"{j}=0" for j in jobs),
            "missing": ", ".join(f"{j}={t}" for j, t in list(task.hidden["start"].items())[1:])}


register_domain(SingleTurnDomain(
    ID_PRECEDENCE_SCHEDULE, _precedence_schedule_draw, _precedence_schedule_check, _precedence_schedule_probes,
    reference=_precedence_schedule_reference, description="""\
Schedule jobs with durations and prerequisites: start times minimising the makespan.

Unlimited workers.

Verified: every job must start at or after all its prerequisites finish; an optimal
(critical-path) makespan scores 1, a valid slower one 0.25 x optimum/makespan.
Not covered: limited workers. Probes: everything at time 0, a missing job.
"""))


def jug_step(state: tuple, op: tuple, caps: list[int]) -> tuple:
    s = list(state)
    if op[0] == "fill":
        s[op[1]] = caps[op[1]]
    elif op[0] == "empty":
        s[op[1]] = 0
    else:
        a, b = op[1], op[2]
        amt = min(s[a], caps[b] - s[b])
        s[a], s[b] = s[a] - amt, s[b] + amt
    return tuple(s)


def jug_bfs(caps: list[int], target: int) -> list[tuple] | None:
    n = len(caps)
    ops = [("fill", i) for i in range(n)] + [("empty", i) for i in range(n)] + [
        ("pour", a, b) for a in range(n) for b in range(n) if a != b]
    start = tuple([0] * n)
    prev: dict[tuple, tuple] = {start: (None, None)}
    q = deque([start])
    while q:
        s = q.popleft()
        if target in s:
            path = []
            while prev[s][0] is not None:
                s, op = prev[s]
                path.append(op)
            return path[::-1]
        for op in ops:
            t = jug_step(s, op, caps)
            if t not in prev:
                prev[t] = (s, op)
                q.append(t)
    return None


JUGS = "ABC"


ID_WATER_JUGS = "logic.water_jugs-v1"


def _water_jugs_draw(rng: random.Random, difficulty: int) -> Task:
    n = 2 if difficulty < 3 else 3
    while True:
        caps = sorted(rng.sample(range(2, 6 + 4 * difficulty), n))
        target = rng.randint(1, max(caps) - 1)
        if target in caps:
            continue
        plan = jug_bfs(caps, target)
        if plan and len(plan) >= 2 + difficulty:
            break
    names = ", ".join(f"{JUGS[i]} holds {c} litres" for i, c in enumerate(caps))
    prompt = (f"Jugs: {names}; all start empty and have no markings. Get exactly {target} litres in one "
              "jug using as few steps as possible. Steps: `fill X`, `empty X`, `pour X Y` (pour X into Y "
              "until X is empty or Y is full).\nAnswer with one step per line, nothing else.")
    return make_task(ID_WATER_JUGS, difficulty, prompt, public={"caps": caps, "target": target},
                     hidden={"plan": [list(p) for p in plan]})


def _water_jugs_reference(task: Task) -> str:
    return "\n".join(" ".join([p[0]] + [JUGS[i] for i in p[1:]]) for p in task.hidden["plan"])


def _water_jugs_check(task: Task, answer: str) -> Score:
    caps, target = task.public["caps"], task.public["target"]
    lines = [ln.strip().lower() for ln in (answer_text(answer) or "").splitlines() if ln.strip()]
    names = JUGS[: len(caps)].lower()
    state, reached = tuple([0] * len(caps)), False
    for ln in lines[:60] if len(lines) <= 60 else []:
        m = re.fullmatch(rf"(fill|empty) ([{names}])|pour ([{names}]) ([{names}])", ln)
        if not m or (m.group(3) and m.group(3) == m.group(4)):
            reached = False
            break
        op = (m.group(1), names.index(m.group(2))) if m.group(1) else (
            "pour", names.index(m.group(3)), names.index(m.group(4)))
        state = jug_step(state, op, caps)
        reached = target in state
    v = len(task.hidden["plan"]) / len(lines) if reached else 0.0
    return Score(v, components={"plan": (v, 1.0)}, verifier_version=task.domain,
                 reason=f"reached in {len(lines)} steps" if reached else "target not reached")


def _water_jugs_probes(task: Task) -> dict[str, str]:
    return {"fill_largest": f"fill {JUGS[len(task.public['caps']) - 1]}"}


register_domain(SingleTurnDomain(
    ID_WATER_JUGS, _water_jugs_draw, _water_jugs_check, _water_jugs_probes,
    reference=_water_jugs_reference, description="""\
Measure an exact amount with unmarked jugs (fill, empty, pour), in few steps.

Verified by simulating the plan; reaching the target scores optimum/steps (1 when
optimal, from breadth-first search); an invalid step or a miss scores 0.
Not covered: jugs with initial contents. Probes: filling the largest jug once.
"""))


ID_CRYPTARITHM = "logic.cryptarithm-v1"


def _cryptarithm_holds(task: Task, m: dict[str, int]) -> bool:
    w = task.public["words"]
    num = lambda s: int("".join(str(m[c]) for c in s))  # noqa: E731
    return (len(set(m.values())) == len(m) and all(m[x[0]] != 0 for x in w)
            and num(w[0]) + num(w[1]) == num(w[2]))


def _cryptarithm_draw(rng: random.Random, difficulty: int) -> Task:
    d = 1 + difficulty
    a, b = rng.randint(10 ** (d - 1), 10 ** d - 1), rng.randint(10 ** (d - 1), 10 ** d - 1)
    digits = sorted(set(f"{a}{b}{a + b}"))
    letters = rng.sample("ABCDEFGHJKLMNPRSTUWXYZ", len(digits))
    key = dict(zip(digits, letters))
    words = ["".join(key[c] for c in str(x)) for x in (a, b, a + b)]
    prompt = (f"Solve the cryptarithm {words[0]} + {words[1]} = {words[2]}: each letter stands for a "
              "different digit and no number starts with 0.\nAnswer with every letter as X=digit, "
              "comma-separated, nothing else.")
    return make_task(ID_CRYPTARITHM, difficulty, prompt, public={"words": words},
                     hidden={"key": {v: int(k) for k, v in key.items()}})


def _cryptarithm_reference(task: Task) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(task.hidden["key"].items()))


def _cryptarithm_check(task: Task, answer: str) -> Score:
    letters = sorted(task.hidden["key"])
    got = parse_assignment(answer, letters, [str(d) for d in range(10)], lower=False)
    ok = got is not None and _cryptarithm_holds(task, {k: int(v) for k, v in got.items()})
    v = 1.0 if ok else 0.0
    return Score(v, components={"equation": (v, 1.0)}, verifier_version=task.domain,
                 reason="holds" if ok else ("bad format" if got is None else "does not hold"))


def _cryptarithm_probes(task: Task) -> dict[str, str]:
    letters = sorted(task.hidden["key"])
    out = {"same_digit": ", ".join(f"{c}=1" for c in letters)}
    seq = {c: i for i, c in enumerate(letters)}
    if not _cryptarithm_holds(task, seq):
        out["alphabetical"] = ", ".join(f"{c}={i}" for c, i in seq.items())
    return out


register_domain(SingleTurnDomain(
    ID_CRYPTARITHM, _cryptarithm_draw, _cryptarithm_check, _cryptarithm_probes,
    reference=_cryptarithm_reference, description="""\
Assign distinct digits to letters so a letter addition (SEND + MORE style) holds.

Verified arithmetically: any valid assignment counts (distinct digits, no leading zero).
Not covered: subtraction/multiplication puzzles. Probes: letters numbered 0,1,2...
in alphabetical order, every letter mapped to the same digit.
"""))


ID_GRAPH_COLORING = "logic.graph_coloring-v1"


def _graph_coloring_draw(rng: random.Random, difficulty: int) -> Task:
    n, k = 4 + 2 * difficulty, 3
    nodes = [f"v{i}" for i in range(1, n + 1)]
    edges: list[list[str]] = []
    while not edges:
        plant = {v: rng.randint(1, k) for v in nodes}
        edges = [[a, b] for i, a in enumerate(nodes) for b in nodes[i + 1:]
                 if plant[a] != plant[b] and rng.random() < 0.6]
    prompt = (f"Vertices: {', '.join(nodes)}. Edges: {', '.join(f'{a}-{b}' for a, b in edges)}.\n"
              f"Colour every vertex with a colour 1..{k} so that the two ends of every edge differ. "
              "Answer as v1=1, v2=3, ... with every vertex, nothing else.")
    return make_task(ID_GRAPH_COLORING, difficulty, prompt, public={"nodes": nodes, "edges": edges, "k": k},
                     hidden={"coloring": plant})


def _graph_coloring_reference(task: Task) -> str:
    return ", ".join(f"{v}={c}" for v, c in task.hidden["coloring"].items())


def _graph_coloring_check(task: Task, answer: str) -> Score:
    k = task.public["k"]
    got = parse_assignment(answer, task.public["nodes"], [str(c) for c in range(1, k + 1)])
    edges = task.public["edges"]
    ok = 0 if got is None else sum(got[a] != got[b] for a, b in edges)
    v = 1.0 if got is not None and ok == len(edges) else 0.0
    return Score(v, components={"proper": (v, 1.0)}, passed=ok, total=len(edges),
                 reason=f"{ok}/{len(edges)} edges proper", verifier_version=task.domain)


def _graph_coloring_probes(task: Task) -> dict[str, str]:
    nodes = task.public["nodes"]
    return {"one_colour": ", ".join(f"{v}=1" for v in nodes),
            "all_distinct": ", ".join(f"{v}={i + 1}" for i, v in enumerate(nodes))}


register_domain(SingleTurnDomain(
    ID_GRAPH_COLORING, _graph_coloring_draw, _graph_coloring_check, _graph_coloring_probes,
    reference=_graph_coloring_reference, description="""\
Colour a graph's vertices with k colours so no edge joins equal colours.

Verified edge by edge (a planted colouring guarantees one exists); all-or-nothing, as
a random colouring already satisfies most edges. Not covered: chromatic-number proofs.
Probes: one colour everywhere, a distinct colour per vertex (breaks the k limit).
"""))
