"""Error recovery: ``tools.error_recovery-v1`` — tool errors that must be read and acted on.

Trains: pricing a list of catalogue codes with ``get_price(code)`` when the API fails in two
recoverable ways: a *renamed* code answers "code X was renamed to Y" (the new code is random
and appears only in that error, so the retry cannot be guessed or skipped) and a *flaky*
code answers "503 temporarily unavailable; retry the same call" on its first request(s). The
policy must retry exactly the right call, then reply with the order total.

Difficulty: 1 = two codes, one renamed; 2 = three codes, one renamed and one flaky; 3 = four
codes, a renamed code whose new code is flaky too, plus one more flaky code.

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]); the expected calls
include the failing first attempts (matched as a multiset, in any order), so giving up after
an error, guessing a price, or hammering one call all cost; the answer is the total in cents.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``guess_new_code`` (the renamed code
retried with an invented code, then the right total). Partial credit, not a probe: the first
round alone (no retry) keeps the calls part, never the answer part.
"""

from __future__ import annotations

import random
import string
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, Plan, S, tool


def _price(st, code):
    if code in st["renamed"]:
        raise ValueError(f"code {code!r} was renamed to {st['renamed'][code]!r}")
    if code not in st["price"]:
        raise ValueError(f"unknown code {code!r}")
    if st["flaky"].get(code, 0) > 0:
        st["flaky"][code] -= 1
        raise ValueError("503 temporarily unavailable; retry the same call")
    return {"code": code, "price_cents": st["price"][code]}


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(2)) + f"-{rng.randint(1000, 9999)}"


ID = "tools.error_recovery-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_price", "Unit price in cents of a catalogue code.", {"code": S}, _price, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n = difficulty + 1
    codes = [_code(rng) for _ in range(n)]
    if len(set(codes)) < n:
        return _plan(rng, difficulty)
    qty = {c: rng.randint(1, 5) for c in codes}
    price, renamed, flaky = {}, {}, {}
    for c in codes:
        price[c] = rng.randint(99, 9999)
    order = list(codes)
    rng.shuffle(order)
    old = order[0]  # renamed: its price lives under a new code
    new = _code(rng) + "N"
    renamed[old] = new
    price[new] = price.pop(old)
    if difficulty >= 2:
        flaky[order[1]] = 1
    if difficulty == 3:
        flaky[new] = 1
    world = {"price": price, "renamed": renamed, "flaky": flaky}
    first = [("get_price", {"code": c}) for c in codes]
    second = [("get_price", {"code": new})] + [("get_price", {"code": c}) for c in codes if c in flaky]
    turns = [first, second] + ([[("get_price", {"code": new})]] if new in flaky else [])
    total = sum(qty[c] * price[renamed.get(c, c)] for c in codes)
    items = ", ".join(f"{qty[c]} x {c}" for c in codes)
    prompt = (f"Price this order: {items}. Use get_price for each code; if a call fails, read the error and "
              "recover (a renamed code keeps its price under the new code; a temporary error needs the "
              "same call again). Reply with the order total in cents.")
    return Plan(prompt, world, turns, str(total), public={"codes": codes}, extra={"renamed_from": old})


def _extra_probes(task):
    ans = task.hidden["answer_value"]
    guess = [("get_price", {"code": task.hidden["renamed_from"] + "-N"})]
    return {"guess_new_code": [format_calls(*guess), format_answer(ans)]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes))
