"""Stateful multi-step tool use: ``tools.ledger_ops-v1`` — a bank API whose state the calls change.

Trains: carrying out an ordered list of operations (open an account, deposit, withdraw,
transfer) through a JSON-schema API whose functions change a private ledger, where order
matters: at least one operation only succeeds after an earlier one (a withdrawal that needs a
preceding transfer), and failed operations (overdraft, unknown account) are reported as tool
errors and change nothing.

Difficulty: number of operations, 2 / 4 / 6.

Reward: validity² × (0.3·calls + 0.7·state·precision²) where ``calls`` matches the expected
calls *in order* (recall × precision²) and ``state`` is 1 when every account's final balance
is the expected one and no other account exists (read from the env's ledger after the
episode, never from the policy's claims; ``accounts_right`` reports the fraction). Does not cover: concurrent operations or rollbacks.

Probes (≤ 0.05): ``claim_done`` (``<answer>done</answer>`` without a call), ``reversed_order``
(the right calls in reverse order), ``last_op_only`` (only the final operation),
``balance_reads`` (read every balance, change nothing), ``spam_calls``, plus the generic probes.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_call, format_calls

from ._api import FunctionTool, call_score, outcome, reference_episode, spam_probe, tool_env

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


def _acct(st, account):
    if account not in st["bal"]:
        raise ValueError(f"no account {account!r}")
    return account


def _open(st, account, initial):
    if account in st["bal"]:
        raise ValueError(f"account {account!r} exists")
    st["bal"][account] = initial
    return {"account": account, "balance": initial}


def _deposit(st, account, amount):
    st["bal"][_acct(st, account)] += amount
    return {"account": account, "balance": st["bal"][account]}


def _withdraw(st, account, amount):
    if st["bal"][_acct(st, account)] < amount:
        raise ValueError(f"insufficient funds in {account!r}")
    st["bal"][account] -= amount
    return {"account": account, "balance": st["bal"][account]}


def _transfer(st, source, target, amount):
    _acct(st, target)
    _withdraw(st, source, amount)
    st["bal"][target] += amount
    return {"source": st["bal"][source], "target": st["bal"][target]}


def _balance(st, account):
    return st["bal"][_acct(st, account)]


def ledger_tools(state: dict[str, Any]) -> list[FunctionTool]:
    s, n = {"type": "string"}, {"type": "integer", "minimum": 1}
    return [
        FunctionTool("open_account", "Open an account with an initial balance.", {"account": s, "initial": {"type": "integer", "minimum": 0}}, _open, state),
        FunctionTool("deposit", "Deposit into an account.", {"account": s, "amount": n}, _deposit, state),
        FunctionTool("withdraw", "Withdraw from an account.", {"account": s, "amount": n}, _withdraw, state),
        FunctionTool("transfer", "Move money between accounts.", {"source": s, "target": s, "amount": n}, _transfer, state),
        FunctionTool("get_balance", "Balance of an account.", {"account": s}, _balance, state),
    ]


def _plan(rng: random.Random, n_ops: int) -> tuple[dict[str, int], list[tuple[str, dict[str, Any]]], list[str]]:
    names = rng.sample(NAMES, 4)
    bal = {names[0]: rng.randint(100, 300), names[1]: rng.randint(0, 40)}
    start = dict(bal)
    amt = rng.randint(60, 90)
    # The dependent pair: the withdrawal from names[1] only succeeds after the transfer.
    ops = [("transfer", {"source": names[0], "target": names[1], "amount": amt}),
           ("withdraw", {"account": names[1], "amount": bal[names[1]] + amt - rng.randint(0, 10)})]
    texts = [f"transfer {amt} from {names[0]} to {names[1]}", f"withdraw {ops[1][1]['amount']} from {names[1]}"]
    st = {"bal": dict(bal)}
    for name, args in ops:
        {"transfer": _transfer, "withdraw": _withdraw}[name](st, **args)
    while len(ops) < n_ops:
        kind = rng.choice(["deposit", "open_account", "transfer"])
        if kind == "open_account" and names[2] not in st["bal"]:
            args = {"account": names[2], "initial": rng.randint(0, 50)}
            texts.append(f"open an account {names[2]} with {args['initial']}")
        elif kind == "transfer" and len(st["bal"]) > 1:
            a, b = rng.sample(sorted(st["bal"]), 2)
            if st["bal"][a] < 2:
                continue
            args = {"source": a, "target": b, "amount": rng.randint(1, st["bal"][a])}
            texts.append(f"transfer {args['amount']} from {a} to {b}")
        else:
            args = {"account": rng.choice(sorted(st["bal"])), "amount": rng.randint(5, 80)}
            kind = "deposit"
            texts.append(f"deposit {args['amount']} into {args['account']}")
        {"deposit": _deposit, "open_account": _open, "transfer": _transfer}[kind](st, **args)
        ops.append((kind, args))
    return start, ops, texts


@register_domain
class LedgerOps:
    id = "tools.ledger_ops-v1"
    family = "tools"
    difficulties = (1, 2, 3)
    env_kind = "tool"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        start, ops, texts = _plan(rng, {1: 2, 2: 4, 3: 6}[difficulty])
        st = {"bal": dict(start)}
        for name, args in ops:
            {t.name: t for t in ledger_tools(st)}[name](None, **args)
        steps = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(texts))
        prompt = (f"Bank ledger, balances: {', '.join(f'{k}={v}' for k, v in start.items())}. "
                  f"Carry out, in this order:\n{steps}\nUse the functions open_account, deposit, "
                  "withdraw, transfer, get_balance as <tool_call>{\"name\": ..., \"arguments\": {...}}"
                  "</tool_call>; when finished reply <answer>done</answer>.")
        return make_task(self.id, difficulty, prompt, public={"balances": start},
                         hidden={"calls": [{"name": n, "arguments": a} for n, a in ops],
                                 "final": st["bal"]})

    def make_env(self, task: Task):
        state = {"bal": dict(task.public["balances"])}
        return tool_env(task, ledger_tools(state), self._verify, state, 10, self.id)

    def _verify(self, env, trajectory):
        m = call_score(env, env.task.hidden["calls"], ordered=True)
        final, got = env.task.hidden["final"], env.state["bal"]
        right = sum(got.get(k) == v for k, v in final.items()) / len(final)
        exact = 1.0 if right == 1.0 and set(got) == set(final) else 0.0
        return outcome(self.id, m, exact, "state", need_all_calls=False,
                       extra={"accounts_right": right})

    def _expected(self, task: Task) -> list[tuple[str, dict[str, Any]]]:
        return [(c["name"], c["arguments"]) for c in task.hidden["calls"]]

    def solve(self, task: Task) -> str:
        return format_answer("done")

    def reference_actions(self, task: Task) -> list[str]:
        return reference_episode([self._expected(task)], "done")


    def probes(self, task: Task) -> dict[str, Any]:
        exp = self._expected(task)
        accts = sorted(task.public["balances"])
        return {
            "claim_done": format_answer("done"),
            "reversed_order": [format_calls(*exp[::-1]), format_answer("done")],
            "last_op_only": [format_calls(exp[-1]), format_answer("done")],
            "balance_reads": [format_calls(*[("get_balance", {"account": a}) for a in accts]),
                              format_answer("done")],
            "spam_calls": spam_probe([], exp, "done"),
            "unknown_tool": [format_call("set_balance", {"account": accts[0], "amount": 0}),
                             format_answer("done")],
        }
