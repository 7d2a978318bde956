"""Learned reward models beside the verifiers: ``batch_evaluate`` over reward sources.

What it is:
- a :class:`RewardSource` scores a batch of finished trajectories: :class:`EnvScore` is the
  Score the episode engine already got from ``env.verify`` on the live env (verification is
  never re-run on a fresh env), :class:`SequenceClassifierReward` scores ``prompt + final
  answer`` with any local Hugging Face sequence-classification model, in padded batches of
  ``batch_size``;
- :func:`batch_evaluate` runs every source over the batch and combines them per trajectory
  (one source: its Score; several: a weighted Score whose ``components`` name each source).

Guarantees: one Score per trajectory, in order, whatever fails — a reward model that raises
gives a Score with ``error`` set (excluded from the loss, counted), never an exception and
never a silent 0; a trajectory that already failed (``error`` set, no turns, no score) is
not scored and gets a failure Score naming its own error; values stay in [0, 1] (a reward
model's logit is squashed with a sigmoid unless ``squash="clip"``).

Sources are built by name from :data:`REWARD_SOURCES` (a
:class:`~posttrain.core.registry.Registry`, entry-point group ``posttrain.reward_sources``):
``make_reward_source("sequence_classifier", path=...)``; a package adds its own kind there.

Not done here: running verifiers (the episode engine does, on the env that was stepped).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, Sequence, runtime_checkable

from posttrain.core.errors import ErrorInfo, RegistryError, VerifierError
from posttrain.core.registry import Registry
from posttrain.core.types import Score, Trajectory
from posttrain.envs.base import final_answer


@runtime_checkable
class RewardSource(Protocol):
    name: str

    def score_batch(self, trajectories: Sequence[Trajectory]) -> list[Score]: ...


def _precheck(traj: Trajectory) -> Score | None:
    """A failure Score for a trajectory that cannot be scored (it failed before verification)."""
    if traj.error is not None:
        return Score(0.0, reason=f"not scored: {traj.error.message[:200]}", error=traj.error)
    if not traj.turns:
        return Score(0.0, reason="not scored: no turns", error=ErrorInfo("env", "empty trajectory"))
    if traj.score is None:
        return Score(0.0, reason="not scored: no verifier score",
                     error=ErrorInfo("verifier", "trajectory was never verified"))
    return None


class EnvScore:
    """The outcome Score the engine got from the live env's ``verify`` (name ``verifier``)."""

    name = "verifier"

    def score_batch(self, trajectories: Sequence[Trajectory]) -> list[Score]:
        out = []
        for t in trajectories:
            early = _precheck(t)
            out.append(early if early is not None else t.score)
        return out


class SequenceClassifierReward:
    """A learned reward model: any local HF ``*ForSequenceClassification`` model, in batches."""

    def __init__(self, model: Any, tokenizer: Any, *, name: str = "reward_model", label: int = 0,
                 batch_size: int = 16, squash: str = "sigmoid", max_length: int | None = None):
        if squash not in ("sigmoid", "clip"):
            raise ValueError(f"squash must be 'sigmoid' or 'clip', got {squash!r}")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.name, self.label, self.batch_size = name, label, max(1, batch_size)
        self.squash, self.max_length = squash, max_length
        if getattr(model.config, "pad_token_id", None) is None:
            # the classifier pools the last non-pad token: it must know which id is padding
            model.config.pad_token_id = tokenizer.pad_token_id

    @classmethod
    def from_pretrained(cls, path: str, **kw: Any) -> "SequenceClassifierReward":
        """Load a local folder (never a hub download)."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        return cls(model, tok, **kw)

    def text_of(self, traj: Trajectory) -> str:
        prompt = "\n".join(str(m.get("content", "")) for m in traj.task.prompt)
        return f"{prompt}\n{final_answer(traj)}"

    def _logits(self, texts: list[str]) -> list[float]:
        import torch

        enc = self.tokenizer(texts, padding=True, truncation=self.max_length is not None,
                             max_length=self.max_length, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
        return [float(x) for x in logits[:, self.label].float()]

    def _value(self, logit: float) -> float:
        if self.squash == "sigmoid":
            return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit))))
        return min(1.0, max(0.0, logit))

    def score_batch(self, trajectories: Sequence[Trajectory]) -> list[Score]:
        out: list[Score | None] = [_precheck(t) for t in trajectories]
        todo = [i for i, s in enumerate(out) if s is None]
        for start in range(0, len(todo), self.batch_size):
            idx = todo[start:start + self.batch_size]
            try:
                logits = self._logits([self.text_of(trajectories[i]) for i in idx])
            except Exception as exc:  # a broken model fails its batch, recorded per trajectory
                for i in idx:
                    out[i] = Score.failure(exc, self.name)
                continue
            for i, z in zip(idx, logits):
                out[i] = Score(self._value(z), components={self.name: (self._value(z), 1.0)},
                               reason=f"logit {z:.4g}", verifier_version=self.name)
        return [s for s in out if s is not None]


def _combine(scores: Sequence[Score], sources: Sequence[tuple[RewardSource, float]]) -> Score:
    if len(scores) == 1:
        return scores[0]
    failed = [(src.name, s) for (src, _), s in zip(sources, scores) if not s.ok]
    if failed:
        name, s = failed[0]
        return Score(0.0, reason=f"{name} failed: {s.reason}", error=s.error,
                     verifier_version="+".join(src.name for src, _ in sources))
    comps = {src.name: (s.value, float(w)) for (src, w), s in zip(sources, scores)}
    return Score.weighted(comps, reason="; ".join(f"{src.name}={s.value:.3g}"
                                                  for (src, _), s in zip(sources, scores)),
                          verifier_version="+".join(src.name for src, _ in sources))


def batch_evaluate(trajectories: Sequence[Trajectory],
                   sources: Sequence[tuple[RewardSource, float]] | None = None) -> list[Score]:
    """One Score per trajectory from every ``(source, weight)`` (default: the env's Score)."""
    sources = list(sources) if sources else [(EnvScore(), 1.0)]
    per_source = []
    for src, _ in sources:
        try:
            scores = src.score_batch(trajectories)
            if len(scores) != len(trajectories):
                raise VerifierError(f"{src.name} returned {len(scores)} scores for {len(trajectories)}")
        except Exception as exc:  # a source that breaks its contract fails its batch, not the run
            scores = [Score.failure(exc, src.name) for _ in trajectories]
        per_source.append(scores)
    return [_combine([ps[i] for ps in per_source], sources) for i in range(len(trajectories))]


REWARD_SOURCES: Registry[Any] = Registry("reward_source", entry_point_group="posttrain.reward_sources",
                                         versioned=False)
REWARD_SOURCES.add("verifier", EnvScore)
REWARD_SOURCES.add("sequence_classifier", SequenceClassifierReward.from_pretrained)


def make_reward_source(kind: str, **kwargs: Any) -> RewardSource:
    """The reward source ``kind`` (an id of :data:`REWARD_SOURCES`) built from ``kwargs``."""
    if kind not in REWARD_SOURCES:
        raise RegistryError(f"unknown reward source {kind!r}; allowed: {', '.join(REWARD_SOURCES.ids())}")
    return REWARD_SOURCES.get(kind)(**kwargs)
