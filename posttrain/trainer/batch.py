"""PolicyBatch: scored trajectory groups turned into padded tensors for a policy-gradient loss.

Alignment (the one convention every trainer module shares): row ``b`` holds the token ids
``input_ids[b, 0..L)``; ``action_mask[b, t]`` is True when token ``input_ids[b, t]`` was
*produced by the policy*; ``behaviour_logprobs[b, t]`` is the sampler's logprob of that
same token, and :func:`posttrain.trainer.logprobs.token_logprobs` returns the trainer's
logprob of that same token — computed from the logits at position ``t - 1``. Column 0 can
therefore never be an action token (nothing predicts it); a completion with an empty prompt
loses its first token from the loss and the batch counts it in ``batch/dropped_first_tokens``.

Padding is on the right; ``position_ids`` count real tokens from 0.

Multi-turn: turn ``i+1``'s ``prompt_token_ids`` normally extends turn ``i``'s prompt plus
its action tokens; then the whole episode is one row whose observation tokens are masked
out and whose action tokens are masked in. When a prompt does not extend the history (the
agent loop truncated its context, or a template re-tokenised the earlier answer) a new row
(segment) starts, so the loss still sees exactly the tokens the policy produced, with the
context it produced them in. ``sample_ids`` map rows back to their trajectory.

Not handled here: computing advantages (``advantages.py``), staleness policy (the caller
passes ``weights_per_group``), truncation to a maximum length (the rollout bounds lengths).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import torch

from posttrain.core.types import Trajectory, TrajectoryGroup


@dataclass(frozen=True)
class PolicyBatch:
    """Padded tensors for one policy update; see the module docstring for the alignment.

    ``advantages`` is ``[B]`` (one per row) or ``[B, L]`` (per token). ``old_logprobs`` are the
    trainer's logprobs at the start of the step (the PPO "proximal" policy); when absent the
    losses use ``behaviour_logprobs`` in their place. ``global_num_tokens``/``global_num_samples``
    are set on micro-batches by :func:`split_policy_batch` so that losses normalise by the
    whole batch and summed micro-batch gradients equal the full-batch gradient.
    """

    input_ids: torch.Tensor  # [B, L] long
    attention_mask: torch.Tensor  # [B, L] long, 1 on real tokens
    position_ids: torch.Tensor  # [B, L] long
    action_mask: torch.Tensor  # [B, L] bool, True on policy tokens
    behaviour_logprobs: torch.Tensor  # [B, L] float32, 0 off the action mask
    advantages: torch.Tensor  # [B] or [B, L] float32
    group_ids: torch.Tensor  # [B] long, index of the group in the input list
    sample_ids: torch.Tensor  # [B] long, index of the trajectory (dense over kept ones)
    sample_weights: torch.Tensor  # [B] float32
    policy_versions: torch.Tensor  # [B] long, oldest policy version among the row's turns
    ref_logprobs: torch.Tensor | None = None  # [B, L], frozen reference policy
    old_logprobs: torch.Tensor | None = None  # [B, L], trainer policy before this step
    global_num_tokens: float | None = None
    global_num_samples: float | None = None
    stats: Mapping[str, float] = field(default_factory=dict)
    # Per row, the base64 PNGs its prompt showed (None: a text-only batch); the trainer's
    # forward rebuilds the pixel inputs from them (trainer/logprobs.py).
    images: tuple[tuple[str, ...], ...] | None = None

    @property
    def num_rows(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def num_samples(self) -> int:
        """Trajectories in this batch (rows of a split multi-turn episode count once)."""
        return int(self.sample_ids.unique().numel()) if self.num_rows else 0

    def replace(self, **changes) -> "PolicyBatch":
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Segment:
    """One row before padding: token ids, which are actions, and their behaviour logprobs."""

    token_ids: tuple[int, ...]
    action_mask: tuple[bool, ...]
    behaviour_logprobs: tuple[float, ...]
    policy_version: int
    images: tuple[str, ...] = ()  # the row's base64 PNGs, in prompt order (vision models)


def trajectory_segments(traj: Trajectory) -> list[Segment]:
    """Rows for one trajectory: one per maximal run of turns whose prompts extend each other."""
    segments: list[Segment] = []
    ids: list[int] = []
    mask: list[bool] = []
    lps: list[float] = []
    version: int | None = None
    images: tuple[str, ...] = ()  # a later prompt of a row extends it, so it shows every image
    for turn in traj.turns:
        act = turn.action
        prompt = list(act.prompt_token_ids)
        if ids and prompt[: len(ids)] != ids:
            segments.append(Segment(tuple(ids), tuple(mask), tuple(lps), int(version or 0), images))
            ids, mask, lps, version = [], [], [], None
        images = tuple(act.prompt_images)
        observation = prompt[len(ids):]
        ids += observation
        mask += [False] * len(observation)
        lps += [0.0] * len(observation)
        ids += act.token_ids_T
        mask += [True] * len(act.token_ids_T)
        lps += [float(x) for x in act.logprobs_T]
        version = act.policy_version if version is None else min(version, act.policy_version)
    if ids:
        segments.append(Segment(tuple(ids), tuple(mask), tuple(lps), int(version or 0), images))
    return segments


@dataclass
class _Rows:
    segments: list[Segment] = field(default_factory=list)
    advantages: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    group_ids: list[int] = field(default_factory=list)
    sample_ids: list[int] = field(default_factory=list)


def _collect_rows(groups: Sequence[TrajectoryGroup], advantages_per_group, weights_per_group):
    rows = _Rows()
    stats = {"batch/unusable": 0.0, "batch/empty_rows": 0.0, "batch/split_segments": 0.0}
    sample = 0
    for gi, group in enumerate(groups):
        advs = advantages_per_group[gi]
        if len(advs) != len(group.trajectories):
            raise ValueError(
                f"group {gi}: {len(advs)} advantages for {len(group.trajectories)} trajectories "
                "(advantages are aligned with group.trajectories, unusable ones included)"
            )
        for ti, traj in enumerate(group.trajectories):
            if not traj.usable:
                stats["batch/unusable"] += 1
                continue
            weight = 1.0 if weights_per_group is None else float(weights_per_group[gi][ti])
            segs = trajectory_segments(traj)
            stats["batch/split_segments"] += max(0, len(segs) - 1)
            kept = [s for s in segs if any(s.action_mask[1:])]
            stats["batch/empty_rows"] += len(segs) - len(kept)
            for seg in kept:
                rows.segments.append(seg)
                rows.advantages.append(float(advs[ti]))
                rows.weights.append(weight)
                rows.group_ids.append(gi)
                rows.sample_ids.append(sample)
            sample += 1 if kept else 0
    return rows, stats


def pad_segments(segments: Sequence[Segment], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad segments into ``input_ids``/``attention_mask``/``position_ids``/``action_mask``/
    ``behaviour_logprobs`` (and ``policy_versions``), clearing column 0 of the action mask."""
    B = len(segments)
    L = max((len(s.token_ids) for s in segments), default=1)
    # One tensor per field from padded Python lists: a torch.tensor call per row costs more
    # than the rows themselves at RL batch sizes.
    pad = lambda xs, fill: list(xs) + [fill] * (L - len(xs))  # noqa: E731
    input_ids = torch.tensor([pad(s.token_ids, int(pad_id)) for s in segments],
                             dtype=torch.long).view(B, L)
    attention_mask = torch.tensor([[1] * len(s.token_ids) + [0] * (L - len(s.token_ids))
                                   for s in segments], dtype=torch.long).view(B, L)
    action_mask = torch.tensor([pad(s.action_mask, False) for s in segments],
                               dtype=torch.bool).view(B, L)
    behaviour = torch.tensor([pad(s.behaviour_logprobs, 0.0) for s in segments],
                             dtype=torch.float32).view(B, L)
    # Nothing predicts column 0, so it can never carry a policy-gradient term.
    action_mask[:, 0] = False
    return {
        "input_ids": input_ids, "attention_mask": attention_mask,
        "position_ids": (attention_mask.cumsum(dim=1) - 1).clamp(min=0) * attention_mask,
        "action_mask": action_mask, "behaviour_logprobs": behaviour * action_mask,
        "policy_versions": torch.tensor([s.policy_version for s in segments], dtype=torch.long),
    }


