"""Lookup-API domains: ``tools.single_call-v1`` and ``tools.parallel_calls-v1``.

Trains: choosing the right function from a JSON-schema catalogue (weather, stock price,
currency conversion, distance, population) and filling its arguments exactly, once
(``single_call``) or as several independent calls issued together in one turn
(``parallel_calls``), then answering from the results. The values behind the functions are
drawn per task and kept in ``hidden``: the only way to know them is to call.

Difficulty: 1 = one function offered; 2 = three functions, one needed (two items for
parallel); 3 = the whole catalogue, enum-typed arguments (units, currencies) and three to
four items for parallel.

Reward (see :mod:`posttrain.domains.tools._api`): validity² × (0.3·calls + 0.7·answer·
precision²·[all calls made]); for ``parallel_calls`` the answer counts half unless every
call was issued in one turn (component ``parallel``). Does not cover: free-form arguments (dates, natural-language queries).

Probes (all must score ≤ 0.05): ``answer_without_calls`` (the correct answer, no call: a
leaked or guessed answer), ``spam_calls`` (the right calls hidden among 24 wrong ones, then
the right answer), ``wrong_arguments`` (the right functions with altered arguments, then the
right answer), ``invalid_calls`` (schema-violating arguments, then the right answer),
``unknown_tool`` (a function that does not exist), plus the generic probes.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_call, format_calls

from ._api import FunctionTool, call_score, exact_answer, outcome, reference_episode, spam_probe, tool_env

CITIES = ["Oslo", "Lima", "Cairo", "Perth", "Quito", "Dakar", "Hanoi", "Turin", "Porto", "Basel"]
TICKERS = ["ACME", "GLOBX", "INITech", "UMBR", "WAYNE", "STARK", "WONKA", "TYRELL"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF"]
COUNTRIES = ["Norway", "Peru", "Egypt", "Chile", "Kenya", "Nepal", "Italy", "Ghana"]

CATALOGUE = ("get_weather", "get_stock_price", "convert_currency", "get_distance", "get_population")


def _world(rng: random.Random) -> dict[str, Any]:
    return {
        "temp_c": {c: rng.randint(-15, 38) for c in CITIES},
        "price": {t: round(rng.uniform(5, 900), 2) for t in TICKERS},
        "rate": {c: round(rng.uniform(0.5, 2.0), 4) if c != "JPY" else round(rng.uniform(100, 160), 2)
                 for c in CURRENCIES},
        "pop": {c: rng.randint(1_000_000, 90_000_000) for c in COUNTRIES},
        "dist": {f"{a}|{b}": rng.randint(50, 12000) for a in CITIES for b in CITIES if a < b},
    }


def _weather(st, city, unit):
    if city not in st["temp_c"]:
        raise ValueError(f"unknown city {city!r}")
    c = st["temp_c"][city]
    return c if unit == "celsius" else round(c * 9 / 5 + 32, 1)


def _price(st, ticker):
    if ticker not in st["price"]:
        raise ValueError(f"unknown ticker {ticker!r}")
    return st["price"][ticker]


def _convert(st, amount, source, target):
    usd = amount / st["rate"][source] if source != "USD" else amount
    return round(usd * st["rate"][target] if target != "USD" else usd, 2)


def _distance(st, origin, destination):
    key = "|".join(sorted([origin, destination]))
    if key not in st["dist"]:
        raise ValueError("unknown route")
    return st["dist"][key]


def _population(st, country):
    if country not in st["pop"]:
        raise ValueError(f"unknown country {country!r}")
    return st["pop"][country]


def make_tools(names: list[str], state: dict[str, Any]) -> list[FunctionTool]:
    s = {"type": "string"}
    defs = {
        "get_weather": ("Current temperature in a city.", {"city": s, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, _weather),
        "get_stock_price": ("Last price of a stock ticker.", {"ticker": s}, _price),
        "convert_currency": ("Convert an amount between currencies.", {"amount": {"type": "number"}, "source": {"type": "string", "enum": CURRENCIES}, "target": {"type": "string", "enum": CURRENCIES}}, _convert),
        "get_distance": ("Road distance in km between two cities.", {"origin": s, "destination": s}, _distance),
        "get_population": ("Population of a country.", {"country": s}, _population),
    }
    return [FunctionTool(n, defs[n][0], defs[n][1], defs[n][2], state) for n in names]


def _question(rng: random.Random, name: str, difficulty: int) -> tuple[str, dict[str, Any]]:
    if name == "get_weather":
        city, unit = rng.choice(CITIES), ("fahrenheit" if difficulty >= 3 and rng.random() < 0.5 else "celsius")
        return f"the temperature in {city} in {unit}", {"city": city, "unit": unit}
    if name == "get_stock_price":
        t = rng.choice(TICKERS)
        return f"the stock price of {t}", {"ticker": t}
    if name == "convert_currency":
        a, b = rng.sample(CURRENCIES, 2)
        amt = rng.randint(10, 5000)
        return f"{amt} {a} converted to {b}", {"amount": amt, "source": a, "target": b}
    if name == "get_distance":
        a, b = rng.sample(CITIES, 2)
        return f"the road distance from {a} to {b} in km", {"origin": a, "destination": b}
    c = rng.choice(COUNTRIES)
    return f"the population of {c}", {"country": c}


class Lookup:
    """One lookup domain; ``parallel`` asks for several items of one function at once."""

    family = "tools"
    difficulties = (1, 2, 3)
    env_kind = "tool"

    def __init__(self, domain_id: str, parallel: bool):
        self.id, self.parallel = domain_id, parallel

    def _offered(self, rng: random.Random, need: list[str], difficulty: int) -> list[str]:
        k = {1: len(set(need)), 2: max(3, len(set(need))), 3: len(CATALOGUE)}[difficulty]
        rest = [n for n in CATALOGUE if n not in need]
        return sorted(set(need) | set(rng.sample(rest, max(0, k - len(set(need))))))

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        world = _world(rng)
        n_items = 1 if not self.parallel else {1: 2, 2: 2, 3: rng.randint(3, 4)}[difficulty]
        fn = rng.choice(CATALOGUE if difficulty > 1 else CATALOGUE[:2] + CATALOGUE[3:4])
        calls, qs = [], []
        while len(calls) < n_items:  # distinct items of one function
            q, args = _question(rng, fn, difficulty)
            if all(a != args for _, a in calls):
                calls.append((fn, args))
                qs.append(q)
        values = [make_tools([n], world)[0]._fn(world, **a) for n, a in calls]
        answer = self._answer(values)
        offered = self._offered(rng, [fn], difficulty)
        ask = (f"Find {qs[0]}. Reply with the number only." if not self.parallel else
               "Find " + "; ".join(qs) + ". Issue all the calls together in one turn, then reply "
               "with the sum of the results, rounded to 2 decimals.")
        prompt = (f"You can call these functions: {', '.join(offered)}. {ask} "
                  "Call functions as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>; "
                  "give the final reply as <answer>...</answer>.")
        return make_task(self.id, difficulty, prompt, public={"functions": offered},
                         hidden={"world": world, "calls": [{"name": n, "arguments": a} for n, a in calls],
                                 "answer_value": answer}, metadata={"items": len(calls)})

    def _answer(self, values: list[Any]) -> str:
        if not self.parallel:
            return str(values[0])
        return f"{round(sum(values), 2):.2f}"

    def make_env(self, task: Task):
        world = task.hidden["world"]
        tools = make_tools(list(task.public["functions"]), world)
        return tool_env(task, tools, self._verify, {}, 6, self.id)

    def _verify(self, env, trajectory):
        exp = env.task.hidden["calls"]
        m = call_score(env, exp, ordered=False)
        answer = exact_answer(env, env.task.hidden["answer_value"])
        if not self.parallel:
            return outcome(self.id, m, answer, "answer")
        together = 1.0 if len({c.turn for c in env.calls if c.valid}) == 1 else 0.0
        return outcome(self.id, m, answer * (0.5 + 0.5 * together), "answer",
                       extra={"parallel": together})

    def _expected(self, task: Task) -> list[tuple[str, dict[str, Any]]]:
        return [(c["name"], c["arguments"]) for c in task.hidden["calls"]]

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["answer_value"])

    def reference_actions(self, task: Task) -> list[str]:
        return reference_episode([self._expected(task)], task.hidden["answer_value"])


    def probes(self, task: Task) -> dict[str, Any]:
        exp, ans = self._expected(task), task.hidden["answer_value"]
        wrong = [(n, {k: (v + 7 if isinstance(v, (int, float)) else f"{v}-") for k, v in a.items()}
                  if n != "get_weather" else {**a, "city": a["city"] + "s"}) for n, a in exp]
        bad = [(n, {k: [v] for k, v in a.items()}) for n, a in exp]
        return {
            "answer_without_calls": format_answer(ans),
            "spam_calls": spam_probe([], exp, ans),
            "wrong_arguments": [format_calls(*wrong), format_answer(ans)],
            "invalid_calls": [format_calls(*bad), format_answer(ans)],
            "unknown_tool": [format_call("get_answer", {"question": "all"}), format_answer(ans)],
        }


SINGLE = register_domain(Lookup("tools.single_call-v1", parallel=False))
PARALLEL = register_domain(Lookup("tools.parallel_calls-v1", parallel=True))
