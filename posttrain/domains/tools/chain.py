"""Dependent lookups: ``tools.lookup_chain-v1`` — each call needs an id the previous one returned.

Trains: multi-step tool use where arguments come from earlier results: ``find_user(name)``
gives a random user id, ``list_orders(user_id)`` the order ids, ``get_order(order_id)`` an
order's amount and status; the question is the total of the user's *shipped* orders. Ids are
random per task and hidden, so no call can be skipped or guessed.

Difficulty: orders per user 1-2 / 2-3 / 3-5 (with cancelled orders from 2 on, which must be
left out of the total).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]) (calls unordered:
the dependency is enforced by the ids themselves). Does not cover: pagination or error recovery.

Probes (≤ 0.05): ``answer_without_calls`` (the right total, no call), ``fabricated_ids``
(``get_order`` on invented ids, then the right total), ``other_user`` (the whole chain for
another user, then the right total), ``spam_calls`` (the right calls among 40), plus the
generic probes.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._api import FunctionTool, call_score, exact_answer, outcome, reference_episode, spam_probe, tool_env

PEOPLE = ["Ada Byron", "Alan Kay", "Grace Hopper", "Ken Iverson", "Barbara Liskov", "John Backus",
          "Frances Allen", "Niklaus Wirth", "Edsger Dijkstra", "Donald Knuth"]


def _find(db, name):
    for uid, u in db["users"].items():
        if u["name"] == name:
            return {"user_id": uid}
    raise ValueError(f"no user named {name!r}")


def _orders(db, user_id):
    if user_id not in db["users"]:
        raise ValueError(f"no user {user_id!r}")
    return {"order_ids": db["users"][user_id]["orders"]}


def _order(db, order_id):
    if order_id not in db["orders"]:
        raise ValueError(f"no order {order_id!r}")
    return db["orders"][order_id]


def chain_tools(db: dict[str, Any]) -> list[FunctionTool]:
    s = {"type": "string"}
    return [FunctionTool("find_user", "Find a user id by full name.", {"name": s}, _find, db),
            FunctionTool("list_orders", "Order ids of a user.", {"user_id": s}, _orders, db),
            FunctionTool("get_order", "Amount (cents) and status of an order.", {"order_id": s}, _order, db)]


def _db(rng: random.Random, difficulty: int) -> tuple[dict[str, Any], str]:
    lo, hi = {1: (1, 2), 2: (2, 3), 3: (3, 5)}[difficulty]
    users, orders = {}, {}
    for name in rng.sample(PEOPLE, 4):
        uid = f"u{rng.randint(10000, 99999)}"
        ids = []
        for _ in range(rng.randint(lo, hi)):
            oid = f"o{rng.randint(100000, 999999)}"
            status = "cancelled" if difficulty >= 2 and rng.random() < 0.35 else "shipped"
            orders[oid] = {"amount": rng.randint(100, 99999), "status": status}
            ids.append(oid)
        users[uid] = {"name": name, "orders": ids}
    target = rng.choice(sorted(users))
    if all(orders[o]["status"] == "cancelled" for o in users[target]["orders"]):
        orders[users[target]["orders"][0]]["status"] = "shipped"
    return {"users": users, "orders": orders}, target


@register_domain
class LookupChain:
    id = "tools.lookup_chain-v1"
    family = "tools"
    difficulties = (1, 2, 3)
    env_kind = "tool"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        db, uid = _db(rng, difficulty)
        user = db["users"][uid]
        calls = [("find_user", {"name": user["name"]}), ("list_orders", {"user_id": uid})]
        calls += [("get_order", {"order_id": o}) for o in user["orders"]]
        total = sum(db["orders"][o]["amount"] for o in user["orders"]
                    if db["orders"][o]["status"] == "shipped")
        prompt = (f"What is the total amount in cents of {user['name']}'s shipped orders? "
                  "Functions: find_user, list_orders, get_order. Call them as <tool_call>{\"name\": "
                  "..., \"arguments\": {...}}</tool_call>; reply with the number as <answer>...</answer>.")
        return make_task(self.id, difficulty, prompt, public={"user": user["name"]},
                         hidden={"db": db, "calls": [{"name": n, "arguments": a} for n, a in calls],
                                 "answer_value": str(total)})

    def make_env(self, task: Task):
        return tool_env(task, chain_tools(task.hidden["db"]), self._verify, {}, 8, self.id)

    def _verify(self, env, trajectory):
        m = call_score(env, env.task.hidden["calls"], ordered=False)
        return outcome(self.id, m, exact_answer(env, env.task.hidden["answer_value"]), "answer")

    def _turns(self, task: Task) -> list[list[tuple[str, dict[str, Any]]]]:
        c = [(x["name"], x["arguments"]) for x in task.hidden["calls"]]
        return [[c[0]], [c[1]], c[2:]]

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["answer_value"])

    def reference_actions(self, task: Task) -> list[str]:
        return reference_episode(self._turns(task), task.hidden["answer_value"])


    def probes(self, task: Task) -> dict[str, Any]:
        t, ans = self._turns(task), task.hidden["answer_value"]
        db = task.hidden["db"]
        flat = [c for turn in t for c in turn]
        uid = t[1][0][1]["user_id"]
        other = next(u for u in sorted(db["users"]) if u != uid)
        fake = [("get_order", {"order_id": f"o{100000 + i}"}) for i in range(len(t[2]))]
        return {
            "answer_without_calls": format_answer(ans),
            "fabricated_ids": [format_calls(*fake), format_answer(ans)],
            "other_user": [format_calls(("find_user", {"name": db["users"][other]["name"]})),
                           format_calls(("list_orders", {"user_id": other})),
                           format_calls(*[("get_order", {"order_id": o}) for o in db["users"][other]["orders"]]),
                           format_answer(ans)],
            "spam_calls": spam_probe([], flat, ans, n=40),
        }
