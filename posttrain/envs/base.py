"""The TaskEnv protocol and the single-turn environment.

A TaskEnv wraps one Task for one episode:
- ``reset() -> Observation``: the first observation (chat messages, tool specs, images);
- ``step(action) -> StepResult``: one policy turn; ``reward`` is a *process* reward (0 where
  none), ``done`` ends the episode;
- ``verify(trajectory) -> Score``: the outcome verifier, run after the episode.

Methods may be sync or async; :func:`call_maybe_async` lets the agent loop accept both.

:class:`SingleTurnEnv` is the env of every single-turn domain: the first action ends the
episode and the verifier scores the final answer text; a visual task's images
(``public["images"]``, see :func:`task_images`) go with its first observation. Its ``verify`` never raises: a
crashing scorer gives a Score with ``error`` set (DESIGN.md §3).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Protocol, runtime_checkable

from posttrain.core.errors import EnvError, VerifierError
from posttrain.core.types import Completion, Observation, Score, StepResult, Task, Trajectory


@runtime_checkable
class TaskEnv(Protocol):
    task: Task

    def reset(self) -> Observation: ...

    def step(self, action: Completion) -> StepResult: ...

    def verify(self, trajectory: Trajectory) -> Score: ...


def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn``; if it returns an awaitable, run it to completion (outside a running loop)."""
    out = fn(*args)
    if inspect.isawaitable(out):
        return asyncio.run(_await(out))
    return out


async def _await(x: Any) -> Any:
    return await x


def task_images(task: Task) -> tuple[str, ...]:
    """The images a visual task shows with its prompt: ``public["images"]``, base64 PNG strings
    (none for text tasks). A malformed value is an :class:`EnvError` naming the task."""
    images = task.public.get("images", ())
    if not isinstance(images, (list, tuple)) or not all(isinstance(i, str) for i in images):
        raise EnvError(f"{task.key}: public['images'] must be a list of base64 PNG strings")
    return tuple(images)


def final_answer(trajectory: Trajectory) -> str:
    """The text of the last action of an episode ("" when the policy never acted)."""
    return trajectory.turns[-1].action.text if trajectory.turns else ""


def safe_score(scorer: Callable[[Task, str], Score], task: Task, answer: str,
               verifier_version: str = "") -> Score:
    """Run a scorer; a crash or a non-Score result becomes a Score with ``error`` set."""
    try:
        score = scorer(task, answer)
    except Exception as exc:  # the verifier boundary: record, never propagate
        return Score.failure(exc, verifier_version)
    if not isinstance(score, Score):
        return Score.failure(VerifierError(f"scorer returned {type(score).__name__}, not Score"),
                             verifier_version)
    return score


class SingleTurnEnv:
    """One prompt, one answer; the outcome verifier scores the answer text."""

    def __init__(self, task: Task, scorer: Callable[[Task, str], Score], verifier_version: str = ""):
        self.task = task
        self._scorer = scorer
        self._verifier_version = verifier_version
        self._done = False

    def reset(self) -> Observation:
        self._done = False
        return Observation(messages=tuple(self.task.prompt), images=task_images(self.task))

    def step(self, action: Completion) -> StepResult:
        if self._done:
            raise EnvError(f"step() after the episode ended on {self.task.key}")
        self._done = True
        return StepResult(observation=None, reward=0.0, done=True)

    def verify(self, trajectory: Trajectory) -> Score:
        return safe_score(self._scorer, self.task, final_answer(trajectory), self._verifier_version)
