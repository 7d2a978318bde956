"""Graph-algorithm domains: shortest paths, maze paths, topological order, MST, components,
cycles, bipartiteness, union-find.

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
from posttrain.domains._helpers import make_task
from posttrain.domains.algorithms._common import int_probes, int_score, list_text
from posttrain.domains.base import register_domain
from posttrain.verifiers.structured import (answer_text, baseline_corrected_score, parse_int_list,
                                            parse_word_list)


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


@register_domain
class ShortestPath:
    """Length of the shortest path between two vertices of a weighted undirected graph.

    Trains: Dijkstra-style relaxation. Exact integer. Not covered: path reconstruction.
    Probes: the fewest-edges path's weight when it differs, the sum of all weights, off-by-one.
    """

    id = "algorithms.shortest_path-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 3 * difficulty
        edges = connected_graph(rng, n, n)
        s, t = rng.sample(range(n), 2)
        dist = int(dijkstra(n, edges, s)[t])
        hop = int(dijkstra(n, [[u, v, 1000 + w] for u, v, w in edges], s)[t]) % 1000
        prompt = (f"Undirected weighted graph with vertices 0..{n - 1}; edges: {edge_text(edges)}.\n"
                  f"What is the total weight of the shortest path from {s} to {t}? Answer with one integer.")
        return make_task(self.id, difficulty, prompt, answer=dist, public={"edges": edges},
                         hidden={"fewest_hops_weight": hop})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return int_score(self.id, task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return int_probes(task.hidden["answer"], fewest_hops=task.hidden["fewest_hops_weight"],
                          all_weights=sum(e[2] for e in task.public["edges"]))


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


@register_domain
class MazePath:
    """Give a shortest path of moves (U/D/L/R) through a grid maze from S to G.

    Verified by walking the moves: leaving the grid or hitting a wall scores 0; reaching G
    scores 1 for a shortest path (BFS) and 0.5 x shortest/length for a longer one.
    Not covered: weighted cells, diagonal moves. Probes: the wall-ignoring staircase RRDD...
    when it crosses a wall, one move short of the goal.
    """

    id = "algorithms.maze_path-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 2 * difficulty
        grid, _, _, path = maze(rng, n)
        prompt = ("Maze (S start, G goal, # wall, . open):\n" + "\n".join(grid) + "\nGive a shortest "
                  "sequence of moves from S to G using U, D, L, R (one letter per move, no spaces), nothing else.")
        return make_task(self.id, difficulty, prompt, answer=path, public={"grid": grid})

    def walk(self, grid: list[str], moves: str) -> bool:
        n, r, c = len(grid), 0, 0
        for m in moves:
            r, c = r + MOVES[m][0], c + MOVES[m][1]
            if not (0 <= r < n and 0 <= c < n) or grid[r][c] == "#":
                return False
        return grid[r][c] == "G"

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        moves = re.sub(r"[\s,]", "", answer_text(answer) or "").upper()
        ok = bool(moves) and set(moves) <= set(MOVES) and self.walk(task.public["grid"], moves)
        opt = len(task.hidden["answer"])
        v = 0.0 if not ok else (1.0 if len(moves) == opt else 0.5 * opt / len(moves))
        return Score(v, components={"path": (v, 1.0)}, verifier_version=self.id,
                     reason=f"reached G in {len(moves)} moves (best {opt})" if ok else "invalid path")

    def probes(self, task: Task) -> dict[str, str]:
        n = len(task.public["grid"])
        stair = "RD" * (n - 1)
        out = {"one_short": task.hidden["answer"][:-1]}
        if not self.walk(task.public["grid"], stair):
            out["staircase"] = stair
        return out


def random_dag(rng: random.Random, n: int, p: float) -> tuple[list[int], list[list[int]]]:
    order = rng.sample(range(n), n)
    edges = [[order[i], order[j]] for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    rng.shuffle(edges)
    return order, edges


@register_domain
class TopoOrder:
    """Give a topological order of a DAG (any valid order counts).

    Verified per edge; a permutation of the vertices violating some edges scores 0.5 x the
    fraction of edges respected. Not covered: cycle reporting (see cycle_detect).
    Probes: the reversed order, a vertex missing.
    """

    id = "algorithms.topo_order-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 3 * difficulty
        while True:
            order, edges = random_dag(rng, n, 0.35)
            if edges:
                break
        prompt = (f"Directed acyclic graph on vertices 0..{n - 1}; edge u->v means u must come before v: "
                  f"{edge_text(edges, False, '->')}.\nGive a topological order of all vertices, "
                  "comma-separated, nothing else.")
        return make_task(self.id, difficulty, prompt, public={"n": n, "edges": edges}, hidden={"order": order})

    def solve(self, task: Task) -> str:
        return list_text(task.hidden["order"])

    def score(self, task: Task, answer: str) -> Score:
        got, n, edges = parse_int_list(answer), task.public["n"], task.public["edges"]
        if got is None or sorted(got) != list(range(n)):
            return Score(0.0, components={"edges": (0.0, 1.0)}, reason="not a permutation", verifier_version=self.id)
        pos = {v: i for i, v in enumerate(got)}
        ok = sum(pos[u] < pos[v] for u, v in edges)
        v = 1.0 if ok == len(edges) else 0.5 * ok / len(edges)
        return Score(v, components={"edges": (v, 1.0)}, passed=ok, total=len(edges), verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        o = task.hidden["order"]
        return {"reversed": list_text(o[::-1]), "missing": list_text(o[:-1])}


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


@register_domain
class MSTWeight:
    """Total weight of a minimum spanning tree of a connected weighted graph.

    Trains: Kruskal/Prim. Exact integer. Not covered: listing the tree's edges.
    Probes: the sum of all edge weights, the n-1 lightest edges when they do not form a tree.
    """

    id = "algorithms.mst_weight-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 2 * difficulty
        edges = connected_graph(rng, n, n + difficulty)
        prompt = (f"Undirected weighted graph on vertices 0..{n - 1}; edges: {edge_text(edges)}.\n"
                  "What is the total weight of a minimum spanning tree? Answer with one integer.")
        return make_task(self.id, difficulty, prompt, answer=mst_weight(n, edges),
                         public={"edges": edges, "n": n})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return int_score(self.id, task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        ws = sorted(e[2] for e in task.public["edges"])
        return int_probes(task.hidden["answer"], all_edges=sum(ws), lightest=sum(ws[: task.public["n"] - 1]))


def components(n: int, edges: list[list[int]]) -> list[list[int]]:
    adj: dict[int, list[int]] = {v: [] for v in range(n)}
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    seen, comps = set(), []
    for s in range(n):
        if s in seen:
            continue
        comp, stack = [], [s]
        seen.add(s)
        while stack:
            u = stack.pop()
            comp.append(u)
            for w in adj[u]:
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        comps.append(sorted(comp))
    return comps


@register_domain
class Components:
    """Number of connected components of an undirected graph.

    Trains: graph traversal / union-find. Exact integer. Not covered: strongly connected
    components. Probes: the vertex count, 1, off-by-one.
    """

    id = "algorithms.components-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 4 + 4 * difficulty
        edges = [sorted(rng.sample(range(n), 2)) for _ in range(int(n * 0.7))]
        edges = [list(e) for e in sorted({tuple(e) for e in edges})]
        rng.shuffle(edges)
        prompt = (f"Undirected graph on vertices 0..{n - 1}; edges: {edge_text(edges, False)}.\n"
                  "How many connected components does it have (isolated vertices count)? Answer with one integer.")
        return make_task(self.id, difficulty, prompt, answer=len(components(n, edges)), public={"n": n})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return int_score(self.id, task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return int_probes(task.hidden["answer"], vertices=task.public["n"], one=1)


@register_domain
class CycleDetect:
    """Find a directed cycle, or say there is none.

    Verified: a cycle answer must list distinct vertices v1 ... vk with edges v1->v2 ...
    vk->v1 in the graph (any cycle counts); "none" is right only for an acyclic graph.
    Not covered: shortest cycles. Probes: "none" for a cyclic graph, a single edge as a cycle.
    """

    id = "algorithms.cycle_detect-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 2 * difficulty
        order, edges = random_dag(rng, n, 0.3)
        while not edges:
            order, edges = random_dag(rng, n, 0.3)
        cyclic = rng.random() < 0.5
        if cyclic:
            i, j = sorted(rng.sample(range(n), 2))
            chain = order[i:j + 1]
            have = {tuple(e) for e in edges}
            for a, b in zip(chain, chain[1:]):
                if (a, b) not in have:
                    edges.append([a, b])
            edges.append([chain[-1], chain[0]])
            rng.shuffle(edges)
        prompt = (f"Directed graph on vertices 0..{n - 1}; edges: {edge_text(edges, False, '->')}.\n"
                  "If it has a directed cycle, answer the vertices of one cycle in order, comma-separated "
                  "(e.g. 2, 5, 3 meaning 2->5->3->2). If it has none, answer exactly: none.")
        return make_task(self.id, difficulty, prompt, public={"n": n, "edges": edges}, hidden={"cyclic": cyclic})

    def find_cycle(self, n: int, edges: list[list[int]]) -> list[int] | None:
        adj: dict[int, list[int]] = {v: [] for v in range(n)}
        for u, v in edges:
            adj[u].append(v)
        color, stack_path = [0] * n, []

        def dfs(u: int) -> list[int] | None:
            color[u] = 1
            stack_path.append(u)
            for w in adj[u]:
                if color[w] == 1:
                    return stack_path[stack_path.index(w):]
                if color[w] == 0 and (c := dfs(w)):
                    return c
            color[u] = 2
            stack_path.pop()
            return None
        for s in range(n):
            if color[s] == 0 and (c := dfs(s)):
                return c
        return None

    def solve(self, task: Task) -> str:
        c = self.find_cycle(task.public["n"], task.public["edges"])
        return "none" if c is None else list_text(c)

    def score(self, task: Task, answer: str) -> Score:
        text = (answer_text(answer) or "").strip().lower()
        edges = {tuple(e) for e in task.public["edges"]}
        if not task.hidden["cyclic"]:
            ok = text == "none"
        else:
            c = parse_int_list(answer)
            ok = bool(c) and len(set(c)) == len(c) and all(
                (c[i], c[(i + 1) % len(c)]) in edges for i in range(len(c)))
        v = 1.0 if ok else 0.0
        return Score(v, components={"cycle": (v, 1.0)}, verifier_version=self.id,
                     reason="correct" if ok else "wrong or invalid cycle")

    def probes(self, task: Task) -> dict[str, str]:
        e = task.public["edges"][0]
        return {"none": "none"} if task.hidden["cyclic"] else {"one_edge": list_text(e)}


@register_domain
class Bipartite:
    """Split a graph's vertices into two sides with every edge crossing, or say it is impossible.

    Verified: the answer lists one side (the rest is the other side); "no" is right only
    for a non-bipartite graph. Not covered: odd-cycle certificates. Probes: "no" for a
    bipartite graph, every vertex on one side.
    """

    id = "algorithms.bipartite-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 3 + 2 * difficulty
        side = [rng.randint(0, 1) for _ in range(n)]
        edges = [[u, v] for u in range(n) for v in range(u + 1, n) if side[u] != side[v] and rng.random() < 0.5]
        if not edges:
            side[1] = 1 - side[0]
            edges = [[0, 1]]
        bip = rng.random() < 0.5
        if not bip:
            u, v = rng.choice(edges)
            w = next(x for x in range(n) if x not in (u, v))
            edges += [e for e in ([min(u, w), max(u, w)], [min(v, w), max(v, w)]) if e not in edges]
        rng.shuffle(edges)
        prompt = (f"Undirected graph on vertices 0..{n - 1}; edges: {edge_text(edges, False)}.\nIf the vertices "
                  "can be split into two groups so that every edge joins the two groups, answer the vertices of "
                  "the group containing vertex 0, comma-separated. Otherwise answer exactly: no.")
        return make_task(self.id, difficulty, prompt, public={"n": n, "edges": edges},
                         hidden={"bipartite": bip})

    def two_colour(self, n: int, edges: list[list[int]]) -> list[int] | None:
        col = [-1] * n
        adj: dict[int, list[int]] = {v: [] for v in range(n)}
        for u, v in edges:
            adj[u].append(v)
            adj[v].append(u)
        for s in range(n):
            if col[s] >= 0:
                continue
            col[s] = 0
            q = deque([s])
            while q:
                u = q.popleft()
                for w in adj[u]:
                    if col[w] < 0:
                        col[w] = 1 - col[u]
                        q.append(w)
                    elif col[w] == col[u]:
                        return None
        return col

    def solve(self, task: Task) -> str:
        col = self.two_colour(task.public["n"], task.public["edges"])
        return "no" if col is None else list_text([v for v in range(len(col)) if col[v] == col[0]])

    def score(self, task: Task, answer: str) -> Score:
        text = (answer_text(answer) or "").strip().lower()
        bip = self.two_colour(task.public["n"], task.public["edges"]) is not None
        if not bip:
            ok = text == "no"
        else:
            group = parse_int_list(answer)
            ok = group is not None and 0 in group and len(set(group)) == len(group) and all(
                0 <= g < task.public["n"] for g in group) and all(
                (u in group) != (v in group) for u, v in task.public["edges"])
        v = 1.0 if ok else 0.0
        return Score(v, components={"partition": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        if self.two_colour(task.public["n"], task.public["edges"]) is None:
            return {"all_one_side": list_text(range(task.public["n"]))}
        return {"no": "no", "all_one_side": list_text(range(task.public["n"]))}


@register_domain
class UnionFind:
    """Answer connectivity queries interleaved with union operations.

    Trains: incremental connectivity (union-find). Partial credit: per-query accuracy above
    the majority-answer baseline; all queries must be answered. Not covered: deletions.
    Probes: all "yes", all "no", every answer flipped.
    """

    id = "algorithms.union_find-v1"
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = 4 + 3 * difficulty
        while True:
            parent, ops, answers = list(range(n)), [], []

            def find(x: int) -> int:
                while parent[x] != x:
                    x = parent[x]
                return x
            for _ in range(4 + 4 * difficulty):
                a, b = rng.sample(range(n), 2)
                if rng.random() < 0.55:
                    ops.append(f"union {a} {b}")
                    parent[find(a)] = find(b)
                else:
                    ops.append(f"connected? {a} {b}")
                    answers.append("yes" if find(a) == find(b) else "no")
            if len(answers) >= 3 and 0 < answers.count("yes") < len(answers):
                break
        prompt = (f"Elements 0..{n - 1} start in separate sets. Process in order:\n" + "\n".join(ops)
                  + f"\nAnswer the {len(answers)} queries in order as yes/no, comma-separated, nothing else.")
        return make_task(self.id, difficulty, prompt, answer=answers)

    def solve(self, task: Task) -> str:
        return ", ".join(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        got = parse_word_list(answer)
        got = got if got is None or set(got) <= {"yes", "no"} else None
        v = baseline_corrected_score(got, task.hidden["answer"])
        return Score(v, components={"queries": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        k = len(task.hidden["answer"])
        flip = {"yes": "no", "no": "yes"}
        return {"all_yes": ", ".join(["yes"] * k), "all_no": ", ".join(["no"] * k),
                "flipped": ", ".join(flip[a] for a in task.hidden["answer"])}
