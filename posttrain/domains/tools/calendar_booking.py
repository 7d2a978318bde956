"""Calendar booking with conflicts: ``tools.calendar_booking-v1``.

Trains: reading several people's calendars through ``list_events(person, date)`` (their events
are hidden; other dates hold distractor events), finding the earliest common free slot of a
given length on a 30-minute grid inside working hours (and after a "not before" time at level
3), then booking it with ``create_event`` — which refuses overlapping or out-of-hours events
with an error the policy can read.

Difficulty: attendees 1 / 2 / 3 (level 3 adds a "not before" time and 90-minute meetings).

Reward: validity² × (0.3·calls + 0.7·result·precision²·[all calls made]); ``result`` is the
mean of ``state_ok`` (the env's calendar after the episode equals the expected one: exactly
one new event with the right date, times, title and attendees) and ``answer_ok`` (the start
time replied as ``HH:MM``).

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``book_at_nine`` (no reading, the
meeting booked at 09:00 then that time replied). Partial credit: the reads alone earn the
calls part (0.3 × recall), never the result.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, hhmm, minutes, Plan, S, tool, turns

PEOPLE = ["ana", "ben", "chloe", "dev", "eli", "fay", "gus", "hana", "ivo", "jun"]
TITLES = ["design review", "budget sync", "hiring panel", "retro", "vendor call", "1:1"]
DAY_START, DAY_END = 9 * 60, 17 * 60


def _list(st, person, date):
    if person not in st["events"]:
        raise ValueError(f"unknown person {person!r}")
    return [{k: e[k] for k in ("id", "start", "end", "title")}
            for e in st["events"][person] if e["date"] == date]


def _create(st, title, date, start, end, attendees):
    try:
        a, b = minutes(start), minutes(end)
    except ValueError:
        raise ValueError("start and end must be HH:MM") from None
    if not (DAY_START <= a < b <= DAY_END):
        raise ValueError("events must lie within 09:00-17:00 and end after they start")
    for p in attendees:
        if p not in st["events"]:
            raise ValueError(f"unknown person {p!r}")
        for e in st["events"][p]:
            if e["date"] == date and minutes(e["start"]) < b and a < minutes(e["end"]):
                raise ValueError(f"conflict with {p}'s event {e['id']} ({e['start']}-{e['end']})")
    st["next_id"] += 1
    eid = f"ev{st['next_id']}"
    for p in attendees:
        st["events"][p].append({"id": eid, "date": date, "start": start, "end": end, "title": title})
    return {"id": eid}


def _busy(rng: random.Random, k: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for _ in range(k):
        a = rng.randrange(DAY_START, DAY_END - 30, 30)
        b = min(DAY_END, a + 30 * rng.randint(1, 4))
        if all(b <= x or y <= a for x, y in out):
            out.append((a, b))
    return sorted(out)


ID = "tools.calendar_booking-v1"


def _tools(st: dict[str, Any]):
    return [tool("list_events", "Events of a person on a date (YYYY-MM-DD).", {"person": S, "date": S}, _list, st),
            tool("create_event", "Create an event for all attendees (times HH:MM, 24 h).",
                 {"title": S, "date": S, "start": S, "end": S,
                  "attendees": {"type": "array", "items": S, "minItems": 1}}, _create, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n = difficulty
    dur = rng.choice([30, 60] if difficulty < 3 else [60, 90])
    not_before = rng.choice([11, 12, 13]) * 60 if difficulty == 3 else DAY_START
    date = f"2025-{rng.randint(3, 11):02d}-{rng.randint(10, 27):02d}"
    other = date[:-2] + f"{int(date[-2:]) + 1:02d}"
    while True:
        people = rng.sample(PEOPLE, n)
        events: dict[str, list[dict[str, Any]]] = {p: [] for p in PEOPLE}
        busy = {p: _busy(rng, rng.randint(2, 4)) for p in people}
        slot = next((s for s in range(not_before, DAY_END - dur + 1, 30)
                     if all(b <= s or s + dur <= a for p in people for a, b in busy[p])), None)
        if slot is not None and slot > not_before:  # the answer is never a time the prompt states
            break
    k = 0
    for p in PEOPLE:
        blocks = [(date, a, b) for a, b in busy.get(p, [])]
        blocks += [(other, a, min(DAY_END, a + 60)) for a in rng.sample(range(DAY_START, DAY_END - 60, 60), 2)]
        for d, a, b in blocks:
            k += 1
            events[p].append({"id": f"ev{k}", "date": d, "start": hhmm(a), "end": hhmm(b),
                              "title": rng.choice(TITLES)})
    title = rng.choice(["planning", "kickoff", "demo prep", "incident review"])
    names = ", ".join(people)
    extra = f", starting no earlier than {hhmm(not_before)}" if not_before > DAY_START else ""
    prompt = (f"Book a {dur}-minute meeting titled '{title}' on {date} for {names} at the earliest "
              f"start time (on a :00 or :30 boundary, within 09:00-17:00{extra}) when every attendee "
              f"is free. Attendees in the order given. Reply with the start time as HH:MM.")
    create = ("create_event", {"title": title, "date": date, "start": hhmm(slot), "end": hhmm(slot + dur),
                               "attendees": people})
    turns = [[("list_events", {"person": p, "date": date}) for p in people], [create]]
    return Plan(prompt, {"events": events, "next_id": k}, turns, hhmm(slot),
                public={"attendees": people, "date": date})


def _extra_probes(task):
    reads, create = turns(task)
    args = dict(create[0][1])
    dur = minutes(args["end"]) - minutes(args["start"])
    nine = {**args, "start": "09:00", "end": hhmm(DAY_START + dur)}
    return {"book_at_nine": [format_calls(("create_event", nine)), format_answer("09:00")]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, result="both"))
