"""Stateful classes and machines, synthesis (hidden tests; see :mod:`._synth_common`).

Class domains are tested through :func:`._synth_common.class_driver`: each hidden test builds
the class and applies a sequence of method calls; the test passes when the whole list of
results (``{"raises": name}`` for an expected exception) matches. A missing method fails the
test at its first call.

- ``code.synth_min_stack-v1``: ``MinStack`` — d1 push/pop/top/size, d2 plus ``min()``, d3
  ``IndexError`` on an empty stack and a 30,000-operation timed test (a scanning ``min``
  times out; the long run is compared through a digest of its results).
- ``code.synth_account-v1``: ``Account`` with rules — d1 deposits/withdrawals with
  ``ValueError`` on non-positive amounts or overdrawing, d2 an overdraft limit and a fee per
  withdrawal ending negative, d3 plus ``history()`` and ``undo()``.
- ``code.synth_rate_limiter-v1``: ``RateLimiter(limit, window, clock)`` with an injected
  clock (the driver's fake, moved by ``advance`` steps) — d1 fixed windows, d2 a sliding log,
  d3 per-key token buckets with ``wait_time``.
- ``code.synth_fsm-v1``: ``run_machine(events)`` over a transition table drawn per task and
  written in the specification — d1 final state (undefined events ignored), d2 visited states
  with ``ValueError`` on an undefined transition, d3 a Mealy machine's output and acceptance.

Reward and probes: :class:`._synth_common.SynthDomain` (class probes: constant or ``None``
returning methods).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._synth_common import Level, SynthDomain, class_driver, raises_driver

BIG = "Hidden tests include one long run of operations (see the sizes above) under a time limit of a few seconds."

_STACK = """class MinStack:
    def __init__(self):
        self.items = []
        self.mins = []

    def push(self, x):
        self.items.append(x)
        self.mins.append(x if not self.mins else min(x, self.mins[-1]))

    def pop(self):
        if not self.items:
            raise IndexError("empty")
        self.mins.pop()
        return self.items.pop()

    def top(self):
        if not self.items:
            raise IndexError("empty")
        return self.items[-1]

    def min(self):
        if not self.mins:
            raise IndexError("empty")
        return self.mins[-1]

    def size(self):
        return len(self.items)
"""


def _stack_ops(with_min: bool, empty_ok: bool, n: tuple[int, int]):
    def gen(r: random.Random, c: dict) -> list:
        ops, depth = [], 0
        for _ in range(r.randint(*n)):
            kinds = ["push", "push", "top", "size"] + (["min", "min"] if with_min else [])
            kinds += ["pop"] if depth or empty_ok else []
            k = r.choice(kinds)
            if k in ("top", "min") and not depth and not empty_ok:
                k = "push"
            ops.append(["push", r.randint(-9, 20)] if k == "push" else [k])
            depth = depth + 1 if k == "push" else max(0, depth - (k == "pop"))
        if all(op[0] == "push" for op in ops):  # a push-only run is passed by a stub
            ops.append(["size"])
        return [[], ops]
    return gen


def _big_stack(r: random.Random) -> list:
    kinds = r.choices(["push", "push", "push", "pop", "top", "min", "min", "size"], k=30_000)
    vals = r.choices(range(-10**6, 10**6), k=30_000)
    return [[], [["push", v] if k == "push" else [k] for k, v in zip(kinds, vals)]]


register_domain(SynthDomain("code.synth_min_stack-v1", "MinStack", {
    1: Level("MinStack() is a stack: push(x) adds x (returns None), pop() removes and returns the "
             "top, top() returns it without removing, size() gives the number of items. Tests "
             "never pop or peek an empty stack.", _STACK, _stack_ops(False, False, (3, 10)),
             bug=("return self.items[-1]", "return self.items[0]")),
    2: Level("MinStack() is a stack with push(x) (returns None), pop() (removes and returns the "
             "top), top(), size() and min(), which returns the smallest item currently on the "
             "stack. Tests never pop or peek an empty stack.", _STACK, _stack_ops(True, False, (4, 12)),
             bug=("min(x, self.mins[-1])", "x")),
    3: Level("MinStack() is a stack with push(x) (returns None), pop() (removes and returns the "
             "top), top(), size() and min() (the smallest item on the stack); pop, top and min "
             "raise IndexError on an empty stack. Every operation must take O(1) time: a run has "
             "up to 30,000 operations.", _STACK, _stack_ops(True, True, (4, 12)),
             big=lambda r, c: _big_stack(r),
             bug=("        self.mins.pop()\n", "")),
}, kind="class", methods=("push", "pop", "top", "min", "size"),
    driver=class_driver("MinStack", ("push", "pop", "top", "min", "size"), ("IndexError",)),
    big_note=BIG,
    description="Write a stack class with O(1) minimum and errors on empty.\n\n" + __doc__))

_ACCOUNT = """class Account:
    def __init__(self, initial, overdraft=0):
        self.bal = initial
        self.overdraft = overdraft
        self.log = []

    def deposit(self, x):
        if x <= 0:
            raise ValueError("amount must be positive")
        self.bal += x
        self.log.append(["deposit", x])
        return self.bal

    def withdraw(self, x):
        if x <= 0:
            raise ValueError("amount must be positive")
        fee = <<fee>> if self.bal - x < 0 else 0
        if self.bal - x - fee < -self.overdraft:
            raise ValueError("insufficient funds")
        self.bal -= x + fee
        self.log.append(["withdraw", x + fee])
        return self.bal

    def balance(self):
        return self.bal

    def history(self):
        return [list(e) for e in self.log]

    def undo(self):
        if not self.log:
            raise ValueError("nothing to undo")
        kind, amount = self.log.pop()
        self.bal += -amount if kind == "deposit" else amount
        return self.bal
