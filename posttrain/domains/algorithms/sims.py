"""Simulation and bit-level domains: binary-search probes, a stack machine, bracket checking,
XOR of a range, bit expressions, Huffman code length, Josephus, LRU cache misses.

Each reference answer is computed by running the process step by step; probes are the
classic slips (linear scan, fixed-length codes, FIFO instead of LRU...).

Not covered: concurrency, floating-point simulation.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import OrderedDict

from posttrain.domains.algorithms._kit import answer_check, answer_probes, answer_reference, list_text
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain


def _binary_search_trace(rng: random.Random, difficulty: int) -> Draft:
    """Tracing the indices a binary search inspects.

    List the indices a binary search inspects (mid = (lo + hi) // 2) until it finds the
    target or the range empties.

    Exact list. Not covered: lower/upper-bound variants. Probes: a linear scan's indices,
    the trace using ceiling midpoints.
    """
    a = sorted(rng.sample(range(1, 200), 4 + 6 * difficulty))
    x = rng.choice(a) if rng.random() < 0.7 else rng.choice([v for v in range(1, 200) if v not in a])
    ans = _search_trace(a, x)
    linear = list(range(min(len(a), (a.index(x) + 1) if x in a else len(a))))
    prompt = (f"Sorted array (indices from 0): {list_text(a)}.\nBinary search for {x} with lo=0, hi={len(a) - 1}, "
              "mid=(lo+hi)//2; stop when a[mid] equals the target or lo > hi. List every mid index inspected, "
              "in order, comma-separated, nothing else.")
    return Draft(prompt, answer=ans, hidden={
        "probe_values": {"linear": linear, "ceil_mid": _search_trace(a, x, ceil=True)}})


def _search_trace(a: list[int], x: int, ceil: bool = False) -> list[int]:
    lo, hi, out = 0, len(a) - 1, []
    while lo <= hi:
        mid = (lo + hi + (1 if ceil else 0)) // 2
        out.append(mid)
        if a[mid] == x:
            break
        lo, hi = (mid + 1, hi) if a[mid] < x else (lo, mid - 1)
    return out


register_domain(SingleTurnDomain("algorithms.binary_search_trace-v1", _binary_search_trace, answer_check,
                                 answer_probes, reference=answer_reference,
                                 description=_binary_search_trace.__doc__))


def _stack_machine(rng: random.Random, difficulty: int) -> Draft:
    """Run a small stack-machine program and give the final stack, bottom to top.

    Exact list. Not covered: control flow (jumps). Probes: the stack top to bottom, the
    pushed constants only.
    """
    while True:
        stack, prog, pushed = [], [], []
        for _ in range(5 + 4 * difficulty):
            ops = ["PUSH"] + (["ADD", "SUB", "MUL", "SWAP", "OVER"] if len(stack) >= 2 else []) + (
                ["DUP", "POP"] if stack else [])
            op = rng.choice(ops)
            if op == "PUSH":
                v = rng.randint(1, 9)
                stack.append(v)
                pushed.append(v)
                prog.append(f"PUSH {v}")
                continue
            prog.append(op)
            if op in ("ADD", "SUB", "MUL"):
                b, a = stack.pop(), stack.pop()
                stack.append(a + b if op == "ADD" else a - b if op == "SUB" else a * b)
            elif op == "SWAP":
                stack[-1], stack[-2] = stack[-2], stack[-1]
            elif op == "OVER":
                stack.append(stack[-2])
            elif op == "DUP":
                stack.append(stack[-1])
            else:
                stack.pop()
        if len(stack) >= 2 and stack != stack[::-1]:
            break
    prompt = ("Stack machine: PUSH n pushes n; ADD/SUB/MUL pop b then a and push a+b, a-b, a*b; DUP copies the "
              "top; SWAP swaps the top two; OVER pushes a copy of the second item; POP discards the top.\n"
              "Program:\n" + "\n".join(prog) + "\nGive the final stack from bottom to top, comma-separated, "
              "nothing else.")
    return Draft(prompt, answer=stack, hidden={
        "probe_values": {"top_first": stack[::-1], "pushed": pushed}})


register_domain(SingleTurnDomain("algorithms.stack_machine-v1", _stack_machine, answer_check, answer_probes,
                                 reference=answer_reference, description=_stack_machine.__doc__))


def _bracket_check(rng: random.Random, difficulty: int) -> Draft:
    """Find the first position where a bracket string goes wrong.

    Answer: the 0-based index of the first closing bracket that does not match, the string's
    length if only openings are left unclosed, or -1 if balanced. Exact integer.
    Not covered: quotes/escapes. Probes: -1 for an unbalanced string, 0, off-by-one.
    """
    pairs = {")": "(", "]": "[", "}": "{"}
    s, depth = [], []
    for _ in range(4 + 4 * difficulty):
        if depth and rng.random() < 0.45:
            s.append({v: k for k, v in pairs.items()}[depth.pop()])
        else:
            depth.append(rng.choice("([{"))
            s.append(depth[-1])
    s += [{v: k for k, v in pairs.items()}[c] for c in reversed(depth)]
    kind = rng.choice(["ok", "swap", "drop"])
    if kind == "swap":
        i = rng.choice([i for i, c in enumerate(s) if c in pairs])
        s[i] = rng.choice([c for c in pairs if c != s[i]])
    elif kind == "drop":
        s.pop()
    text = "".join(s)
    stack, ans = [], -1
    for i, c in enumerate(text):
        if c in pairs:
            if not stack or stack.pop() != pairs[c]:
                ans = i
                break
        else:
            stack.append(c)
    if ans == -1 and stack:
        ans = len(text)
    prompt = (f"Bracket string: {text}\nGive the 0-based index of the first closing bracket that does not match, "
              "or the string's length if every closing bracket matches but some bracket is never closed, or -1 if "
              "the string is balanced. Answer with one integer.")
    return Draft(prompt, answer=ans, hidden={"probe_values": {"balanced": -1, "zero": 0}})


register_domain(SingleTurnDomain("algorithms.bracket_check-v1", _bracket_check, answer_check, answer_probes,
                                 reference=answer_reference, description=_bracket_check.__doc__))


def _xor_range(rng: random.Random, difficulty: int) -> Draft:
    """XOR of every integer from a to b inclusive.

    Exact integer (large ranges reward the period-4 identity over brute force).
    Not covered: other bitwise folds. Probes: a XOR b, the sum of the range.
    """
    a = rng.randint(1, 10 ** difficulty * 5)
    b = a + rng.randint(2, 10 ** difficulty * 5)
    f = lambda n: [n, 1, n + 1, 0][n % 4]  # noqa: E731  XOR of 0..n
    prompt = f"What is {a} XOR {a + 1} XOR ... XOR {b} (every integer from {a} to {b})? Answer with one integer."
    return Draft(prompt, answer=f(b) ^ f(a - 1), hidden={
        "probe_values": {"ends_only": a ^ b, "sum": (a + b) * (b - a + 1) // 2}})


register_domain(SingleTurnDomain("algorithms.xor_range-v1", _xor_range, answer_check, answer_probes,
                                 reference=answer_reference, description=_xor_range.__doc__))


def _bit_expression(rng: random.Random, difficulty: int) -> Draft:
    """Evaluate an expression of AND, OR, XOR and shifts on non-negative integers.

    Exact integer. Not covered: signed/two's-complement semantics. Probes: the value with
    & and | swapped, off-by-one.
    """
    e = _random_bit_expr(rng, difficulty + 1)
    swapped = e.replace("&", "#").replace("|", "&").replace("#", "|")
    prompt = (f"Evaluate {e[1:-1]} (& AND, | OR, ^ XOR, << and >> shifts; non-negative integers, "
              "parentheses explicit). Answer with one integer in decimal.")
    return Draft(prompt, answer=eval(e), hidden={  # noqa: S307 (generated)
        "probe_values": {"and_or_swapped": eval(swapped)}})  # noqa: S307


def _random_bit_expr(rng: random.Random, depth: int) -> str:
    if depth == 0:
        return str(rng.randint(1, 255))
    op = rng.choice(["&", "|", "^", "<<", ">>"])
    if op in ("<<", ">>"):
        return f"({_random_bit_expr(rng, depth - 1)} {op} {rng.randint(1, 3)})"
    return f"({_random_bit_expr(rng, depth - 1)} {op} {_random_bit_expr(rng, depth - 1)})"


register_domain(SingleTurnDomain("algorithms.bit_expression-v1", _bit_expression, answer_check,
                                 answer_probes, reference=answer_reference,
                                 description=_bit_expression.__doc__))


def _huffman_cost(rng: random.Random, difficulty: int) -> Draft:
    """Total number of bits of a Huffman encoding of a text with given symbol frequencies.

    Exact integer (the total is the same for every optimal prefix code). Not covered: the
    code words themselves. Probes: fixed-length coding, off-by-one.
    """
    syms = "abcdefgh"[: 2 + 2 * difficulty]
    freq = {s: rng.randint(1, 30) for s in syms}
    h = list(freq.values())
    heapq.heapify(h)
    total = 0
    while len(h) > 1:
        x, y = heapq.heappop(h), heapq.heappop(h)
        total += x + y
        heapq.heappush(h, x + y)
    fixed = sum(freq.values()) * math.ceil(math.log2(len(syms)))
    prompt = ("Symbol frequencies: " + ", ".join(f"{s}: {f}" for s, f in freq.items()) + ".\nHow many bits does "
              "an optimal (Huffman) prefix code use to encode the whole text? Answer with one integer.")
    return Draft(prompt, answer=total, hidden={"probe_values": {"fixed_length": fixed}})


register_domain(SingleTurnDomain("algorithms.huffman_cost-v1", _huffman_cost, answer_check, answer_probes,
                                 reference=answer_reference, description=_huffman_cost.__doc__))


def _josephus(rng: random.Random, difficulty: int) -> Draft:
    """Josephus problem: n people in a circle, every k-th is eliminated; who survives?

    Exact integer (1-based position). Not covered: elimination order. Probes: n, 1,
    the k-th person.
    """
    n, k = rng.randint(4, 6 + 8 * difficulty), rng.randint(2, 2 + difficulty)
    pos = 0
    for m in range(2, n + 1):
        pos = (pos + k) % m
    prompt = (f"{n} people stand in a circle numbered 1 to {n}. Counting starts at person 1; every {k}-th person "
              "is removed and counting continues with the next person. Which number survives? "
              "Answer with one integer.")
    return Draft(prompt, answer=pos + 1, hidden={
        "probe_values": {"n": n, "one": 1, "kth": k}})


register_domain(SingleTurnDomain("algorithms.josephus-v1", _josephus, answer_check, answer_probes,
                                 reference=answer_reference, description=_josephus.__doc__))


def _lru_misses(rng: random.Random, difficulty: int) -> Draft:
    """Count cache misses of an LRU cache of a given capacity over an access sequence.

    Exact integer. Not covered: other policies' counts (FIFO is a probe). Probes: the
    number of distinct keys, the FIFO miss count (when they differ).
    """
    cap = 1 + difficulty
    seq = [rng.choice("ABCDEFG"[: cap + 2]) for _ in range(6 + 4 * difficulty)]
    lru: OrderedDict[str, None] = OrderedDict()
    fifo: list[str] = []
    miss = fmiss = 0
    for x in seq:
        if x in lru:
            lru.move_to_end(x)
        else:
            miss += 1
            lru[x] = None
            if len(lru) > cap:
                lru.popitem(last=False)
        if x not in fifo:
            fmiss += 1
            fifo.append(x)
            if len(fifo) > cap:
                fifo.pop(0)
    prompt = (f"An LRU cache holds {cap} keys and starts empty. Accesses: {' '.join(seq)}.\nHow many accesses "
              "are misses? Answer with one integer.")
    return Draft(prompt, answer=miss, hidden={
        "probe_values": {"distinct": len(set(seq)), "fifo": fmiss}})


register_domain(SingleTurnDomain("algorithms.lru_misses-v1", _lru_misses, answer_check, answer_probes,
                                 reference=answer_reference, description=_lru_misses.__doc__))
