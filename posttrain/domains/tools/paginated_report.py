"""Pagination: ``tools.paginated_report-v1`` — fetch every page, then answer.

Trains: walking a cursor-paginated API to the end: ``list_transactions(account, cursor)``
returns a page of items and ``next_cursor`` (a random opaque token, ``null`` on the last
page; the first page takes ``cursor=""``), so pages can only be fetched in order, one turn
each. The question needs every page: a total, a filtered total, or a filtered count.

Difficulty: pages 2 / 3-4 / 5-6 (total of all / total of one category / count of one category
above an amount).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]), calls matched *in
order*; the answer exact.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``invented_cursors`` (pages requested
with guessed cursors "2", "3", ..., then the right answer).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, Plan, S, tool

CATEGORIES = ["groceries", "travel", "rent", "dining", "utilities", "books"]


def _list(st, account, cursor):
    if account != st["account"]:
        raise ValueError(f"no account {account!r}")
    if cursor not in st["pages"]:
        raise ValueError(f"invalid cursor {cursor!r}")
    return st["pages"][cursor]


ID = "tools.paginated_report-v1"


def _tools(st: dict[str, Any]):
    return [tool("list_transactions", "A page of an account's transactions; pass next_cursor for the next.",
                 {"account": S, "cursor": S}, _list, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n_pages = {1: 2, 2: rng.randint(3, 4), 3: rng.randint(5, 6)}[difficulty]
    account = f"ACC-{rng.randint(10000, 99999)}"
    cursors = [""] + [f"{rng.getrandbits(40):010x}" for _ in range(n_pages - 1)]
    pages, items = {}, []
    for i, c in enumerate(cursors):
        page = [{"id": f"t{len(items) + j + 1}", "category": rng.choice(CATEGORIES),
                 "amount_cents": rng.randint(100, 50000)} for j in range(rng.randint(3, 5))]
        items += page
        pages[c] = {"items": page, "next_cursor": cursors[i + 1] if i + 1 < n_pages else None}
    cat = rng.choice(sorted({t["category"] for t in items}))
    floor = rng.choice([5000, 10000, 20000])
    if difficulty == 1:
        q, ans = "What is the total of all transactions in cents?", sum(t["amount_cents"] for t in items)
    elif difficulty == 2:
        q = f"What is the total in cents of the {cat} transactions?"
        ans = sum(t["amount_cents"] for t in items if t["category"] == cat)
    else:
        q = f"How many {cat} transactions are above {floor} cents?"
        ans = sum(t["category"] == cat and t["amount_cents"] > floor for t in items)
    prompt = (f"Account {account}. {q} Fetch every page: start with cursor \"\" and follow next_cursor "
              "until it is null. Reply with the number only.")
    turns = [[("list_transactions", {"account": account, "cursor": c})] for c in cursors]
    return Plan(prompt, {"account": account, "pages": pages}, turns, str(ans), public={"account": account})


def _extra_probes(task):
    acct = task.public["account"]
    n = len(task.hidden["calls"])
    guesses = [("list_transactions", {"account": acct, "cursor": str(i)}) for i in range(2, n + 2)]
    return {"invented_cursors": [format_calls(*guesses), format_answer(task.hidden["answer_value"])]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, ordered=True))