"""


def _account_ops(overdraft: bool, extra: bool):
    def gen(r: random.Random, c: dict) -> list:
        kinds = ["deposit", "withdraw", "withdraw", "balance"] + (["history", "undo"] if extra else [])
        ops = []
        for _ in range(r.randint(3, 9)):
            k = r.choice(kinds)
            amount = r.choice([0, -5]) if r.random() < 0.1 else r.randint(1, 60)
            ops.append([k, amount] if k in ("deposit", "withdraw") else [k])
        return [[r.randint(0, 50)] + ([r.randint(0, 40)] if overdraft else []), ops]
    return gen


register_domain(SynthDomain("code.synth_account-v1", "Account", {
    1: Level("Account(initial) holds a balance: deposit(x) and withdraw(x) return the new balance; "
             "balance() returns it; both raise ValueError (and change nothing) when x <= 0, and "
             "withdraw raises ValueError when x exceeds the balance.", _ACCOUNT,
             _account_ops(False, False), consts=lambda r: {"fee": 0},
             bug=("if self.bal - x - fee < -self.overdraft:", "if self.bal - x - fee < -self.overdraft - 10:")),
    2: Level("Account(initial, overdraft): deposit(x), withdraw(x) return the new balance, "
             "balance() returns it. A withdrawal that leaves the balance negative also charges a "
             "fee of <<fee>>; it is refused with ValueError (nothing changes) when the balance "
             "after amount and fee would be below -overdraft. Non-positive amounts raise "
             "ValueError.", _ACCOUNT, _account_ops(True, False), consts=lambda r: {"fee": r.randint(1, 5)},
             bug=("fee = <<fee>> if", "fee = 0 if")),
    3: Level("Account(initial, overdraft): deposit(x), withdraw(x) return the new balance, "
             "balance() returns it. A withdrawal leaving the balance negative charges a fee of "
             "<<fee>>; it is refused with ValueError when the balance after amount and fee would "
             "be below -overdraft; non-positive amounts raise ValueError. history() returns the "
             "successful operations as [[\"deposit\", x] or [\"withdraw\", x + fee], ...]; undo() "
             "reverts the last successful operation still in the history (removing it) and returns "
             "the balance, or raises ValueError when there is none.", _ACCOUNT,
             _account_ops(True, True), consts=lambda r: {"fee": r.randint(1, 5)},
             bug=("self.log.append([\"withdraw\", x + fee])", "self.log.append([\"withdraw\", x])")),
}, kind="class", methods=("deposit", "withdraw", "balance", "history", "undo"),
    driver=class_driver("Account", ("deposit", "withdraw", "balance", "history", "undo"), ("ValueError",)),
    description="Write a bank account class enforcing rules (limits, fees, errors).\n\n" + __doc__))

_FIXED = """class RateLimiter:
    def __init__(self, limit, window, clock):
        self.limit, self.window, self.clock = limit, window, clock
        self.counts = {}

    def allow(self, key):
        slot = (key, self.clock() // self.window)
        if self.counts.get(slot, 0) >= self.limit:
            return False
        self.counts[slot] = self.counts.get(slot, 0) + 1
        return True
"""
_SLIDING = """class RateLimiter:
    def __init__(self, limit, window, clock):
        self.limit, self.window, self.clock = limit, window, clock
        self.log = {}

    def allow(self, key):
        now = self.clock()
        times = [t for t in self.log.get(key, []) if t > now - self.window]
        ok = len(times) < self.limit
        if ok:
            times.append(now)
        self.log[key] = times
        return ok
"""
_BUCKET = """class RateLimiter:
    def __init__(self, limit, window, clock):
        self.cap, self.rate, self.clock = limit, limit / window, clock
        self.state = {}

    def _tokens(self, key):
        tokens, last = self.state.get(key, (self.cap, self.clock()))
        now = self.clock()
        return min(self.cap, tokens + (now - last) * self.rate), now

    def allow(self, key):
        tokens, now = self._tokens(key)
        ok = tokens >= 1
        self.state[key] = (tokens - 1 if ok else tokens, now)
        return ok

    def wait_time(self, key):
        tokens, now = self._tokens(key)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate
"""


def _limiter_ops(keys: str, wait: bool):
    def gen(r: random.Random, c: dict) -> list:
        ops = []
        for _ in range(r.randint(4, 14)):
            roll = r.random()
            if roll < 0.3:
                ops.append(["advance", r.randint(1, 4)])
            elif wait and roll < 0.45:
                ops.append(["wait_time", r.choice(keys)])
            else:
                ops.append(["allow", r.choice(keys)])
        limit = r.randint(1, 3)
        at = r.randrange(len(ops) + 1)  # a burst over the limit: some call is always denied
        ops[at:at] = [["allow", keys[0]]] * (limit + 1)
        # dyadic rates (limit / 2 or 4) keep token arithmetic exact in floats
        return [[limit, r.choice([2, 4]) if wait else r.randint(2, 6)], ops]
    return gen


_CLOCK = ("RateLimiter(limit, window, clock): clock is a function returning the current time "
          "(a number of seconds, never decreasing); call it whenever you need the time. ")
register_domain(SynthDomain("code.synth_rate_limiter-v1", "RateLimiter", {
    1: Level(_CLOCK + "allow(key) returns True for at most limit calls per key in each fixed "
             "window [k*window, (k+1)*window) of time, else False (denied calls do not count).",
             _FIXED, _limiter_ops("a", False), bug=("self.clock() // self.window", "self.clock()")),
    2: Level(_CLOCK + "allow(key) returns True when fewer than limit calls for that key were "
             "allowed in the last window seconds (times t with now - window < t <= now), and "
             "records it; otherwise False (denied calls are not recorded).", _SLIDING,
             _limiter_ops("ab", False), bug=("t > now - self.window", "t > now - self.window + 1")),
    3: Level(_CLOCK + "Each key has a token bucket holding at most limit tokens, starting full "
             "and refilling continuously at limit/window tokens per second. allow(key) spends one "
             "token and returns True when at least one is available, else returns False. "
             "wait_time(key) returns the seconds (a float) until one token is available (0.0 "
             "when one is).", _BUCKET, _limiter_ops("ab", True),
             bug=("ok = tokens >= 1", "ok = tokens > 0")),
}, kind="class", methods=("allow", "wait_time"), clock=True,
    driver=class_driver("RateLimiter", ("allow", "wait_time"), clock=True),
    description="Write a rate limiter class over an injected clock.\n\n" + __doc__))

_FSM = """TABLE = <<table>>
OUT = <<out>>


def run_machine(events):
    state, seen, said = "S0", [], ""
    for e in events:
        nxt = TABLE.get(state + "," + e)
        if nxt is None:
            if <<strict>>:
                raise ValueError("no transition")
            continue
        said += OUT.get(state + "," + e, "")
        state = nxt
        seen.append(state)
    return <<result>>
"""


def _fsm_consts(n_states: int, events: str, holes: float, outputs: bool, result: str):
    def consts(r: random.Random) -> dict:
        states = [f"S{i}" for i in range(n_states)]
        table = {f"{s},{e}": r.choice(states) for s in states for e in events if r.random() >= holes}
        out = {k: r.choice("xyz") for k in table if outputs and r.random() < 0.5}
        accept = sorted(r.sample(states, 2))
        lines = "; ".join(f"{k.split(',')[0]} --{k.split(',')[1]}--> {v}"
                          + (f" (outputs {out[k]})" if k in out else "") for k, v in table.items())
        return {"table": _dict_src(table), "out": _dict_src(out), "strict": holes > 0, "lines": lines,
                "events": events, "accept": repr(accept),
                "result": result.replace("ACCEPT", repr(accept))}
    return consts


def _dict_src(d: dict) -> str:
    """A dict literal, one entry per line (keeps the reference within 100 columns)."""
    return "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in d.items()) + "}" if d else "{}"


def _events(r: random.Random, c: dict) -> list:
    return [[r.choice(c["events"]) for _ in range(r.randint(0, 7))]]


_FSM_HEAD = "A state machine starts in S0; its transitions are: <<lines>>. "
register_domain(SynthDomain("code.synth_fsm-v1", "run_machine", {
    1: Level(_FSM_HEAD + "run_machine(events) applies the list of events (strings) and returns the "
             "final state; an event with no transition from the current state is ignored.", _FSM,
             _events, consts=_fsm_consts(3, "ab", 0.0, False, "state"), bug=("for e in events:", "for e in events[:5]:")),
    2: Level(_FSM_HEAD + "run_machine(events) applies the events and returns the list of states "
             "entered after each event; it raises ValueError when an event has no transition "
             "from the current state.", _FSM, _events,
             consts=_fsm_consts(4, "abc", 0.25, False, "seen"), bug=("seen.append(state)", "seen.append(e)")),
    3: Level(_FSM_HEAD + "Accepting states: <<accept>>. run_machine(events) applies the events "
             "and returns [output, accepted]: the concatenated outputs of the transitions taken "
             "and whether the final state is accepting; it raises ValueError when an event has no "
             "transition from the current state.", _FSM, _events,
             consts=_fsm_consts(5, "abc", 0.2, True, "[said, state in ACCEPT]"),
             bug=("said += OUT.get(state + \",\" + e, \"\")", "said += OUT.get(nxt + \",\" + e, \"\")")),
}, driver=raises_driver("run_machine"),
    description="Write a finite-state machine runner over a given transition table.\n\n" + __doc__))
