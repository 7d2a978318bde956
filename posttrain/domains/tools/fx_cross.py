"""Currency exchange through a hub: ``tools.fx_cross-v1``.

Trains: converting with rate lookups where only quotes against EUR exist:
``get_rate(base, quote)`` answers when one side is EUR (hidden per-task rates; X→EUR is
1/(EUR→X) rounded to 6 places) and errors otherwise ("cross through EUR"). The prompt states
the convention: each amount to EUR with ``get_rate(ccy, "EUR")``, sum, then to the target with
``get_rate("EUR", target)``, rounding only the final result to cents.

Difficulty: 1 = one amount from EUR (one call); 2 = one amount between two non-EUR currencies
(two calls); 3 = three expenses in different currencies summed into a target (four calls,
looked up together).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]); the answer within
0.02 (float order of operations).

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``direct_pair`` (the forbidden direct
quote, which errors, then the right answer).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, number_score, Plan, tool, turns

CCY = ["USD", "GBP", "JPY", "CHF", "SEK", "NOK", "PLN", "CZK", "AUD", "CAD"]
ENUM = {"type": "string", "enum": ["EUR"] + CCY}


def _rate(st, base, quote):
    if base == quote:
        return 1.0
    if base == "EUR":
        return st["eur"][quote]
    if quote == "EUR":
        return round(1 / st["eur"][base], 6)
    raise ValueError(f"no direct quote for {base}/{quote}; cross through EUR")


ID = "tools.fx_cross-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_rate", "Units of quote per 1 base (quotes exist only against EUR).",
                 {"base": ENUM, "quote": ENUM}, _rate, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    eur = {c: round(rng.uniform(0.6, 1.8), 4) for c in CCY}
    eur.update(JPY=round(rng.uniform(120, 175), 2), SEK=round(rng.uniform(9, 12.5), 4),
               NOK=round(rng.uniform(9, 12.5), 4), CZK=round(rng.uniform(22, 27), 3),
               PLN=round(rng.uniform(3.9, 4.8), 4))
    st = {"eur": eur}
    if difficulty == 1:
        tgt = rng.choice(CCY)
        amt = rng.randint(20, 9000)
        calls = [("get_rate", {"base": "EUR", "quote": tgt})]
        ans = amt * eur[tgt]
        ask = f"Convert {amt} EUR to {tgt}."
    else:
        k = 1 if difficulty == 2 else 3
        picked = rng.sample(CCY, k + 1)
        srcs, tgt = picked[:k], picked[k]
        amts = [rng.randint(20, 9000) for _ in srcs]
        calls = [("get_rate", {"base": s, "quote": "EUR"}) for s in srcs] + [("get_rate", {"base": "EUR", "quote": tgt})]
        ans = sum(a * _rate(st, s, "EUR") for a, s in zip(amts, srcs)) * eur[tgt]
        items = ", ".join(f"{a} {s}" for a, s in zip(amts, srcs))
        ask = f"Convert {items} to {tgt}." if k == 1 else f"Expenses: {items}. What is their total in {tgt}?"
    prompt = (f"{ask} Rates exist only against EUR: convert each amount to EUR with get_rate(ccy, 'EUR'), "
              "add, then convert with get_rate('EUR', target). Round only the final result to 2 decimals; "
              "reply with the number only.")
    return Plan(prompt, st, [calls], f"{ans:.2f}", extra={"target": tgt})


def _answer_score(task, got):
    return number_score(got, task.hidden["answer_value"], tol=0.02)


def _extra_probes(task):
    calls = turns(task)[0]
    if task.difficulty == 1:
        return {}
    direct = [("get_rate", {"base": n["base"], "quote": task.hidden["target"]}) for _, n in calls[:-1]]
    return {"direct_pair": [format_calls(*direct), format_answer(task.hidden["answer_value"])]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, answer_score=_answer_score,
    extra_probes=_extra_probes))
