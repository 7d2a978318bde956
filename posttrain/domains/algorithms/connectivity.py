"""Connectivity domains: connected components, directed cycles, bipartiteness, union-find.

Cycle and bipartition answers are verified structurally (any valid answer counts); the
component count is exact; union-find queries get baseline-corrected per-query credit.

Not covered: strongly connected components, dynamic deletions.
"""

from __future__ import annotations

import random
from collections import deque

from posttrain.core.types import Score, Task
from posttrain.domains.algorithms._kit import answer_check, int_probes, list_text
from posttrain.domains.algorithms.graphs import edge_text, random_dag
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import answer_text, baseline_corrected_score, parse_int_list, parse_word_list


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


def _components(rng: random.Random, difficulty: int) -> Draft:
    """Number of connected components of an undirected graph.

    Trains: graph traversal / union-find. Exact integer. Not covered: strongly connected
    components. Probes: the vertex count, 1, off-by-one.
    """
    n = 4 + 4 * difficulty
    edges = [sorted(rng.sample(range(n), 2)) for _ in range(int(n * 0.7))]
    edges = [list(e) for e in sorted({tuple(e) for e in edges})]
    rng.shuffle(edges)
    prompt = (f"Undirected graph on vertices 0..{n - 1}; edges: {edge_text(edges, False)}.\n"
              "How many connected components does it have (isolated vertices count)? Answer with one integer.")
    return Draft(prompt, answer=len(components(n, edges)), public={"n": n})


def _components_exploits(task: Task) -> dict[str, str]:
    return int_probes(task.hidden["answer"], vertices=task.public["n"], one=1)


register_domain(SingleTurnDomain("algorithms.components-v1", _components, answer_check, _components_exploits,
                                 description=_components.__doc__))


def _cycle_detect(rng: random.Random, difficulty: int) -> Draft:
    """Find a directed cycle, or say there is none.

    Verified: a cycle answer must list distinct vertices v1 ... vk with edges v1->v2 ...
    vk->v1 in the graph (any cycle counts); "none" is right only for an acyclic graph.
    Not covered: shortest cycles. Probes: "none" for a cyclic graph, a single edge as a cycle.
    """
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
    return Draft(prompt, public={"n": n, "edges": edges}, hidden={"cyclic": cyclic})


def _find_cycle(n: int, edges: list[list[int]]) -> list[int] | None:
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


def _cycle_detect_reference(task: Task) -> str:
    c = _find_cycle(task.public["n"], task.public["edges"])
    return "none" if c is None else list_text(c)


def _cycle_detect_check(task: Task, answer: str) -> Score:
    text = (answer_text(answer) or "").strip().lower()
    edges = {tuple(e) for e in task.public["edges"]}
    if not task.hidden["cyclic"]:
        ok = text == "none"
    else:
        c = parse_int_list(answer)
        ok = bool(c) and len(set(c)) == len(c) and all(
            (c[i], c[(i + 1) % len(c)]) in edges for i in range(len(c)))
    v = 1.0 if ok else 0.0
    return Score(v, components={"cycle": (v, 1.0)}, verifier_version=task.domain,
                 reason="correct" if ok else "wrong or invalid cycle")


def _cycle_detect_exploits(task: Task) -> dict[str, str]:
    e = task.public["edges"][0]
    return {"none": "none"} if task.hidden["cyclic"] else {"one_edge": list_text(e)}


register_domain(SingleTurnDomain("algorithms.cycle_detect-v1", _cycle_detect, _cycle_detect_check,
                                 _cycle_detect_exploits, reference=_cycle_detect_reference,
                                 description=_cycle_detect.__doc__))


def _bipartite(rng: random.Random, difficulty: int) -> Draft:
    """Split a graph's vertices into two sides with every edge crossing, or say it is impossible.

    Verified: the answer lists one side (the rest is the other side); "no" is right only
    for a non-bipartite graph. Not covered: odd-cycle certificates. Probes: "no" for a
    bipartite graph, every vertex on one side.
    """
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
    return Draft(prompt, public={"n": n, "edges": edges},
                 hidden={"bipartite": bip})


def _two_colour(n: int, edges: list[list[int]]) -> list[int] | None:
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


def _bipartite_reference(task: Task) -> str:
    col = _two_colour(task.public["n"], task.public["edges"])
    return "no" if col is None else list_text([v for v in range(len(col)) if col[v] == col[0]])


def _bipartite_check(task: Task, answer: str) -> Score:
    text = (answer_text(answer) or "").strip().lower()
    bip = _two_colour(task.public["n"], task.public["edges"]) is not None
    if not bip:
        ok = text == "no"
    else:
        group = parse_int_list(answer)
        ok = group is not None and 0 in group and len(set(group)) == len(group) and all(
            0 <= g < task.public["n"] for g in group) and all(
            (u in group) != (v in group) for u, v in task.public["edges"])
    v = 1.0 if ok else 0.0
    return Score(v, components={"partition": (v, 1.0)}, verifier_version=task.domain)


def _bipartite_exploits(task: Task) -> dict[str, str]:
    if _two_colour(task.public["n"], task.public["edges"]) is None:
        return {"all_one_side": list_text(range(task.public["n"]))}
    return {"no": "no", "all_one_side": list_text(range(task.public["n"]))}


register_domain(SingleTurnDomain("algorithms.bipartite-v1", _bipartite, _bipartite_check,
                                 _bipartite_exploits, reference=_bipartite_reference,
                                 description=_bipartite.__doc__))


def _union_find(rng: random.Random, difficulty: int) -> Draft:
    """Answer connectivity queries interleaved with union operations.

    Trains: incremental connectivity (union-find). Partial credit: per-query accuracy above
    the majority-answer baseline; all queries must be answered. Not covered: deletions.
    Probes: all "yes", all "no", every answer flipped.
    """
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
    return Draft(prompt, answer=answers)


def _union_find_reference(task: Task) -> str:
    return ", ".join(task.hidden["answer"])


def _union_find_check(task: Task, answer: str) -> Score:
    got = parse_word_list(answer)
    got = got if got is None or set(got) <= {"yes", "no"} else None
    v = baseline_corrected_score(got, task.hidden["answer"])
    return Score(v, components={"queries": (v, 1.0)}, verifier_version=task.domain)


def _union_find_exploits(task: Task) -> dict[str, str]:
    k = len(task.hidden["answer"])
    flip = {"yes": "no", "no": "yes"}
    return {"all_yes": ", ".join(["yes"] * k), "all_no": ", ".join(["no"] * k),
            "flipped": ", ".join(flip[a] for a in task.hidden["answer"])}


register_domain(SingleTurnDomain("algorithms.union_find-v1", _union_find, _union_find_check,
                                 _union_find_exploits, reference=_union_find_reference,
                                 description=_union_find.__doc__))
