"""Flight search then booking: ``tools.flight_booking-v1``.

Trains: searching a hidden timetable with ``search_flights(origin, destination, date)`` on
each allowed date, filtering by constraints (at most N stops, departing at or after a time),
choosing the cheapest remaining flight and booking it with ``book_flight(flight_id,
passenger)``. The globally cheapest flight always breaks a constraint from level 2 on, so
"cheapest" alone is wrong.

Difficulty: 1 = one date, cheapest; 2 = one date, a stop limit and an earliest departure;
3 = three dates searched in one turn, both constraints.

Reward: validity² × (0.3·calls + 0.7·result·precision²·[all calls made]); ``result`` = mean of
``state_ok`` (exactly the right booking exists) and ``answer_ok`` (the booked flight's price).

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``book_cheapest_unfiltered`` (the
searches, then the cheapest flight ignoring constraints booked, the right price replied).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, hhmm, minutes, Plan, S, tool, turns

AIRPORTS = ["LIS", "OSL", "ATH", "DUB", "PRG", "VIE", "CPH", "HEL", "BCN", "ZRH"]


def _search(st, origin, destination, date):
    return st["flights"].get(f"{origin}|{destination}|{date}", [])


def _book(st, flight_id, passenger):
    if not any(f["flight_id"] == flight_id for fs in st["flights"].values() for f in fs):
        raise ValueError(f"unknown flight {flight_id!r}")
    st["bookings"].append({"booking": f"BK{len(st['bookings']) + 1}", "flight_id": flight_id, "passenger": passenger})
    return st["bookings"][-1]


ID = "tools.flight_booking-v1"


def _tools(st: dict[str, Any]):
    return [tool("search_flights", "Flights on a route and date (YYYY-MM-DD).",
                 {"origin": S, "destination": S, "date": S}, _search, st),
            tool("book_flight", "Book a flight for a passenger.", {"flight_id": S, "passenger": S}, _book, st)]


def _flights(rng: random.Random, n: int) -> list[dict[str, Any]]:
    prices = rng.sample(range(49, 900), n)
    return [{"flight_id": f"{rng.choice('AFKLUX')}{rng.choice('AEOSY')}{rng.randint(100, 9999)}",
             "depart": hhmm(rng.randrange(6 * 60, 22 * 60, 5)), "stops": rng.choice([0, 0, 1, 1, 2]),
             "price": p} for p in prices]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    a, b = rng.sample(AIRPORTS, 2)
    month = rng.randint(3, 10)
    day0 = rng.randint(3, 24)
    dates = [f"2025-{month:02d}-{day0 + i:02d}" for i in range(3 if difficulty == 3 else 1)]
    max_stops = rng.choice([0, 1]) if difficulty >= 2 else 9
    earliest = rng.choice([8, 10, 12, 14]) * 60 if difficulty >= 2 else 0
    ok = lambda f: f["stops"] <= max_stops and minutes(f["depart"]) >= earliest  # noqa: E731
    flights = {f"{a}|{b}|{d}": _flights(rng, rng.randint(3, 5)) for d in dates}
    flights[f"{b}|{a}|{dates[0]}"] = _flights(rng, 3)  # the return direction: a distractor
    every = [f for d in dates for f in flights[f"{a}|{b}|{d}"]]
    good = [f for f in every if ok(f)]
    if not good or len({f["flight_id"] for f in every}) < len(every):
        return _plan(rng, difficulty)
    if difficulty >= 2 and ok(min(every, key=lambda f: f["price"])):
        return _plan(rng, difficulty)
    best = min(good, key=lambda f: f["price"])
    who = rng.choice(["R. Okafor", "M. Lindqvist", "S. Tanaka", "P. Duarte"])
    when = f"on {dates[0]}" if len(dates) == 1 else f"on any of {', '.join(dates)}"
    cons = ""
    if difficulty >= 2:
        cons = f" with at most {max_stops} stop{'s' if max_stops != 1 else ''}, departing at or after {hhmm(earliest)}"
    prompt = (f"Book {who} on the cheapest flight from {a} to {b} {when}{cons}. "
              "Reply with the price of the booked flight.")
    turns = [[("search_flights", {"origin": a, "destination": b, "date": d}) for d in dates],
             [("book_flight", {"flight_id": best["flight_id"], "passenger": who})]]
    return Plan(prompt, {"flights": flights, "bookings": []}, turns, str(best["price"]),
                extra={"cheapest_any": min(every, key=lambda f: f["price"])["flight_id"]})


def _extra_probes(task):
    if task.difficulty < 2:
        return {}
    searches, book = turns(task)
    bad = ("book_flight", {**book[0][1], "flight_id": task.hidden["cheapest_any"]})
    return {"book_cheapest_unfiltered": [format_calls(bad), format_answer(task.hidden["answer_value"])]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, result="both"))
