"""Graph-algorithm domains: shortest paths, maze paths, topological order, minimum spanning trees.
(Connectivity questions live in :mod:`.connectivity`.)

Graphs are written as edge lists over integer vertices. Path/order/cycle answers are
verified structurally (any valid answer counts); numeric answers are exact.

Not covered: negative weights, flows, graphs beyond a few dozen vertices.
"""

from __future__ import annotations

import heapq
import random
import re
from collections import deque

from posttrain.core.types import Score, Task
from posttrain.domains.algorithms._kit import answer_check, int_probes, list_text
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import answer_text, parse_int_list


def connected_graph(rng: random.Random, n: int, extra: int, wmax: int = 20) -> list[list[int]]:
    """Random spanning tree plus ``extra`` edges, weights 1..wmax, no duplicate pairs."""
    edges, seen = [], set()
    for v in range(1, n):
        u = rng.randrange(v)
        edges.append([u, v, rng.randint(1, wmax)])
        seen.add((u, v))
    for _ in range(extra * 3):
        u, v = sorted(rng.sample(range(n), 2))
        if (u, v) not in seen and len(edges) < n - 1 + extra:
            seen.add((u, v))
            edges.append([u, v, rng.randint(1, wmax)])
    rng.shuffle(edges)
    return edges


def dijkstra(n: int, edges: list[list[int]], s: int) -> list[float]:
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    dist = [float("inf")] * n
    dist[s] = 0
    pq = [(0, s)]
    while pq:
        d, u = heapq.heappop(pq)
        if d > dist[u]:
            continue
        for v, w in adj[u]:
            if d + w < dist[v]:
                dist[v] = d + w
                heapq.heappush(pq, (d + w, v))
    return dist


def edge_text(edges: list[list[int]], weighted: bool = True, arrow: str = "-") -> str:
    return ", ".join(f"{e[0]}{arrow}{e[1]}" + (f" (w={e[2]})" if weighted else "") for e in edges)


def _shortest_path(rng: random.Random, difficulty: int) -> Draft:
    """Length of the shortest path between two vertices of a weighted undirected graph.

    Trains: Dijkstra-style relaxation. Exact integer. Not covered: path reconstruction.
    Probes: the fewest-edges path's weight when it differs, the sum of all weights, off-by-one.
    """
    n = 3 + 3 * difficulty
    edges = connected_graph(rng, n, n)
    s, t = rng.sample(range(n), 2)
    dist = int(dijkstra(n, edges, s)[t])
    hop = int(dijkstra(n, [[u, v, 1000 + w] for u, v, w in edges], s)[t]) % 1000
    prompt = (f"Undirected weighted graph with vertices 0..{n - 1}; edges: {edge_text(edges)}.\n"
              f"What is the total weight of the shortest path from {s} to {t}? Answer with one integer.")
    return Draft(prompt, answer=dist, public={"edges": edges},
                 hidden={"fewest_hops_weight": hop})


def _shortest_path_exploits(task: Task) -> dict[str, str]:
    return int_probes(task.hidden["answer"], fewest_hops=task.hidden["fewest_hops_weight"],
                      all_weights=sum(e[2] for e in task.public["edges"]))


register_domain(SingleTurnDomain("algorithms.shortest_path-v1", _shortest_path, answer_check,
                                 _shortest_path_exploits, description=_shortest_path.__doc__))


MOVES = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def maze(rng: random.Random, n: int) -> tuple[list[str], tuple, tuple, str]:
    while True:
        g = [["#" if rng.random() < 0.3 else "." for _ in range(n)] for _ in range(n)]
        s, t = (0, 0), (n - 1, n - 1)
        g[0][0], g[n - 1][n - 1] = "S", "G"
        prev = {s: None}
        q = deque([s])
        while q:
            c = q.popleft()
            for m, (dr, dc) in MOVES.items():
                nr, nc = c[0] + dr, c[1] + dc
                if 0 <= nr < n and 0 <= nc < n and g[nr][nc] != "#" and (nr, nc) not in prev:
                    prev[(nr, nc)] = (c, m)
                    q.append((nr, nc))
        if t in prev:
            path, c = [], t
            while prev[c]:
                c, m = prev[c]
                path.append(m)
            return ["".join(r) for r in g], s, t, "".join(path[::-1])


def _maze_path(rng: random.Random, difficulty: int) -> Draft:
    """Give a shortest path of moves (U/D/L/R) through a grid maze from S to G.

    Verified by walking the moves: leaving the grid or hitting a wall scores 0; reaching G
    scores 1 for a shortest path (BFS) and 0.5 x shortest/length for a longer one.
    Not covered: weighted cells, diagonal moves. Probes: the wall-ignoring staircase RRDD...
    when it crosses a wall, one move short of the goal.
    """
    n = 3 + 2 * difficulty
    grid, _, _, path = maze(rng, n)
    prompt = ("Maze (S start, G goal, # wall, . open):\n" + "\n".join(grid) + "\nGive a shortest "
              "sequence of moves from S to G using U, D, L, R (one letter per move, no spaces), nothing else.")
    return Draft(prompt, answer=path, public={"grid": grid})


