"""Long-context reasoning: multi-hop chains, aggregation over records, latest state of a log.

- ``long_context.multihop-v1`` — follow a chain (laptop → holder → manager → manager ...) and
  report the office city at its end; hops grow with difficulty (1 at d1 to 4 at d4).
- ``long_context.aggregate-v1`` — count the people matching a condition (department, joined
  before a year; at d3+ also an office city) spread over the whole handbook.
- ``long_context.latest-v1`` — a facilities move log with many people's room moves; report a
  person's room after the most recent move. Above d1 the log is not in date order, so "the
  last mention" is a trap.

Difficulty is length and distractor density (as in :mod:`.retrieval`). Exact match of the whole
answer. What they train: composing lookups, counting without skipping, temporal ordering.
Not covered: arithmetic beyond counting, unanswerable questions.

The multi-hop answer is a city written in the document by design (exempt from the
answer-in-prompt heuristic). Probes: the city one hop short, every city listed, the count
without the year condition, the count off by one, the first room, the last-mentioned room,
every room of the person listed.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, exact_check
from posttrain.domains.long_context import _kit as K
from posttrain.domains.long_context._corpus import CITIES, SIZES, assemble, make_people, profile


ID_MULTI_HOP = "long_context.multihop-v1"


def _multi_hop_draw(rng: random.Random, difficulty: int) -> Draft:
    n, n_fill, near = SIZES[difficulty]
    people = make_people(rng, max(n, 6), near)
    by_name = {p["name"]: p for p in people}
    start = rng.choice(people)
    chain = [start]
    for _ in range(difficulty):
        chain.append(by_name[chain[-1]["manager"]])
    doc = assemble(rng, [profile(rng, p) for p in people], n_fill, "STAFF HANDBOOK — DIRECTORY AND NOTICES")
    if difficulty == 1:
        subject = f"the manager of {start['name']}"
    else:
        subject = "the person who holds laptop " + start["device"]
        for _ in range(difficulty - 1):
            subject = f"the manager of {subject}"
        subject = f"the manager of {subject}"
    q = f"{doc}\n\nQuestion: in which city is the office of {subject}? Answer with the city name only."
    short = sorted({p["city"] for p in chain[:-1]} - {chain[-1]["city"]})
    return Draft(q, answer=chain[-1]["city"], hidden={"short_cities": short})


def _multi_hop_probes(task: Task) -> dict[str, str]:
    out = {f"one_hop_short_{i}": c for i, c in enumerate(task.hidden["short_cities"])}
    out["all_cities"] = ", ".join(CITIES)
    return out


ID_AGGREGATE = "long_context.aggregate-v1"


def _aggregate_draw(rng: random.Random, difficulty: int) -> Draft:
    n, n_fill, near = SIZES[difficulty]
    for _ in range(50):
        people = make_people(rng, max(n, 10), near)
        p0 = rng.choice(people)
        dept, year = p0["dept"], rng.randint(2008, 2022)
        city = p0["city"] if difficulty >= 3 else None
        pool = [p for p in people if p["dept"] == dept and (city is None or p["city"] == city)]
        hits = [p for p in pool if p["start"] < year]
        if hits and len(hits) < len(pool):  # the year condition must matter
            break
    doc = assemble(rng, [profile(rng, p) for p in people], n_fill, "STAFF HANDBOOK — DIRECTORY AND NOTICES")
    where = f" at the {city} office" if city else ""
    q = (f"{doc}\n\nQuestion: how many people in the {dept} department{where} joined before {year}? "
         "Answer with a single integer.")
    return Draft(q, answer=str(len(hits)), hidden={"pool": len(pool)})


def _aggregate_probes(task: Task) -> dict[str, str]:
    a = int(task.hidden["answer"])
    return {"no_year_condition": str(task.hidden["pool"]), "plus_one": str(a + 1), "minus_one": str(a - 1),
            "range": " ".join(str(i) for i in range(0, a + 3))}


def _room(rng: random.Random) -> str:
    return f"{rng.randint(1, 9)}{rng.choice('ABCDEFGH')}-{rng.randint(10, 99)}"


ID_LATEST = "long_context.latest-v1"


def _latest_draw(rng: random.Random, difficulty: int) -> Draft:
    n, n_fill, near = SIZES[difficulty]
    people = make_people(rng, max(n // 2, 6), near)
    target = rng.choice(people)
    entries = []  # (date, name, room)
    for p in people:
        k = rng.randint(3, 3 + difficulty) if p is target else rng.randint(1, 2 + difficulty)
        days = rng.sample(range(1, 2000), k)
        rooms: list[str] = []
        while len(rooms) < k:  # a person's rooms are distinct, so "which room" is unambiguous
            r = _room(rng)
            rooms += [] if r in rooms else [r]
        entries += [(d, p["name"], r) for d, r in zip(days, rooms)]
    mine = sorted((d, r) for d, nm, r in entries if nm == target["name"])
    entries.sort()
    if difficulty > 1:
        rng.shuffle(entries)
        # the trap: the latest move must not be the last one mentioned
        idx = [i for i, e in enumerate(entries) if e[1] == target["name"]]
        latest_i = next(i for i in idx if entries[i][0] == mine[-1][0])
        if latest_i == max(idx):
            entries[latest_i], entries[idx[0]] = entries[idx[0]], entries[latest_i]
    lines = [f"Day {d}: {nm} moved to room {r}." for d, nm, r in entries]
    chunks = [" ".join(lines[i:i + 6]) for i in range(0, len(lines), 6)]
    doc = assemble(rng, chunks, n_fill // 2, "FACILITIES MOVE LOG (day numbers count from the opening of the site)")
    q = (f"{doc}\n\nQuestion: after all the moves in the log (latest day number wins), which room is "
         f"{target['name']} in? Answer with the room only.")
    in_text = [r for _, nm, r in entries if nm == target["name"]]
    return Draft(q, answer=mine[-1][1],
                 hidden={"first": mine[0][1], "last_mentioned": in_text[-1], "all": in_text})


def _latest_probes(task: Task) -> dict[str, str]:
    a = task.hidden["answer"]
    out = {"all_rooms": "\n".join(task.hidden["all"])}
    for k in ("first", "last_mentioned"):
        if task.hidden[k] != a:
            out[k] = task.hidden[k]
    return out


register_domain(K.lc_domain(
    ID_MULTI_HOP, _multi_hop_draw, exact_check, _multi_hop_probes,
    exempt={"answer_in_prompt": "the answer is a city named in the document by design"},
    description="Following a chain of references (laptop, holder, managers) through a long handbook to a city.\n\n"
                "1 hop at d1 to 4 at d4. Exact match of the whole answer."))
register_domain(K.lc_domain(
    ID_AGGREGATE, _aggregate_draw, exact_check, _aggregate_probes,
    description="Counting the records that match a condition across a whole long handbook.\n\n"
                "Department and joined-before-year, at d3+ also an office city. Exact integer."))
register_domain(K.lc_domain(
    ID_LATEST, _latest_draw, exact_check, _latest_probes,
    description="Tracking the latest state in a long, unordered move log (latest day wins, not last mention).\n\n"
                "Above d1 the log is not in date order. Exact match of the room."))
