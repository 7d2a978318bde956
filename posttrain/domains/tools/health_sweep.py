"""Parallel independent calls, order-free: ``tools.health_sweep-v1``.

Trains: fanning out one status check per (service, region) pair in a *single* turn with
``check_service(service, region)`` (hidden status and latency), then reporting the set of
unhealthy pairs — status not ``ok``, and (level 3) latency above a threshold — as a
comma-separated list in any order. The calls are matched as a set (order-free).

Difficulty: pairs 2 / 4 / 6-8 (level 3 adds the latency rule).

Reward: validity² × (0.3·calls + 0.7·answer·precision²·[all calls made]) with the answer
counting half unless every call was issued in one turn (component ``parallel``); the answer
is compared as a set of ``service@region`` items.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``report_all_unchecked`` (every pair
reported unhealthy without a call). Partial credit, not a probe: checking every pair then
reporting them all keeps the calls part (0.3): every task has a healthy pair and a sick one.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain

from ._api import call_score, outcome
from ._kit import ApiDomain, Plan, S, set_score, tool

SERVICES = ["auth", "billing", "search", "media", "chat", "maps", "mail", "feeds"]
REGIONS = ["eu-west", "us-east", "ap-south", "sa-east"]


def _check(st, service, region):
    key = f"{service}@{region}"
    if key not in st["health"]:
        raise ValueError(f"{service} is not deployed in {region}")
    return st["health"][key]


ID = "tools.health_sweep-v1"


def _tools(st: dict[str, Any]):
    return [tool("check_service", "Status (ok/degraded/down) and p95 latency of a service in a region.",
                 {"service": S, "region": S}, _check, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    health = {f"{s}@{r}": {"status": rng.choice(["ok", "ok", "ok", "degraded", "down"]),
                           "latency_ms": rng.randint(20, 900)} for s in SERVICES for r in REGIONS}
    n = {1: 2, 2: 4, 3: rng.randint(6, 8)}[difficulty]
    pairs = rng.sample(sorted(health), n)
    limit = rng.choice([300, 400, 500]) if difficulty == 3 else None
    bad = [p for p in pairs if health[p]["status"] != "ok" or (limit and health[p]["latency_ms"] > limit)]
    if not bad or len(bad) == len(pairs):
        return _plan(rng, difficulty)
    rule = "status is not ok" + (f" or latency_ms is above {limit}" if limit else "")
    prompt = (f"Check these deployments in ONE turn (all calls together): {', '.join(pairs)}. "
              f"A deployment is unhealthy when its {rule}. Reply with the unhealthy ones as a "
              "comma-separated list of service@region.")
    turns = [[("check_service", dict(zip(("service", "region"), p.split("@")))) for p in pairs]]
    return Plan(prompt, {"health": health}, turns, ", ".join(sorted(bad)), public={"pairs": pairs},
                extra={"pairs": pairs})


def _verify(env, trajectory):
    m = call_score(env, env.task.hidden["calls"], ordered=False)
    ans = set_score(env.answer, env.task.hidden["answer_value"])
    together = 1.0 if len({c.turn for c in env.calls if c.valid}) == 1 else 0.0
    return outcome(ID, m, ans * (0.5 + 0.5 * together), "result",
                   extra={"answer_ok": ans, "parallel": together})


def _extra_probes(task):
    from posttrain.envs.tool_env import format_answer

    return {"report_all_unchecked": format_answer(", ".join(task.hidden["pairs"]))}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, verify=_verify))