def _walk(grid: list[str], moves: str) -> bool:
    n, r, c = len(grid), 0, 0
    for m in moves:
        r, c = r + MOVES[m][0], c + MOVES[m][1]
        if not (0 <= r < n and 0 <= c < n) or grid[r][c] == "#":
            return False
    return grid[r][c] == "G"


def _maze_path_check(task: Task, answer: str) -> Score:
    moves = re.sub(r"[\s,]", "", answer_text(answer) or "").upper()
    ok = bool(moves) and set(moves) <= set(MOVES) and _walk(task.public["grid"], moves)
    opt = len(task.hidden["answer"])
    v = 0.0 if not ok else (1.0 if len(moves) == opt else 0.5 * opt / len(moves))
    return Score(v, components={"path": (v, 1.0)}, verifier_version=task.domain,
                 reason=f"reached G in {len(moves)} moves (best {opt})" if ok else "invalid path")


def _maze_path_exploits(task: Task) -> dict[str, str]:
    n = len(task.public["grid"])
    stair = "RD" * (n - 1)
    out = {"one_short": task.hidden["answer"][:-1]}
    if not _walk(task.public["grid"], stair):
        out["staircase"] = stair
    return out


register_domain(SingleTurnDomain("algorithms.maze_path-v1", _maze_path, _maze_path_check,
                                 _maze_path_exploits, description=_maze_path.__doc__))


def random_dag(rng: random.Random, n: int, p: float) -> tuple[list[int], list[list[int]]]:
    order = rng.sample(range(n), n)
    edges = [[order[i], order[j]] for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    rng.shuffle(edges)
    return order, edges


def _topo_order(rng: random.Random, difficulty: int) -> Draft:
    """Give a topological order of a DAG (any valid order counts).

    Verified per edge; a permutation of the vertices violating some edges scores 0.5 x the
    fraction of edges respected. Not covered: cycle reporting (see cycle_detect).
    Probes: the reversed order, a vertex missing.
    """
    n = 3 + 3 * difficulty
    while True:
        order, edges = random_dag(rng, n, 0.35)
        if edges:
            break
    prompt = (f"Directed acyclic graph on vertices 0..{n - 1}; edge u->v means u must come before v: "
              f"{edge_text(edges, False, '->')}.\nGive a topological order of all vertices, "
              "comma-separated, nothing else.")
    return Draft(prompt, public={"n": n, "edges": edges}, hidden={"order": order})


def _topo_order_reference(task: Task) -> str:
    return list_text(task.hidden["order"])


def _topo_order_check(task: Task, answer: str) -> Score:
    got, n, edges = parse_int_list(answer), task.public["n"], task.public["edges"]
    if got is None or sorted(got) != list(range(n)):
        return Score(0.0, components={"edges": (0.0, 1.0)}, reason="not a permutation", verifier_version=task.domain)
    pos = {v: i for i, v in enumerate(got)}
    ok = sum(pos[u] < pos[v] for u, v in edges)
    v = 1.0 if ok == len(edges) else 0.5 * ok / len(edges)
    return Score(v, components={"edges": (v, 1.0)}, passed=ok, total=len(edges), verifier_version=task.domain)


def _topo_order_exploits(task: Task) -> dict[str, str]:
    o = task.hidden["order"]
    return {"reversed": list_text(o[::-1]), "missing": list_text(o[:-1])}


register_domain(SingleTurnDomain("algorithms.topo_order-v1", _topo_order, _topo_order_check,
                                 _topo_order_exploits, reference=_topo_order_reference,
                                 description=_topo_order.__doc__))


def mst_weight(n: int, edges: list[list[int]]) -> int:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    total = 0
    for u, v, w in sorted(edges, key=lambda e: e[2]):
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
            total += w
    return total


def _mst_weight(rng: random.Random, difficulty: int) -> Draft:
    """Total weight of a minimum spanning tree of a connected weighted graph.

    Trains: Kruskal/Prim. Exact integer. Not covered: listing the tree's edges.
    Probes: the sum of all edge weights, the n-1 lightest edges when they do not form a tree.
    """
    n = 3 + 2 * difficulty
    edges = connected_graph(rng, n, n + difficulty)
    prompt = (f"Undirected weighted graph on vertices 0..{n - 1}; edges: {edge_text(edges)}.\n"
              "What is the total weight of a minimum spanning tree? Answer with one integer.")
    return Draft(prompt, answer=mst_weight(n, edges),
                 public={"edges": edges, "n": n})


def _mst_weight_exploits(task: Task) -> dict[str, str]:
    ws = sorted(e[2] for e in task.public["edges"])
    return int_probes(task.hidden["answer"], all_edges=sum(ws), lightest=sum(ws[: task.public["n"] - 1]))


register_domain(SingleTurnDomain("algorithms.mst_weight-v1", _mst_weight, answer_check, _mst_weight_exploits,
                                 description=_mst_weight.__doc__))
