"""Shared machinery of the ``tools`` family: simulated functions, their env, and call scoring.

What it is:
- :class:`FunctionTool` — a tool given as an OpenAI function spec whose body is a Python
  function over the episode's private ``state`` (a dict built from the task's *hidden* data,
  so the policy can learn values only by calling); same interface as :mod:`posttrain.tools`
  (``name``, ``spec``, ``__call__(sandbox, **arguments) -> result``);
- :func:`tool_env` — a :class:`~posttrain.envs.tool_env.ToolEnv` without a sandbox;
- :func:`call_score` — how well the calls made match the expected calls.

Scoring (every domain of the family): over the *valid* calls, recall = expected calls made
(name and arguments exactly equal; in order where the domain says order matters) / expected,
precision = matched / valid calls made, ``calls = recall × precision²``; ``validity`` = the
fraction of attempted calls that were well-formed and schema-valid. Then::

    value = validity² × (0.3 · calls + 0.7 · result · precision² · [recall = 1])

where ``result`` is the domain's outcome (the final answer, or the final state). The outcome
only counts once every call that reveals it was made — a correct answer without the calls is
a guess or a leak, not tool use — and spamming calls or invalid calls cost quadratically
(three candidates per needed call keep at most 1/9). Stateful domains whose outcome is the
final state itself may drop the recall gate (the state cannot be right without the work).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task, Trajectory
from posttrain.envs.tool_env import ToolEnv


@dataclass(frozen=True)
class Result:
    """A tool result (same fields as ``posttrain.tools.ToolResult``)."""

    content: str
    ok: bool = True
    data: Mapping[str, Any] = field(default_factory=dict)


class FunctionTool:
    """A simulated function: ``fn(state, **arguments) -> value`` (raise ``ValueError`` = error)."""

    def __init__(self, name: str, description: str, properties: Mapping[str, Any],
                 fn: Callable[..., Any], state: dict[str, Any], required: Sequence[str] | None = None):
        self.name = name
        self.spec = spec(name, description, properties, required)
        self._fn, self._state = fn, state

    def __call__(self, sandbox: Any, **arguments: Any) -> Result:
        try:
            value = self._fn(self._state, **arguments)
        except ValueError as exc:
            return Result(f"error: {exc}", ok=False)
        return Result(json.dumps(value), ok=True, data={"value": value})


def spec(name: str, description: str, properties: Mapping[str, Any],
         required: Sequence[str] | None = None) -> dict[str, Any]:
    """An OpenAI function-calling spec with strict parameters."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": dict(properties),
                       "required": list(required if required is not None else properties),
                       "additionalProperties": False}}}


def tool_env(task: Task, tools: Sequence[FunctionTool], verifier: Callable[[ToolEnv, Trajectory], Score],
             state: dict[str, Any], max_turns: int, version: str) -> ToolEnv:
    return ToolEnv(task, tools, None, verifier, max_turns=max_turns, state=state,
                   verifier_version=version)


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass(frozen=True)
class CallMatch:
    """How the valid calls made compare with the expected ones."""

    recall: float  # expected calls made / expected
    precision: float  # matched / valid calls made
    validity: float  # valid calls / attempted calls (1 when none attempted)

    @property
    def calls(self) -> float:
        return self.recall * self.precision ** 2


def call_score(env: ToolEnv, expected: Sequence[Mapping[str, Any]], *, ordered: bool) -> CallMatch:
    """Match the env's calls against ``expected`` ([{name, arguments}]), in order or not."""
    attempted = len(env.calls)
    valid = [c for c in env.calls if c.valid]
    validity = len(valid) / attempted if attempted else 1.0
    if not valid or not expected:
        return CallMatch(0.0, 0.0, validity)
    matched = 0
    if ordered:  # greedy in-order match of the expected sequence
        j = 0
        for c in valid:
            if j < len(expected) and c.name == expected[j]["name"] and _same(c.arguments, expected[j]["arguments"]):
                matched, j = matched + 1, j + 1
    else:
        left = list(expected)
        for c in valid:
            for k, e in enumerate(left):
                if c.name == e["name"] and _same(c.arguments, e["arguments"]):
                    matched += 1
                    left.pop(k)
                    break
    return CallMatch(matched / len(expected), matched / len(valid), validity)


CALLS_WEIGHT, RESULT_WEIGHT = 0.3, 0.7


def outcome(version: str, m: CallMatch, result: float, name: str, *, need_all_calls: bool = True,
            extra: Mapping[str, float] | None = None) -> Score:
    """validity² × (0.3·calls + 0.7·result·precision²·[all expected calls made])."""
    gate = 1.0 if (m.recall >= 1.0 or not need_all_calls) else 0.0
    res = result * gate * m.precision ** 2
    value = m.validity ** 2 * (CALLS_WEIGHT * m.calls + RESULT_WEIGHT * res)
    comps = {"calls": (m.calls, CALLS_WEIGHT), name: (res, RESULT_WEIGHT),
             "validity": (m.validity, 0.0), "recall": (m.recall, 0.0),
             "precision": (m.precision, 0.0), **{k: (v, 0.0) for k, v in (extra or {}).items()}}
    return Score(value, components=comps, verifier_version=version,
                 reason=f"calls {m.calls:.2f} (recall {m.recall:.2f}, precision {m.precision:.2f}), "
                        f"{name} {result:.2f}, validity {m.validity:.2f}")


def reference_episode(turns: Sequence[Sequence[tuple[str, Mapping[str, Any]]]], answer: str) -> list[str]:
    from posttrain.envs.tool_env import format_answer, format_calls

    return [format_calls(*t) for t in turns] + [format_answer(answer)]


def exact_answer(env: ToolEnv, expected: str) -> float:
    from posttrain.verifiers.text import normalize_text

    got = env.answer if env.answer is not None else ""
    return 1.0 if normalize_text(got) == normalize_text(expected) else 0.0


def spam_probe(env_tools: Sequence[dict[str, Any]], expected: Sequence[tuple[str, Mapping[str, Any]]],
               answer: str, n: int = 24) -> list[str]:
    """The expected calls hidden among ``n`` plausible wrong ones, then the right answer."""
    from posttrain.envs.tool_env import format_answer, format_calls

    calls = list(expected)
    k = 0
    while len(calls) < n:
        name, args = expected[k % len(expected)]
        wrong = {key: (f"{v}x" if isinstance(v, str) else v + 1 + k if isinstance(v, (int, float))
                       and not isinstance(v, bool) else v) for key, v in args.items()}
        calls.insert(k % (len(calls) + 1), (name, wrong))
        k += 1
    turns = [format_calls(*calls[i:i + 8]) for i in range(0, len(calls), 8)]
    return turns + [format_answer(answer)]
