"""ToolEnv: the multi-turn TaskEnv over tools and (optionally) a sandbox.

What it is: ``ToolEnv(task, tools, sandbox_factory, verifier, max_turns, process_reward_fn)``.
Each ``step(action)`` parses the action with the strict tool-call format, runs the valid calls in order (each tool is an object with
``name``, ``spec`` and ``__call__(sandbox, **arguments) -> ToolResult``, as in
:mod:`posttrain.tools`), and returns the *new* messages — one ``tool`` message per call or
format error — as the next observation; the agent loop keeps the history. A turn without any
``<tool_call>`` ends the episode and is the final answer (with ``require_answer=True`` only an
``<answer>`` block ends it; other text is a format error returned to the policy).

Guarantees:
- the sandbox is opened lazily (an episode that never calls a tool and whose verifier needs
  none costs no sandbox) from ``sandbox_factory`` (a context-manager factory such as
  ``SandboxPool.lease`` or ``open_sandbox``), initialised by ``setup(sandbox)``, and closed by
  ``close()`` (idempotent; the agent loop always calls it);
- a tool that raises becomes an error ``tool`` message (``ok`` False), never an exception;
  tool output shown to the policy is capped at ``max_output_chars`` (head and tail kept);
- ``info`` of every step has ``format_ok``, ``tool_calls``, ``tool_calls_valid`` (every call
  well-formed and schema-valid), ``malformed_calls``, ``invalid_calls``, ``tool_errors``,
  ``final``, and ``max_turns`` when the turn budget ended the episode;
- ``verify(trajectory)`` runs ``verifier(env, trajectory) -> Score`` and never raises: a crash
  or a non-Score is a Score with ``error`` set. Verifiers that need fresh state (hidden tests)
  open their *own* sandbox (see :mod:`posttrain.verifiers.code`): the episode's sandbox is the
  policy's, and nothing hidden is ever written into it;
- ``process_reward_fn(env) -> float`` (long-horizon checkpoints) is called after every step
  and its value is the step's process reward (a crash gives 0 and ``process_reward_error``).

What it does not do: keep chat history or manage context (the agent loop does), or retry
failed tools.

The strict tool-call format and its parser (``parse_turn``, ``validate_arguments``) live in
:mod:`posttrain.tools.calls`; their names are re-exported here.
"""

from __future__ import annotations

import atexit
import copy
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator, Mapping, Sequence

from posttrain.core.errors import EnvError, VerifierError
from posttrain.core.types import Completion, Observation, Score, StepResult, Task, Trajectory
from posttrain.tools.calls import (  # noqa: F401 - re-exported: domains import the format from here
    CLOSE, MAX_CALLS, OPEN, ParsedTurn, ToolCall, clip, error_message, format_answer, format_call, format_calls, parse_turn, spec_name, spec_parameters, validate_arguments,
)

SandboxFactory = Callable[[], ContextManager[Any]]


@dataclass(frozen=True)
class CallRecord:
    """One call the policy made: its turn, name, arguments, validity and the tool's result."""

    turn: int
    name: str
    arguments: Mapping[str, Any]
    valid: bool
    ok: bool
    content: str = ""
    data: Mapping[str, Any] | None = None


