"""The records that flow through posttrain (DESIGN.md §3).

Task → Observation → Completion (the action) → StepResult → Trajectory → TrajectoryGroup,
and the Score a verifier gives a trajectory.

Guarantees:
- every record is a frozen dataclass, picklable, and round-trips through JSON with
  ``to_dict``/``from_dict`` (see :mod:`posttrain.core.serde`);
- ``Score.value`` is always a finite number in [0, 1]: out-of-range values are clipped and
  the clipping is said in ``reason``; a non-finite value becomes 0 with a typed error;
- a Task's ``hidden`` part (hidden tests, reference answers) is never in ``public_view()``,
  which is all a policy or a ``domains sample`` call ever sees.

Messages are plain chat dicts (``{"role": ..., "content": ...}``) so any chat template and
any OpenAI-compatible server can consume them unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from .errors import ErrorInfo

Message = Mapping[str, Any]


@dataclass(frozen=True)
class Task:
    """One generated problem. ``public`` may be shown to the policy; ``hidden`` never is."""

    domain: str
    seed: int
    difficulty: int
    prompt: tuple[Message, ...]
    public: Mapping[str, Any] = field(default_factory=dict)
    hidden: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Stable identity of the task: domain, difficulty and seed."""
        return f"{self.domain}/d{self.difficulty}/s{self.seed}"

    def public_view(self) -> dict[str, Any]:
        """The task as the policy may see it: everything except ``hidden``."""
        return {
            "domain": self.domain,
            "seed": self.seed,
            "difficulty": self.difficulty,
            "prompt": [dict(m) for m in self.prompt],
            "public": dict(self.public),
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class Observation:
    """What the policy sees before a turn: chat messages, tool specs, optional images (PNG bytes, base64)."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    images: tuple[str, ...] = ()


@dataclass(frozen=True)
class Completion:
    """One sampled continuation: text, token ids and the behaviour policy's per-token logprobs.

    ``logprobs_T`` has one entry per id in ``token_ids_T``; ``policy_version`` is the weight
    version that sampled it (used for staleness bounds and importance sampling).
    ``prompt_images``: the base64 PNGs of the prompt, in the order the backend's processor
    read them (a vision backend sets it; the trainer feeds the same pixels back).
    """

    text: str
    token_ids_T: tuple[int, ...] = ()
    logprobs_T: tuple[float, ...] = ()
    finish_reason: str = "stop"  # "stop" | "length" | "error"
    policy_version: int = 0
    prompt_token_ids: tuple[int, ...] = ()
    prompt_images: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.token_ids_T) != len(self.logprobs_T):
            raise ValueError(
                f"Completion has {len(self.token_ids_T)} token ids but {len(self.logprobs_T)} logprobs"
            )


# The policy's action in a turn is the completion it sampled.
Action = Completion


@dataclass(frozen=True)
class StepResult:
    """Result of one ``TaskEnv.step``: next observation (None when done), process reward, done flag."""

    observation: Observation | None
    reward: float = 0.0
    done: bool = True
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Score:
    """The outcome verifier's verdict on a trajectory.

    ``components`` maps a name to ``(value, weight)``; ``value`` is the reward in [0, 1].
    A Score with ``error`` set means the verifier failed: it is excluded from the loss and
    counted, never silently a 0 reward.
    """

    value: float
    components: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    passed: int | None = None
    total: int | None = None
    reason: str = ""
    error: ErrorInfo | None = None
    verifier_version: str = ""

    def __post_init__(self) -> None:
        v = self.value
        try:
            v = float(v)
        except (TypeError, ValueError):
            v = float("nan")
        if not math.isfinite(v):
            if self.error is None:
                object.__setattr__(
                    self, "error", ErrorInfo("verifier", f"non-finite score value {self.value!r}")
                )
            object.__setattr__(self, "value", 0.0)
            return
        if v < 0.0 or v > 1.0:
            clipped = min(1.0, max(0.0, v))
            note = f"value {v:g} clipped to {clipped:g}"
            object.__setattr__(self, "reason", f"{self.reason}; {note}" if self.reason else note)
            v = clipped
        object.__setattr__(self, "value", v)

    @property
    def ok(self) -> bool:
        """True when the verifier ran without error (the value is meaningful)."""
        return self.error is None

    @classmethod
    def failure(cls, exc: BaseException, verifier_version: str = "") -> "Score":
        """A Score recording that the verifier itself failed."""
        return cls(0.0, reason="verifier error", error=ErrorInfo.from_exception(exc),
                   verifier_version=verifier_version)

    @classmethod
    def weighted(cls, components: Mapping[str, tuple[float, float]], **kw: Any) -> "Score":
        """Score whose value is the weight-normalised sum of its components."""
        total_w = sum(w for _, w in components.values())
        value = sum(v * w for v, w in components.values()) / total_w if total_w > 0 else 0.0
        return cls(value, components=dict(components), **kw)


@dataclass(frozen=True)
class Turn:
    """One policy turn: what it saw, what it did, the process reward and what the env said."""

    observation: Observation
    action: Completion
    reward: float = 0.0
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def policy_version(self) -> int:
        return self.action.policy_version


@dataclass(frozen=True)
class Trajectory:
    """A whole episode on one task. Failures are recorded here; they never sink the group."""

    task: Task
    turns: tuple[Turn, ...] = ()
    score: Score | None = None
    stop_reason: str = "done"  # done | max_turns | max_tokens | timeout | error
    error: ErrorInfo | None = None
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def reward(self) -> float:
        """Outcome reward (0 when unscored)."""
        return self.score.value if self.score is not None else 0.0

    @property
    def policy_versions(self) -> tuple[int, ...]:
        return tuple(t.policy_version for t in self.turns)

    @property
    def num_action_tokens(self) -> int:
        return sum(len(t.action.token_ids_T) for t in self.turns)

    @property
    def usable(self) -> bool:
        """Whether this trajectory may enter the loss (scored, no verifier/infra error)."""
        return self.error is None and self.score is not None and self.score.ok

    def with_score(self, score: Score) -> "Trajectory":
        return replace(self, score=score)


@dataclass(frozen=True)
class TrajectoryGroup:
    """G trajectories of one task, the unit of group-relative advantages."""

    task: Task
    trajectories: tuple[Trajectory, ...]
    policy_version: int = 0

    @property
    def rewards_G(self) -> list[float]:
        return [t.reward for t in self.trajectories]
