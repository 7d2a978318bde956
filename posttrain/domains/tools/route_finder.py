"""Maps / routing by exploration: ``tools.route_finder-v1``.

Trains: finding the fastest route in a road graph that is only visible one place at a time:
``get_roads(place)`` lists the roads out of a place with their minutes. The policy explores
(in waves of parallel calls), then replies with the route and its total time as
``A > C > B; 37``. Shortest routes are unique by construction and take at least two roads.

Difficulty: places 6 / 9 / 12.

Reward (this domain's own call matching, not exact expected calls, because any exploration
order that finds the route is valid): ``recall`` = fraction of the places on the fastest route
(except the goal) whose roads were fetched — the evidence the answer needs; ``precision`` =
distinct existing places fetched / valid calls (repeats and unknown places are waste; exploring
the whole map is not); then the family's rule validity² × (0.3·recall·precision² +
0.7·answer·precision²·[recall = 1]). ``answer`` is the mean of ``route_ok`` (the place
sequence) and ``minutes_ok``.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``goal_repeated`` (the goal's roads
fetched 16 times, then the right answer).
"""

from __future__ import annotations

import heapq
import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._api import CallMatch, outcome
from ._kit import ApiDomain, chunk, Plan, S, tool

PLACES = ["Amber", "Birch", "Cedar", "Dune", "Elm", "Fjord", "Grove", "Harbor", "Iris", "Juniper",
          "Kestrel", "Lark", "Maple", "Nettle", "Orchid", "Pine"]


def _roads(st, place):
    if place not in st["graph"]:
        raise ValueError(f"unknown place {place!r}")
    return [{"to": v, "minutes": m} for v, m in sorted(st["graph"][place].items())]


def _dijkstra(graph: dict[str, dict[str, int]], src: str) -> tuple[dict[str, int], dict[str, int]]:
    """Distances and the number of shortest paths to each place."""
    dist, count, heap = {src: 0}, {src: 1}, [(0, src)]
    done: set[str] = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, w in graph[u].items():
            nd = d + w
            if nd < dist.get(v, 10**9):
                dist[v], count[v] = nd, count[u]
                heapq.heappush(heap, (nd, v))
            elif nd == dist[v]:
                count[v] += count[u]
    return dist, count


def _path(graph: dict[str, dict[str, int]], dist: dict[str, int], src: str, dst: str) -> list[str]:
    path = [dst]
    while path[-1] != src:
        u = path[-1]
        path.append(next(v for v, w in sorted(graph[u].items()) if dist.get(v, -1) + w == dist[u]))
    return path[::-1]


ID = "tools.route_finder-v1"


def _tools(st: dict[str, Any]):
    return [tool("get_roads", "Roads leaving a place: destination and minutes.", {"place": S}, _roads, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    n = {1: 6, 2: 9, 3: 12}[difficulty]
    names = rng.sample(PLACES, n)
    graph: dict[str, dict[str, int]] = {p: {} for p in names}
    for i in range(1, n):  # a random spanning tree, then extra roads
        u, v = names[i], names[rng.randrange(i)]
        graph[u][v] = graph[v][u] = rng.randint(3, 40)
    for _ in range(n // 2 + 1):
        u, v = rng.sample(names, 2)
        graph[u][v] = graph[v][u] = rng.randint(3, 40)
    a, b = rng.sample(names, 2)
    if b in graph[a]:
        return _plan(rng, difficulty)
    dist, count = _dijkstra(graph, a)
    if count[b] != 1:
        return _plan(rng, difficulty)
    path = _path(graph, dist, a, b)
    waves, seen, frontier = [], {a}, [a]
    while frontier:  # breadth-first waves, as a careful explorer would fetch them
        waves += chunk(sorted(frontier))
        nxt = sorted({v for u in frontier for v in graph[u]} - seen)
        seen |= set(nxt)
        frontier = nxt
    turns = [[("get_roads", {"place": p}) for p in w] for w in waves]
    answer = f"{' > '.join(path)}; {dist[b]}"
    prompt = (f"Find the fastest route from {a} to {b}. Roads are two-way. Reply as "
              f"'{a} > ... > {b}; <total minutes>'.")
    return Plan(prompt, {"graph": graph}, turns, answer, public={"from": a, "to": b},
                extra={"path": path, "minutes": dist[b]})


def _verify(env, trajectory):
    task = env.task
    attempted = len(env.calls)
    valid = [c for c in env.calls if c.valid]
    validity = len(valid) / attempted if attempted else 1.0
    graph = task.hidden["world"]["graph"]
    fetched = {c.arguments.get("place") for c in valid} & set(graph)
    need = task.hidden["path"][:-1]
    recall = sum(p in fetched for p in need) / len(need)
    precision = len(fetched) / len(valid) if valid else 0.0
    route_ok, minutes_ok = _parse(env.answer, task)
    return outcome(ID, CallMatch(recall, precision, validity), (route_ok + minutes_ok) / 2, "result",
                   extra={"route_ok": route_ok, "minutes_ok": minutes_ok})


def _parse(answer: str | None, task) -> tuple[float, float]:
    text = (answer or "").strip()
    if ";" not in text:
        return 0.0, 0.0
    route, _, mins = text.rpartition(";")
    places = [p.strip().lower() for p in route.split(">")]
    route_ok = 1.0 if places == [p.lower() for p in task.hidden["path"]] else 0.0
    try:
        minutes_ok = 1.0 if int(mins.strip()) == task.hidden["minutes"] else 0.0
    except ValueError:
        minutes_ok = 0.0
    return route_ok, minutes_ok


def _extra_probes(task):
    goal = task.hidden["path"][-1]
    return {"goal_repeated": [format_calls(*[("get_roads", {"place": goal})] * 8)] * 2
            + [format_answer(task.hidden["answer_value"])]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, verify=_verify))