def build_policy_batch(groups: Sequence[TrajectoryGroup],
                       advantages_per_group: Sequence[Sequence[float]], pad_id: int,
                       weights_per_group: Sequence[Sequence[float]] | None = None) -> PolicyBatch:
    """Right-padded batch of every usable trajectory of ``groups``.

    ``advantages_per_group[g][i]`` (and ``weights_per_group[g][i]``, default 1) belong to
    ``groups[g].trajectories[i]``; entries of unusable trajectories are ignored. Unusable
    trajectories are excluded and counted in ``stats["batch/unusable"]``; rows without any
    scoreable action token are dropped and counted in ``stats["batch/empty_rows"]``.
    """
    rows, stats = _collect_rows(groups, advantages_per_group, weights_per_group)
    tensors = pad_segments(rows.segments, pad_id)
    stats.update({
        "batch/rows": float(len(rows.segments)),
        "batch/samples": float(len(set(rows.sample_ids))),
        "batch/action_tokens": float(tensors["action_mask"].sum()),
        "batch/dropped_first_tokens": float(sum(s.action_mask[0] for s in rows.segments)),
    })
    images = tuple(s.images for s in rows.segments)
    return PolicyBatch(
        **tensors,
        images=images if any(images) else None,
        advantages=torch.tensor(rows.advantages, dtype=torch.float32),
        group_ids=torch.tensor(rows.group_ids, dtype=torch.long),
        sample_ids=torch.tensor(rows.sample_ids, dtype=torch.long),
        sample_weights=torch.tensor(rows.weights, dtype=torch.float32),
        stats=stats,
    )


