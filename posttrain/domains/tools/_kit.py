"""The kit of the simulated-API ``tools`` domains: a plan → task → env → score pipeline.

What it is: :class:`ApiDomain`, a record (composed, not subclassed: DESIGN.md §8) of a
domain's own functions — ``tools(state) -> list[FunctionTool]`` (the simulated API, pure
Python over a dict) and ``plan(rng, difficulty) -> Plan`` (the prompt, the hidden initial
state, the reference calls turn by turn, the reference answer), plus optional ``project``,
``answer_score``, ``extra_probes`` and a whole ``verify`` where the family's rule is not
enough. ``generate`` *executes* the reference calls on a copy of the state, so the expected
final state is what the API itself produces (no second implementation of the rules to drift
out of sync), and stores it in ``task.hidden``.

Scoring (the family's rule, :func:`posttrain.domains.tools._api.outcome`): validity² ×
(0.3·calls + 0.7·result·precision²·[all expected calls made]), where ``result`` is the
answer (``result="answer"``), the final state (``"state"``: the env's state after the
episode, compared with the expected one through ``project``), or their mean (``"both"``).

Probes every such domain gets (each must score ≤ 0.05): ``answer_without_calls``,
``empty_args`` (every function with ``{}``), ``every_function`` (every function once with
type-default arguments), ``hallucinated_function``, ``repeat_first_call`` (the first expected
call 16 times), ``spam_calls`` (the expected calls hidden among ≥ 5× as many wrong ones).

What it does not do: partial credit inside one call's arguments (a call matches exactly or
not), or tolerance for numerically equal but differently typed arguments (``21`` vs ``21.0``).
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import format_answer, format_call, format_calls, spec_name, spec_parameters
from posttrain.verifiers.text import normalize_text, parse_number

from ._api import FunctionTool, call_score, outcome, reference_episode, spam_probe, tool_env

Call = tuple[str, dict[str, Any]]
FORMAT = ("Call functions as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call> "
          "(several per turn allowed); give the final reply as <answer>...</answer>.")


@dataclass(frozen=True)
class Plan:
    """What a generator decides: the prompt, hidden state, reference calls per turn, answer."""

    prompt: str
    world: dict[str, Any]
    turns: list[list[Call]]
    answer: str
    public: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # more hidden data for the verifier


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def number_score(got: str | None, expected: str, tol: float = 0.011) -> float:
    """1 when ``got`` is one number within ``tol`` of ``expected``."""
    v = parse_number(got or "")
    return 1.0 if v is not None and abs(v - float(expected)) <= tol else 0.0


def set_score(got: str | None, expected: str) -> float:
    """1 when the comma-separated items of ``got`` equal those of ``expected`` as sets."""
    items = lambda s: {normalize_text(x) for x in (s or "").split(",") if x.strip()}  # noqa: E731
    return 1.0 if items(got) == items(expected) else 0.0


def junk_args(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Schema-typed default arguments (what a policy calling everything blindly would send)."""
    defaults = {"string": "x", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    props = spec_parameters(spec).get("properties") or {}
    return {k: (p["enum"][0] if "enum" in p else defaults.get(p.get("type"), "x")) for k, p in props.items()}


def exact_text(task: Task, got: str | None) -> float:
    """1 when the answer equals the reference answer (normalised text)."""
    return 1.0 if normalize_text(got or "") == normalize_text(task.hidden["answer_value"]) else 0.0


def turns(task: Task) -> list[list[Call]]:
    """The reference calls of ``task``, turn by turn."""
    return [[(n, a) for n, a in t] for t in task.hidden["turns"]]


def _whole(state: dict[str, Any]) -> Any:
    return state


def _no_probes(task: Task) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ApiDomain:
    """One simulated-API domain assembled from its functions (see the module docstring).

    ``verify(env, trajectory) -> Score`` replaces the family's rule when given; ``result``
    says what the rule compares (``"answer"``, ``"state"`` through ``project``, or ``"both"``);
    ``ordered``: expected calls matched in order; ``description``: the defining module's
    docstring (what ``domains list`` shows).
    """

    id: str
    tools: Callable[[dict[str, Any]], list[FunctionTool]]
    plan: Callable[[random.Random, int], Plan]
    description: str = ""
    project: Callable[[dict[str, Any]], Any] = _whole
    answer_score: Callable[[Task, str | None], float] = exact_text
    extra_probes: Callable[[Task], dict[str, Any]] = _no_probes
    verify: Callable[[Any, Any], Any] | None = None
    ordered: bool = False
    result: str = "answer"
    need_all_calls: bool = True
    max_turns: int = 12
    family: str = "tools"
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "tool"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        p = self.plan(rng, difficulty)
        state = copy.deepcopy(p.world)
        by_name = {t.name: t for t in self.tools(state)}
        for turn in p.turns:
            for name, args in turn:
                by_name[name](None, **args)
        calls = [{"name": n, "arguments": a} for turn in p.turns for n, a in turn]
        hidden = {"world": p.world, "calls": calls, "turns": [[[n, a] for n, a in t] for t in p.turns],
                  "answer_value": p.answer, "final": self.project(state), **p.extra}
        names = [t.name for t in self.tools(copy.deepcopy(p.world))]
        prompt = f"{p.prompt}\nFunctions: {', '.join(names)}. {FORMAT}"
        return make_task(self.id, difficulty, prompt, public=p.public, hidden=hidden,
                         metadata={"calls": len(calls)})

    def make_env(self, task: Task):
        state = copy.deepcopy(task.hidden["world"])
        return tool_env(task, self.tools(state), self.verify or self._rule, state, self.max_turns,
                        self.id)

    def _rule(self, env, trajectory):
        task = env.task
        m = call_score(env, task.hidden["calls"], ordered=self.ordered)
        parts: dict[str, float] = {}
        if self.result in ("state", "both"):
            parts["state_ok"] = 1.0 if same(self.project(env.state), task.hidden["final"]) else 0.0
        if self.result in ("answer", "both"):
            parts["answer_ok"] = self.answer_score(task, env.answer)
        res = sum(parts.values()) / len(parts)
        return outcome(self.id, m, res, "result", need_all_calls=self.need_all_calls, extra=parts)

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["answer_value"])

    def reference_actions(self, task: Task) -> list[str]:
        return reference_episode(turns(task), task.hidden["answer_value"])

    def probes(self, task: Task) -> dict[str, Any]:
        ans = task.hidden["answer_value"]
        flat = [c for t in turns(task) for c in t]
        specs = [t.spec for t in self.tools(copy.deepcopy(task.hidden["world"]))]
        names = [spec_name(s) for s in specs]
        chunks = lambda cs: [format_calls(*cs[i:i + 8]) for i in range(0, len(cs), 8)]  # noqa: E731
        out = {
            "answer_without_calls": format_answer(ans),
            "empty_args": chunks([(n, {}) for n in names]) + [format_answer(ans)],
            "every_function": chunks([(spec_name(s), junk_args(s)) for s in specs]) + [format_answer(ans)],
            "hallucinated_function": [format_call("do_task", {"request": "all"}), format_answer(ans)],
            "repeat_first_call": chunks([flat[0]] * 16) + [format_answer(ans)],
            "spam_calls": spam_probe([], flat, ans, n=max(24, 5 * len(flat))),
        }
        out.update(self.extra_probes(task))
        return out


def chunk(calls: Sequence[Call], n: int = 8) -> list[list[Call]]:
    """Calls split into turns of at most ``n`` (the env's per-turn limit is 8)."""
    return [list(calls[i:i + n]) for i in range(0, len(calls), n)]


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def minutes(text: str) -> int:
    h, m = text.split(":")
    return int(h) * 60 + int(m)


def tool(name: str, description: str, props: Mapping[str, Any], fn: Any, state: dict[str, Any],
         required: Sequence[str] | None = None) -> FunctionTool:
    return FunctionTool(name, description, props, fn, state, required)


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
