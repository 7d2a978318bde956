"""Direct Preference Optimisation on pairs mined from verified groups.

``pairs_from_groups`` turns each scored group into at most one pair: its best usable
trajectory (chosen) against its worst (rejected), skipping groups whose best and worst tie.
``build_dpo_batch`` lays the pairs out with the trainer's shared data path
(:mod:`posttrain.trainer.batch`): chosen trajectory ``i`` is sample ``2i``, rejected is
``2i + 1``; a sequence's logprob is the sum over its action tokens (every turn's).

Loss (Rafailov et al. 2023), with ``pi`` the policy and ``ref`` the frozen reference::

    h = (log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))
    loss = mean(-log sigmoid(beta * h))

Not here: IPO/cDPO label smoothing, length normalisation (sums, as in the paper), pairs
across groups (a pair shares its prompt by construction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
import torch.nn.functional as F

from posttrain.core.types import Trajectory, TrajectoryGroup

from .batch import PolicyBatch, pad_segments, trajectory_segments
from .logprobs import frozen_logprobs, token_logprobs


@dataclass(frozen=True)
class PreferencePair:
    chosen: Trajectory
    rejected: Trajectory
    group_index: int

    @property
    def reward_margin(self) -> float:
        return self.chosen.reward - self.rejected.reward


def pairs_from_groups(groups: Sequence[TrajectoryGroup], min_margin: float = 0.0) -> list[PreferencePair]:
    """Best-vs-worst usable trajectory per group; ties (margin <= ``min_margin``) are skipped.

    Among equal best (or equal worst) rewards the earliest trajectory is taken, so the
    result is deterministic.
    """
    pairs = []
    for gi, group in enumerate(groups):
        usable = [t for t in group.trajectories if t.usable]
        if len(usable) < 2:
            continue
        best = max(usable, key=lambda t: t.reward)  # max/min return the first of equals
        worst = min(usable, key=lambda t: t.reward)
        if best.reward - worst.reward > min_margin:
            pairs.append(PreferencePair(best, worst, gi))
    return pairs


def build_dpo_batch(pairs: Sequence[PreferencePair], pad_id: int) -> PolicyBatch:
    """A PolicyBatch whose sample ``2i`` is ``pairs[i].chosen`` and ``2i + 1`` its rejected."""
    segments, sample_ids, group_ids = [], [], []
    for i, pair in enumerate(pairs):
        for side, traj in enumerate((pair.chosen, pair.rejected)):
            for seg in trajectory_segments(traj):
                segments.append(seg)
                sample_ids.append(2 * i + side)
                group_ids.append(pair.group_index)
    tensors = pad_segments(segments, pad_id)
    n = len(segments)
    return PolicyBatch(
        **tensors,
        advantages=torch.zeros(n), group_ids=torch.tensor(group_ids, dtype=torch.long),
        sample_ids=torch.tensor(sample_ids, dtype=torch.long), sample_weights=torch.ones(n),
        global_num_samples=float(2 * len(pairs)),
        stats={"dpo/pairs": float(len(pairs)), "batch/rows": float(n)},
    )


def sequence_logprobs(logprobs: torch.Tensor, batch: PolicyBatch, num_samples: int) -> torch.Tensor:
    """Sum of action-token logprobs per sample ``[num_samples]`` (rows of a sample pooled)."""
    per_row = (logprobs * batch.action_mask.to(logprobs.dtype)).sum(1)
    return per_row.new_zeros(num_samples).index_add(0, batch.sample_ids, per_row)


def dpo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor,
             ref_chosen: torch.Tensor, ref_rejected: torch.Tensor,
             beta: float) -> tuple[torch.Tensor, dict[str, float]]:
    """The DPO loss on sequence logprobs ``[N]`` each; metrics under ``dpo/``."""
    chosen_reward = beta * (policy_chosen - ref_chosen)
    rejected_reward = beta * (policy_rejected - ref_rejected)
    margin = chosen_reward - rejected_reward
    loss = -F.logsigmoid(margin).mean()
    with torch.no_grad():
        metrics = {
            "dpo/loss": float(loss),
            "dpo/accuracy": float((margin > 0).float().mean()) if margin.numel() else 0.0,
            "dpo/margin": float(margin.mean()) if margin.numel() else 0.0,
            "dpo/chosen_reward": float(chosen_reward.mean()) if margin.numel() else 0.0,
            "dpo/rejected_reward": float(rejected_reward.mean()) if margin.numel() else 0.0,
        }
    return loss, metrics


def dpo_step(model: Any, optimizer: torch.optim.Optimizer, batch: PolicyBatch, *, beta: float,
             ref_model: Any = None, lr_scheduler: Any = None,
             grad_clip: float | None = 1.0) -> dict[str, float]:
    """One optimizer step of DPO on a :func:`build_dpo_batch` batch.

    The reference logprobs come from ``batch.ref_logprobs`` when set (precomputed once), else
    from ``ref_model`` without gradient. Temperature is 1: DPO scores sequences, not samples.
    """
    num_pairs = int(batch.global_num_samples or 0) // 2
    if batch.ref_logprobs is not None:
        ref_tok = batch.ref_logprobs
    elif ref_model is not None:
        ref_tok = frozen_logprobs(ref_model, batch)
    else:
        raise ValueError("dpo_step needs ref_model or batch.ref_logprobs (the frozen reference)")
    model.train()
    optimizer.zero_grad(set_to_none=True)
    policy_seq = sequence_logprobs(token_logprobs(model, batch), batch, 2 * num_pairs).view(-1, 2)
    ref_seq = sequence_logprobs(ref_tok, batch, 2 * num_pairs).view(-1, 2)
    loss, metrics = dpo_loss(policy_seq[:, 0], policy_seq[:, 1], ref_seq[:, 0], ref_seq[:, 1], beta)
    loss.backward()
    if grad_clip is not None:
        metrics["dpo/grad_norm"] = float(torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip))
    metrics["dpo/lr"] = float(optimizer.param_groups[0]["lr"])
    metrics["dpo/pairs"] = float(num_pairs)
    optimizer.step()
    if lr_scheduler is not None:
        lr_scheduler.step()
    return metrics