def split_policy_batch(batch: PolicyBatch, num_micro: int) -> list[PolicyBatch]:
    """Split by whole trajectories into ``num_micro`` micro-batches normalised as the full batch.

    Every row of one trajectory lands in the same micro-batch (the sequence-mean losses need
    all of a sample's tokens together). Each micro-batch carries the full batch's token and
    sample counts, so the sum of the micro-batch losses equals the full-batch loss.
    """
    if num_micro < 1:
        raise ValueError(f"num_micro must be >= 1, got {num_micro}")
    samples = batch.sample_ids.unique(sorted=True)
    total_tokens = float(batch.action_mask.sum())
    total_samples = float(samples.numel())
    out = []
    for chunk in torch.tensor_split(samples, min(num_micro, max(1, samples.numel()))):
        rows = torch.isin(batch.sample_ids, chunk).nonzero(as_tuple=True)[0]
        out.append(select_rows(batch, rows).replace(
            global_num_tokens=total_tokens, global_num_samples=total_samples))
    return out


def select_rows(batch: PolicyBatch, rows: torch.Tensor) -> PolicyBatch:
    """The sub-batch of the given row indices (per-row and per-token tensors sliced alike)."""
    changes = {}
    for f in dataclasses.fields(batch):
        value = getattr(batch, f.name)
        if isinstance(value, torch.Tensor):
            changes[f.name] = value.index_select(0, rows)
    if getattr(batch, "images", None) is not None:
        changes["images"] = tuple(batch.images[i] for i in rows.tolist())
    return dataclasses.replace(batch, **changes)


def without_zero_advantage_rows(batch: PolicyBatch) -> PolicyBatch:
    """The rows that carry a gradient, normalised as the whole batch (an exact shortcut).

    A row whose advantage is 0 on every token (a group whose rewards are all equal)
    contributes nothing to a policy-gradient loss, but its tokens and sample still count in
    the loss's normaliser — so the kept rows carry the full batch's token and sample counts,
    as micro-batches do, and the gradient equals the full batch's. Only valid without a KL
    term (which has a gradient on every row); the caller checks. When no row would remain the
    batch is returned whole (the optimizer still steps, and Adam moves on zero gradients).
    """
    adv = batch.advantages
    live = adv != 0 if adv.dim() == 1 else (adv * batch.action_mask).ne(0).any(1)
    # Whole trajectories only: a sample's token mean pools all of its rows.
    live = torch.isin(batch.sample_ids, batch.sample_ids[live])
    if bool(live.all()) or not bool(live.any()):
        return batch
    total_tokens = float(batch.action_mask.sum())
    total_samples = float(batch.num_samples)
    sub = select_rows(batch, live.nonzero(as_tuple=True)[0])
    return sub.replace(global_num_tokens=batch.global_num_tokens or total_tokens,
                       global_num_samples=batch.global_num_samples or total_samples)
