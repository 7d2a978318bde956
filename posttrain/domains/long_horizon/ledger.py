"""A long stateful session: ``long_horizon.ledger_session-v1`` — many ledger operations in stages.

Trains: keeping track of a long sequence of dependent operations over many turns (6, 12 or
20 operations in 2, 3 or 4 stages) through the bank API of :mod:`posttrain.domains.tools.stateful`
(open_account, deposit, withdraw, transfer, get_balance), where a withdrawal may only
succeed after an earlier transfer.

Process rewards (checkpoints): after a stage's operations the ledger equals the expected
intermediate ledger — 1/stages the first time each stage's state is reached, in order.

Outcome: as ``tools.ledger_ops``: validity² × (0.3·calls + 0.7·state·precision²) with calls
matched in order and ``state`` = the final ledger exactly as expected.

Probes (≤ 0.05): ``claim_done``, ``reversed_order``, ``invalid_calls`` (the first stage with
schema-violating arguments), ``spam_calls``,
plus the generic probes.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain
from posttrain.domains.tools._api import call_score, outcome, spam_probe
from posttrain.domains.tools.stateful import _plan, ledger_tools
from posttrain.envs.tool_env import ToolEnv, format_calls

from ._kit import LongDomain, checkpoint_reward, done


def _replay(start: dict[str, int], ops: list[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    st = {"bal": dict(start)}
    tools = {t.name: t for t in ledger_tools(st)}
    for name, args in ops:
        tools[name](None, **args)
    return st["bal"]


DOMAIN_ID = "long_horizon.ledger_session-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    n_stages = difficulty + 1
    start, ops, texts = _plan(rng, {1: 6, 2: 12, 3: 20}[difficulty])
    per = len(ops) // n_stages
    cuts = [per * (k + 1) for k in range(n_stages - 1)] + [len(ops)]
    states = [_replay(start, ops[:c]) for c in cuts]
    parts, lo = [], 0
    for k, c in enumerate(cuts):
        parts.append(f"Stage {k + 1}:\n" + "\n".join(f"- {t}" for t in texts[lo:c]))
        lo = c
    prompt = (f"Bank ledger, balances: {', '.join(f'{k}={v}' for k, v in start.items())}. "
              "Carry out these stages in order, each operation with one function call:\n"
              + "\n".join(parts) + "\nFunctions: open_account, deposit, withdraw, transfer, "
              "get_balance, called as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>; "
              "reply <answer>done</answer> at the end.")
    return make_task(DOMAIN_ID, difficulty, prompt, public={"balances": start},
                     hidden={"calls": [{"name": n, "arguments": a} for n, a in ops],
                             "cuts": cuts, "states": states, "final": states[-1]})


def _env(task: Task) -> ToolEnv:
    state = {"bal": dict(task.public["balances"])}
    states = task.hidden["states"]
    checks = [(f"stage{k + 1}", lambda env, k=k: all(f"stage{j + 1}" in env.checkpoints for j in range(k))
               and env.state["bal"] == states[k]) for k in range(len(states))]
    return ToolEnv(task, ledger_tools(state), None, _verify, max_turns=30,
                   process_reward_fn=checkpoint_reward(checks), state=state,
                   verifier_version=task.domain)


def _verify(env: ToolEnv, trajectory: Any):
    m = call_score(env, env.task.hidden["calls"], ordered=True)
    final, got = env.task.hidden["final"], env.state["bal"]
    exact = 1.0 if got == final else 0.0
    return outcome(env.task.domain, m, exact, "state", need_all_calls=False,
                   extra={"checkpoints": sum(env.checkpoints.values())})


def _ops(task: Task) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for c in task.hidden["calls"]]


def _reference(task: Task) -> list[str]:
    ops, lo, acts = _ops(task), 0, []
    for c in task.hidden["cuts"]:  # one turn per stage (at most 8 calls per turn)
        stage = ops[lo:c]
        acts += [format_calls(*stage[i:i + 8]) for i in range(0, len(stage), 8)]
        lo = c
    return acts + [done()]


def _probes(task: Task) -> dict:
    ops = _ops(task)
    first = ops[:task.hidden["cuts"][0]]
    rev = ops[::-1]
    return {
        "claim_done": done(),
        "reversed_order": [format_calls(*rev[i:i + 8]) for i in range(0, len(rev), 8)] + [done()],
        "invalid_calls": [format_calls(*[(n, {k: [v] for k, v in a.items()}) for n, a in first]), done()],
        "spam_calls": spam_probe([], ops, "done", n=max(24, 4 * len(ops)))[:29] + [done()],
    }


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__, env_kind="tool"))
