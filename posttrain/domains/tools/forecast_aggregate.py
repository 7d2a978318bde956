"""Weather across cities, then aggregate: ``tools.forecast_aggregate-v1``.

Trains: calling ``get_forecast(city, days)`` for each city named (independent calls, best
issued together), with exactly the horizon asked for, then aggregating the returned daily
records: rainy-day counts, mean daily highs, the largest daily swing, total rain.

Difficulty: 1 = one city, a count; 2 = two or three cities, "which city" by mean high or
rainy days; 3 = four or five cities, total rain (one decimal) or the city with the largest
single-day swing (high − low).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]); numbers within
0.05; a "which city" answer is ``<city> <value>`` (the city exact, case-insensitive, and its
value), so the reply is never just one of the names in the prompt.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``whole_week`` (every city fetched
with 7 days instead of the horizon asked, then the right answer).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, number_score, Plan, S, tool, turns

CITIES = ["Reykjavik", "Nairobi", "Lyon", "Osaka", "Denver", "Tbilisi", "Hobart", "Recife", "Bergen", "Pune"]


def _forecast(st, city, days):
    if city not in st["fc"]:
        raise ValueError(f"unknown city {city!r}")
    return st["fc"][city][:days]


ID = "tools.forecast_aggregate-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_forecast", "Daily forecast (high/low °C, rain mm) for the next `days` days.",
                 {"city": S, "days": {"type": "integer", "minimum": 1, "maximum": 7}}, _forecast, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    fc = {}
    for c in CITIES:
        base = rng.randint(-5, 28)
        days = []
        for d in range(7):
            hi = base + rng.randint(-4, 6)
            rain = rng.choice([0.0, 0.0, round(rng.uniform(0.2, 25), 1)])
            days.append({"day": d + 1, "high": hi, "low": hi - rng.randint(2, 14), "rain_mm": rain})
        fc[c] = days
    n_days = rng.randint(3, 6)
    k = {1: 1, 2: rng.randint(2, 3), 3: rng.randint(4, 5)}[difficulty]
    cities = rng.sample(CITIES, k)
    rows = {c: fc[c][:n_days] for c in cities}
    kind = {1: "rainy", 2: rng.choice(["mean_high", "most_rainy"]), 3: rng.choice(["total_rain", "swing"])}[difficulty]
    rainy = {c: sum(r["rain_mm"] > 0 for r in rows[c]) for c in cities}
    if kind == "rainy":
        q = f"On how many of the next {n_days} days will it rain (rain_mm > 0) in {cities[0]}? Reply with the number."
        ans = str(rainy[cities[0]])
    elif kind == "total_rain":
        q = f"What is the total rain in mm over the next {n_days} days, summed over all these cities? Reply with the number, one decimal."
        ans = f"{sum(r['rain_mm'] for c in cities for r in rows[c]):.1f}"
    else:
        key = {"mean_high": lambda c: sum(r["high"] for r in rows[c]) / n_days,
               "most_rainy": lambda c: rainy[c],
               "swing": lambda c: max(r["high"] - r["low"] for r in rows[c])}[kind]
        vals = sorted((key(c) for c in cities), reverse=True)
        if len(vals) > 1 and vals[0] == vals[1]:
            return _plan(rng, difficulty)
        top = max(cities, key=key)
        ans = f"{top} {key(top):.1f}"
        q = {"mean_high": f"Which city has the highest mean daily high over the next {n_days} days, and what is it?",
             "most_rainy": f"Which city has the most rainy days (rain_mm > 0) in the next {n_days} days, and how many?",
             "swing": f"Which city has the largest single-day swing (high - low) in the next {n_days} days, "
                      "and how large?"}[kind]
        q += " Reply as '<city> <value with one decimal>'."
    prompt = f"Cities: {', '.join(cities)}. {q} Request exactly {n_days} days per city."
    turns = [[("get_forecast", {"city": c, "days": n_days}) for c in cities]]
    return Plan(prompt, {"fc": fc}, turns, ans, public={"cities": cities}, extra={"kind": kind})


def _answer_score(task, got):
    if task.hidden["kind"] in ("rainy", "total_rain"):
        return number_score(got, task.hidden["answer_value"], tol=0.05)
    city, _, value = (got or "").strip().rpartition(" ")
    want_city, _, want_value = task.hidden["answer_value"].rpartition(" ")
    return 1.0 if city.strip().lower() == want_city.lower() and number_score(value, want_value, 0.05) else 0.0


def _extra_probes(task):
    week = [(n, {**a, "days": 7}) for n, a in turns(task)[0]]
    return {"whole_week": [format_calls(*week), format_answer(task.hidden["answer_value"])]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, answer_score=_answer_score,
    extra_probes=_extra_probes))
