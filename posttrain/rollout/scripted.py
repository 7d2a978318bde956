"""A scripted policy: replays given action texts through the one episode engine.

What it is: :class:`ScriptedPolicy` is an :class:`~posttrain.inference.base.InferenceBackend`
whose "sampling" returns the next action of a script — ``script(task) -> list[str]`` — so a
reference trajectory, an exploit probe or a deliberately wrong policy is played by exactly
the engine that training and evaluation use (:func:`replay`). The conformance checker, the
stored-probe check and the cross-engine tests all play episodes this way.

How it finds its place: a prompt is matched to its task by the task's prompt messages (the
engine never drops them), and the turn index is the number of assistant messages in the
prompt plus the turns a context summary says it removed
(:data:`~posttrain.rollout.context.SUMMARY_TAG`). After the script's last action it answers
with an empty turn (which ends a tool episode as a final answer).

Guarantees: deterministic; ``n`` samples per prompt are ``n`` copies of the scripted action;
completions carry no token ids (their text is the action), ``finish_reason`` ``stop`` and the
policy's ``policy_version``. Two tasks with the same prompt messages but different scripts
are refused (an ambiguous replay would be silently wrong).

Not for training: there are no logprobs to learn from.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.errors import InferenceError
from posttrain.core.images import content_text
from posttrain.core.types import Completion, Score, Task, Trajectory
from posttrain.inference.base import SamplingParams

from .context import SUMMARY_TAG
from .engine import play_groups
from .episode import EpisodeLimits

Script = Callable[[Task], Sequence[str]]
_REMOVED = re.compile(re.escape(SUMMARY_TAG) + r" (\d+) earlier turn")


def _key(messages: Sequence[Mapping[str, Any]]) -> str:
    # text only: the engine turns an observation's images into parts of its newest message,
    # which the task's own prompt messages do not hold
    return json.dumps([{"role": m.get("role"), "content": content_text(m.get("content"))}
                       for m in messages], sort_keys=True, default=str)


def _turn_index(prompt: Sequence[Mapping[str, Any]], start: int) -> int:
    rest = prompt[start:]
    removed = 0
    for m in rest:
        hit = _REMOVED.match(str(m.get("content") or ""))
        if m.get("role") == "user" and hit:
            removed = int(hit.group(1))
    return removed + sum(1 for m in rest if m.get("role") == "assistant")


class ScriptedPolicy:
    """Replays ``script(task)`` for the tasks it was given (see the module docstring)."""

    tokenizer = None
    vision = True  # reads image parts (posttrain/inference/vision.py)

    def __init__(self, tasks: Sequence[Task], script: Script, policy_version: int = 0):
        self.policy_version = policy_version
        self._scripts: dict[str, tuple[int, list[str]]] = {}
        for task in tasks:
            key, actions = _key(task.prompt), [str(a) for a in script(task)]
            known = self._scripts.get(key)
            if known is not None and known[1] != actions:
                raise InferenceError(f"tasks with the same prompt have different scripts ({task.key})")
            self._scripts[key] = (len(task.prompt), actions)

    def _action(self, prompt: Sequence[Mapping[str, Any]]) -> str:
        for size in sorted({s for s, _ in self._scripts.values()}, reverse=True):
            hit = self._scripts.get(_key(prompt[:size]))
            if hit is not None:
                actions = hit[1]
                t = _turn_index(prompt, size)
                return actions[t] if t < len(actions) else ""
        raise InferenceError("scripted policy: prompt of an unknown task")

    def generate(self, prompts: Sequence[Sequence[Mapping[str, Any]]],
                 params: SamplingParams) -> list[list[Completion]]:
        out = []
        for prompt in prompts:
            text = self._action(list(prompt))
            out.append([Completion(text=text, finish_reason="stop",
                                   policy_version=self.policy_version) for _ in range(params.n)])
        return out

    def load_weights(self, version: int, weights: Any) -> None:
        self.policy_version = version


def replay_groups(tasks: Sequence[Task], script: Script, *, n: int = 1,
                  limits: EpisodeLimits | None = None, make_env: Any = None,
                  ) -> list[Any]:
    """``n`` scripted episodes per task through the engine; one group per task."""
    params = SamplingParams(n=n, max_new_tokens=1 << 20)
    groups, _ = play_groups(ScriptedPolicy(tasks, script), tasks, params, limits=limits,
                            make_env=make_env)
    return groups


def replay(domain: Any, task: Task, actions: Sequence[str],
           limits: EpisodeLimits | None = None) -> Trajectory:
    """One scripted episode of ``task`` under ``domain`` (the domain object, not its id)."""
    from posttrain.envs.factory import make_env

    return replay_groups([task], lambda _t: list(actions), limits=limits,
                         make_env=lambda t: make_env(domain, t))[0].trajectories[0]


def replay_score(domain: Any, task: Task, actions: Sequence[str] | str,
                 limits: EpisodeLimits | None = None) -> Score:
    """The outcome Score of a scripted episode (a string is a one-action episode).

    A trajectory that failed before verification gives a Score with its error, so callers
    always get a Score."""
    acts = [actions] if isinstance(actions, str) else list(actions)
    traj = replay(domain, task, acts, limits)
    if traj.score is not None:
        return traj.score
    err = traj.error
    return replace(Score(0.0, reason=f"not scored: {err.message[:200] if err else 'no score'}"),
                   error=err)
