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

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.algorithms._common import int_probes, int_score, list_score, list_text
from posttrain.domains.base import register_domain


class _Base:
    family = "algorithms"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    id = ""

    def solve(self, task: Task) -> str:
        a = task.hidden["answer"]
        return list_text(a) if isinstance(a, list) else str(a)

    def score(self, task: Task, answer: str) -> Score:
        if isinstance(task.hidden["answer"], list):
            return list_score(self.id, task, answer, exact=True)
        return int_score(self.id, task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        a = task.hidden["answer"]
        extra = task.hidden.get("probe_values", {})
        if isinstance(a, list):
            return {k: list_text(v) for k, v in extra.items() if v != a}
        return int_probes(a, **extra)


@register_domain
class BinarySearchTrace(_Base):
    """List the indices a binary search inspects (mid = (lo + hi) // 2) until it finds the
    target or the range empties.

    Exact list. Not covered: lower/upper-bound variants. Probes: a linear scan's indices,
    the trace using ceiling midpoints.
    """

    id = "algorithms.binary_search_trace-v1"

    @staticmethod
    def trace(a: list[int], x: int, ceil: bool = False) -> list[int]:
        lo, hi, out = 0, len(a) - 1, []
        while lo <= hi:
            mid = (lo + hi + (1 if ceil else 0)) // 2
            out.append(mid)
            if a[mid] == x:
                break
            lo, hi = (mid + 1, hi) if a[mid] < x else (lo, mid - 1)
        return out

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        a = sorted(rng.sample(range(1, 200), 4 + 6 * difficulty))
        x = rng.choice(a) if rng.random() < 0.7 else rng.choice([v for v in range(1, 200) if v not in a])
        ans = self.trace(a, x)
        linear = list(range(min(len(a), (a.index(x) + 1) if x in a else len(a))))
        prompt = (f"Sorted array (indices from 0): {list_text(a)}.\nBinary search for {x} with lo=0, hi={len(a) - 1}, "
                  "mid=(lo+hi)//2; stop when a[mid] equals the target or lo > hi. List every mid index inspected, "
                  "in order, comma-separated, nothing else.")
        return make_task(self.id, difficulty, prompt, answer=ans, hidden={
            "probe_values": {"linear": linear, "ceil_mid": self.trace(a, x, ceil=True)}})


@register_domain
class StackMachine(_Base):
    """Run a small stack-machine program and give the final stack, bottom to top.

    Exact list. Not covered: control flow (jumps). Probes: the stack top to bottom, the
    pushed constants only.
    """

    id = "algorithms.stack_machine-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=stack, hidden={
            "probe_values": {"top_first": stack[::-1], "pushed": pushed}})


@register_domain
class BracketCheck(_Base):
    """Find the first position where a bracket string goes wrong.

    Answer: the 0-based index of the first closing bracket that does not match, the string's
    length if only openings are left unclosed, or -1 if balanced. Exact integer.
    Not covered: quotes/escapes. Probes: -1 for an unbalanced string, 0, off-by-one.
    """

    id = "algorithms.bracket_check-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=ans, hidden={"probe_values": {"balanced": -1, "zero": 0}})


@register_domain
class XorRange(_Base):
    """XOR of every integer from a to b inclusive.

    Exact integer (large ranges reward the period-4 identity over brute force).
    Not covered: other bitwise folds. Probes: a XOR b, the sum of the range.
    """

    id = "algorithms.xor_range-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        a = rng.randint(1, 10 ** difficulty * 5)
        b = a + rng.randint(2, 10 ** difficulty * 5)
        f = lambda n: [n, 1, n + 1, 0][n % 4]  # noqa: E731  XOR of 0..n
        prompt = f"What is {a} XOR {a + 1} XOR ... XOR {b} (every integer from {a} to {b})? Answer with one integer."
        return make_task(self.id, difficulty, prompt, answer=f(b) ^ f(a - 1), hidden={
            "probe_values": {"ends_only": a ^ b, "sum": (a + b) * (b - a + 1) // 2}})


@register_domain
class BitExpression(_Base):
    """Evaluate an expression of AND, OR, XOR and shifts on non-negative integers.

    Exact integer. Not covered: signed/two's-complement semantics. Probes: the value with
    & and | swapped, off-by-one.
    """

    id = "algorithms.bit_expression-v1"

    def _expr(self, rng: random.Random, depth: int) -> str:
        if depth == 0:
            return str(rng.randint(1, 255))
        op = rng.choice(["&", "|", "^", "<<", ">>"])
        if op in ("<<", ">>"):
            return f"({self._expr(rng, depth - 1)} {op} {rng.randint(1, 3)})"
        return f"({self._expr(rng, depth - 1)} {op} {self._expr(rng, depth - 1)})"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        e = self._expr(rng, difficulty + 1)
        swapped = e.replace("&", "#").replace("|", "&").replace("#", "|")
        prompt = (f"Evaluate {e[1:-1]} (& AND, | OR, ^ XOR, << and >> shifts; non-negative integers, "
                  "parentheses explicit). Answer with one integer in decimal.")
        return make_task(self.id, difficulty, prompt, answer=eval(e), hidden={  # noqa: S307 (generated)
            "probe_values": {"and_or_swapped": eval(swapped)}})  # noqa: S307


@register_domain
class HuffmanCost(_Base):
    """Total number of bits of a Huffman encoding of a text with given symbol frequencies.

    Exact integer (the total is the same for every optimal prefix code). Not covered: the
    code words themselves. Probes: fixed-length coding, off-by-one.
    """

    id = "algorithms.huffman_cost-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=total, hidden={"probe_values": {"fixed_length": fixed}})


@register_domain
class Josephus(_Base):
    """Josephus problem: n people in a circle, every k-th is eliminated; who survives?

    Exact integer (1-based position). Not covered: elimination order. Probes: n, 1,
    the k-th person.
    """

    id = "algorithms.josephus-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n, k = rng.randint(4, 6 + 8 * difficulty), rng.randint(2, 2 + difficulty)
        pos = 0
        for m in range(2, n + 1):
            pos = (pos + k) % m
        prompt = (f"{n} people stand in a circle numbered 1 to {n}. Counting starts at person 1; every {k}-th person "
                  "is removed and counting continues with the next person. Which number survives? "
                  "Answer with one integer.")
        return make_task(self.id, difficulty, prompt, answer=pos + 1, hidden={
            "probe_values": {"n": n, "one": 1, "kth": k}})


@register_domain
class LRUMisses(_Base):
    """Count cache misses of an LRU cache of a given capacity over an access sequence.

    Exact integer. Not covered: other policies' counts (FIFO is a probe). Probes: the
    number of distinct keys, the FIFO miss count (when they differ).
    """

    id = "algorithms.lru_misses-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
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
        return make_task(self.id, difficulty, prompt, answer=miss, hidden={
            "probe_values": {"distinct": len(set(seq)), "fifo": fmiss}})
