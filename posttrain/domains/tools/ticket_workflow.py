"""Issue-tracker workflow: ``tools.ticket_workflow-v1``.

Trains: moving issues through a per-task workflow whose allowed transitions are hidden and
random (``get_workflow()`` returns the graph; ``get_issue(key)`` the current status and
assignee), planning the shortest path from each issue's status to its target, and walking it
one ``transition(key, status)`` at a time — the API rejects a transition the workflow does not
allow — then ``assign(key, user)``. Order matters: a step out of order fails and leaves the
issue where it was. Shortest paths are unique by construction.

Difficulty: issues 1 / 2 / 3 (paths of 2-4 steps).

Reward: validity² × (0.3·calls + 0.7·state·precision²·[all calls made]); ``state_ok`` compares
each issue's status and assignee (and that the history of statuses is the expected path) after
the episode with the expected ones.

Probes (≤ 0.05): the kit's set (:mod:`._kit`). Not floored but capped at the calls part:
a direct (forbidden) jump to each target matches the last expected transition only.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from posttrain.domains.base import register_domain

from ._kit import ApiDomain, chunk, Plan, S, tool

STATUSES = ["open", "triage", "in_progress", "blocked", "review", "qa", "done", "closed"]
USERS = ["ayo", "bea", "cy", "dina", "emre", "fola"]


def _issue(st, key):
    if key not in st["issues"]:
        raise ValueError(f"no issue {key!r}")
    i = st["issues"][key]
    return {"key": key, "status": i["status"], "assignee": i["assignee"]}


def _workflow(st):
    return st["workflow"]


def _transition(st, key, status):
    i = st["issues"][_issue(st, key)["key"]]
    if status not in st["workflow"].get(i["status"], []):
        raise ValueError(f"{i['status']} -> {status} is not allowed")
    i["status"] = status
    i["history"].append(status)
    return {"key": key, "status": status}


def _assign(st, key, user):
    st["issues"][_issue(st, key)["key"]]["assignee"] = user
    return {"key": key, "assignee": user}


def _paths(graph: dict[str, list[str]], src: str) -> dict[str, list[list[str]]]:
    """All shortest paths from ``src`` (BFS keeping every shortest predecessor)."""
    dist, paths = {src: 0}, {src: [[src]]}
    q = deque([src])
    while q:
        u = q.popleft()
        for v in graph[u]:
            if v not in dist:
                dist[v], paths[v] = dist[u] + 1, []
                q.append(v)
            if dist[v] == dist[u] + 1:
                paths[v] += [p + [v] for p in paths[u]]
    return paths


ID = "tools.ticket_workflow-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_workflow", "Allowed transitions: status -> list of next statuses.", {}, _workflow, st),
            tool("get_issue", "Status and assignee of an issue.", {"key": S}, _issue, st),
            tool("transition", "Move an issue to a next status (must be allowed).", {"key": S, "status": S}, _transition, st),
            tool("assign", "Assign an issue to a user.", {"key": S, "user": S}, _assign, st)]


def _graph(rng: random.Random) -> dict[str, list[str]]:
    g = {s: [] for s in STATUSES}
    for i, s in enumerate(STATUSES):  # a backbone so most statuses are reachable
        if i + 1 < len(STATUSES) and rng.random() < 0.8:
            g[s].append(STATUSES[i + 1])
        for t in rng.sample(STATUSES, 2):
            if t != s and t not in g[s] and rng.random() < 0.5:
                g[s].append(t)
    return {s: sorted(v) for s, v in g.items()}


def _plan(rng: random.Random, difficulty: int) -> Plan:
    graph = _graph(rng)
    keys = [f"PRJ-{n}" for n in rng.sample(range(10, 400), difficulty + 1)]
    issues, jobs = {}, []
    for k in keys:
        src = rng.choice(STATUSES)
        issues[k] = {"status": src, "assignee": rng.choice(USERS), "history": [src]}
        if len(jobs) < difficulty:
            unique = [(t, ps[0]) for t, ps in _paths(graph, src).items() if len(ps) == 1 and 3 <= len(ps[0]) <= 5]
            if unique:
                t, path = rng.choice(sorted(unique))
                jobs.append((k, t, path[1:], rng.choice(USERS)))
    if len(jobs) < difficulty:
        return _plan(rng, difficulty)
    turns = [[("get_workflow", {})] + [("get_issue", {"key": k}) for k, *_ in jobs]]
    work = [("transition", {"key": k, "status": s}) for k, _, path, _ in jobs for s in path]
    work += [("assign", {"key": k, "user": u}) for k, _, _, u in jobs]
    turns += chunk(work)
    asks = "; ".join(f"{k} to {t} and assign it to {u}" for k, t, _, u in jobs)
    prompt = (f"Move {asks}. Transitions must follow the workflow, one allowed step at a time, by the "
              "shortest route. Reply ok when finished.")
    return Plan(prompt, {"workflow": graph, "issues": issues}, turns, "ok",
                extra={"jobs": [[k, t, u] for k, t, _, u in jobs]})


DOMAIN = register_domain(ApiDomain(ID, _tools, _plan, description=__doc__, result="state"))