class ToolEnv:
    """A multi-turn env over tools and a lazily opened sandbox (see the module docstring)."""

    def __init__(self, task: Task, tools: Sequence[Any], sandbox_factory: SandboxFactory | None,
                 verifier: Callable[["ToolEnv", Trajectory], Score], max_turns: int = 8,
                 process_reward_fn: Callable[["ToolEnv"], float] | None = None, *,
                 setup: Callable[[Any], None] | None = None, max_output_chars: int = 4000,
                 max_calls: int = 8, verifier_version: str = "", state: Any = None,
                 require_answer: bool = False):
        self.task = task
        tools = list(getattr(tools, "tools", {}).values()) if hasattr(tools, "call") else list(tools)
        self.tools = {spec_name(t.spec): t for t in tools}  # a ToolSet or a list of tools
        self.specs = tuple(t.spec for t in tools)
        self.require_answer = require_answer
        self._factory = sandbox_factory
        self._verifier = verifier
        self.max_turns = int(max_turns)
        self._process = process_reward_fn
        self._setup = setup
        self.max_output_chars = max_output_chars
        self.max_calls = max_calls
        self.verifier_version = verifier_version
        self.state = state if state is not None else {}
        self.calls: list[CallRecord] = []
        self.answer: str | None = None
        self.turn = 0
        self.done = False
        self.checkpoints: dict[str, float] = {}  # for process rewards: name -> reward given
        self._cm: ContextManager[Any] | None = None
        self._sandbox: Any = None

    # ------------------------------------------------------------------ sandbox
    @property
    def has_sandbox(self) -> bool:
        return self._factory is not None

    @property
    def sandbox_opened(self) -> bool:
        return self._sandbox is not None

    @property
    def sandbox(self) -> Any:
        """The episode's sandbox, opened and set up on first use (None without a factory)."""
        if self._sandbox is None and self._factory is not None:
            cm = self._factory()
            sb = cm.__enter__()
            self._cm, self._sandbox = cm, sb
            if self._setup is not None:
                self._setup(sb)
        return self._sandbox

    def close(self) -> None:
        cm, self._cm, self._sandbox = self._cm, None, None
        if cm is not None:
            cm.__exit__(None, None, None)

    # ------------------------------------------------------------------ protocol
    def reset(self) -> Observation:
        return Observation(messages=tuple(self.task.prompt), tools=self.specs)

    def step(self, action: Completion) -> StepResult:
        if self.done:
            raise EnvError(f"step() after the episode ended on {self.task.key}")
        self.turn += 1
        parsed = parse_turn(action.text, self.specs, max_calls=self.max_calls)
        info: dict[str, Any] = {
            "format_ok": parsed.format_ok, "tool_calls": len(parsed.calls),
            "malformed_calls": parsed.malformed, "invalid_calls": parsed.invalid_calls,
            "tool_calls_valid": not parsed.errors and not parsed.invalid_calls,
            "tool_errors": 0, "final": parsed.is_final,
        }
        messages: list[dict[str, Any]] = []
        if parsed.is_final and self.require_answer and parsed.answer is None:
            messages.append({"role": "tool", "name": "format_error", "content":
                             "error: no tool call and no <answer>...</answer>; the episode goes on"})
            info["malformed_calls"] += 1
            info["final"] = False
            if self.turn >= self.max_turns:
                self.done = True
                info["max_turns"] = True
        elif parsed.is_final:
            self.answer = parsed.final_answer()
            self.done = True
        else:
            if parsed.errors:
                messages.append(error_message(parsed.errors))
            for call in parsed.calls:
                msg = self._run_call(call)
                info["tool_errors"] += int(not self.calls[-1].ok)
                messages.append(msg)
            if self.turn >= self.max_turns:
                self.done = True
                info["max_turns"] = True
        reward = self._process_reward(info)
        obs = None if self.done else Observation(messages=tuple(messages))
        return StepResult(observation=obs, reward=reward, done=self.done, info=info)

    def verify(self, trajectory: Trajectory) -> Score:
        try:
            score = self._verifier(self, trajectory)
        except Exception as exc:  # the verifier boundary: record, never propagate
            return Score.failure(exc, self.verifier_version)
        if not isinstance(score, Score):
            return Score.failure(VerifierError(f"verifier returned {type(score).__name__}, not Score"),
                                 self.verifier_version)
        return score

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_state(self) -> dict[str, Any]:
        """Everything ``step``/``verify`` read that earlier turns changed: the tool records,
        the answer, the domain's own ``state``, and the sandbox's ``/work`` when it was opened
        (:mod:`posttrain.envs.sandbox_files`). Picklable; the episode engine saves it."""
        from .sandbox_files import export_work

        return {"turn": self.turn, "done": self.done, "answer": self.answer,
                "calls": copy.deepcopy(self.calls), "checkpoints": dict(self.checkpoints),
                "state": copy.deepcopy(self.state),
                "work": export_work(self._sandbox) if self._sandbox is not None else None}

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Continue from :meth:`checkpoint_state` on a fresh env of the same task (its sandbox,
        if one was open, is opened and set up, then its ``/work`` replaced by the saved one)."""
        from .sandbox_files import import_work

        self.turn, self.done, self.answer = saved["turn"], saved["done"], saved["answer"]
        self.calls = copy.deepcopy(saved["calls"])
        self.checkpoints = dict(saved["checkpoints"])
        self.state = copy.deepcopy(saved["state"])
        if saved["work"] is not None:
            import_work(self.sandbox, saved["work"])

    # ------------------------------------------------------------------ internals
    def _run_call(self, call: Any) -> dict[str, Any]:
        if not call.valid:
            self.calls.append(CallRecord(self.turn, call.name, dict(call.arguments), False, False,
                                         call.error))
            return {"role": "tool", "name": call.name, "content": f"error: {call.error}"}
        tool = self.tools[call.name]
        try:
            result = tool(self.sandbox, **dict(call.arguments))
            content, ok = str(getattr(result, "content", "")), bool(getattr(result, "ok", False))
            data = dict(getattr(result, "data", None) or {})
        except Exception as exc:  # a tool failure is an observation, not a crash
            content, ok, data = f"error: {type(exc).__name__}: {exc}", False, {}
        self.calls.append(CallRecord(self.turn, call.name, dict(call.arguments), True, ok,
                                     content, data))
        return {"role": "tool", "name": call.name, "content": clip(content, self.max_output_chars)}

    def _process_reward(self, info: dict[str, Any]) -> float:
        if self._process is None:
            return 0.0
        try:
            return float(self._process(self))
        except Exception as exc:  # a broken checkpoint must not end the episode
            info["process_reward_error"] = f"{type(exc).__name__}: {exc}"[:200]
            return 0.0


# --------------------------------------------------------------------- shared sandbox pool
_POOL: Any = None
LEASE_TIMEOUT_S = 300.0
_POOL_LOCK = threading.Lock()


def shared_pool() -> Any:
    """This process's sandbox pool for episodes and verification (closed at exit).

    The pool a run installed with :func:`use_pool` when there is one; otherwise a default one
    made on first use. Sandboxes are created on demand and recycled (reset to their clean
    snapshot) on release, so a lease is a few milliseconds once warm. Commands of the default
    pool get a 10 s wall/CPU budget.
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or getattr(_POOL, "_closed", False):  # closed by its owner: a new one
            from posttrain.sandbox import SandboxPool, Timeouts

            _POOL = SandboxPool(max_total=16, warm=0,
                                timeouts=Timeouts(wall_s=10.0, cpu_s=10.0, create_s=60.0))
            atexit.register(_POOL.close)
        return _POOL


@contextmanager
def use_pool(pool: Any) -> Iterator[Any]:
    """Make ``pool`` the one every domain's episodes and verifiers lease from, for a run.

    The caller owns the pool (its size, backend and limits) and closes it; the previous pool
    is restored afterwards. Engines admit at most ``EpisodeLimits.max_sandbox_episodes``
    sandboxed episodes at once: give the pool at least twice that many sandboxes.
    """
    global _POOL
    with _POOL_LOCK:
        before, _POOL = _POOL, pool
    try:
        yield pool
    finally:
        with _POOL_LOCK:
            _POOL = before


def pool_lease(limits: Mapping[str, Any] | None = None) -> SandboxFactory:
    """A sandbox factory leasing clean sandboxes (empty ``/work``) from :func:`shared_pool`."""
    def factory() -> ContextManager[Any]:
        from posttrain.sandbox import Limits

        # a bounded wait: a pool too small for the run fails the episode (an infrastructure
        # error the scheduler retries) instead of hanging it
        return shared_pool().lease(limits=Limits.from_mapping(limits) if limits else None,
                                   timeout=LEASE_TIMEOUT_S)

    return factory
