"""Quality filters and dedup on the training path, with a counter for every drop.

Both training loops (the reference loop's ``rl_step`` and the async loop's
``train_on_result``) pass each step's verified groups through :meth:`GroupFilter.apply`;
nothing else decides what reaches the loss.

Per trajectory (dropped from its group, the rest of the group survives):

- ``infra_error``: an error whose kind is an infrastructure failure (it survived the
  scheduler's retries, :mod:`posttrain.scheduler.rollouts`);
- ``malformed``: an error of any other kind (a malformed action, a budget overrun), or no
  turns at all (an action without token ids stays: the batch builder counts it as empty);
- ``verifier_error``: no Score, or a Score whose verifier crashed (never a silent 0);
- ``truncated``: stopped by a token cap (``stop_reason == "max_tokens"`` or a turn with
  ``finish_reason == "length"``), when ``filters.truncated`` is on (DAPO's overlong filter);
- ``duplicate_in_group``: the same action tokens as an earlier trajectory of the group, when
  ``filters.dedup_within_group`` is on (off by default: identical samples are legitimate,
  and dropping them biases group-relative advantages).

Per group (after the trajectory filters): ``empty`` (no trajectory left),
``too_few`` (fewer than ``filters.min_group_size``), ``zero_variance`` (fewer than two
usable rewards, or all equal, when zero-variance filtering is on: no group-relative signal).

Guarantees: pure — the verdict depends on the groups alone, so a resumed run filters exactly
as an uninterrupted one; ``counts`` has every reason (0 when nothing was dropped for it), so
metrics have the same keys every step. Duplicates *across* deliveries (a job re-run after a
crash) are not this module's concern: the outcome ledger gives every task one outcome.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

from posttrain.core.config import FilterConfig
from posttrain.core.types import Trajectory, TrajectoryGroup

from .retry import INFRA_KINDS

TRAJECTORY_REASONS = ("infra_error", "malformed", "verifier_error", "truncated", "duplicate_in_group")
GROUP_REASONS = ("empty", "too_few", "zero_variance")
WHY = {"empty": "no trajectory left after the filters", "too_few": "too few usable trajectories",
       "zero_variance": "zero variance (no group-relative signal)"}


def trajectory_problem(t: Trajectory, filter_truncated: bool) -> str | None:
    """Why a trajectory must not enter the loss, or None."""
    if t.error is not None:
        return "infra_error" if t.error.kind in INFRA_KINDS else "malformed"
    if not t.turns:
        return "malformed"
    if t.score is None or t.score.error is not None:
        return "verifier_error"
    if filter_truncated and (t.stop_reason == "max_tokens"
                             or any(turn.action.finish_reason == "length" for turn in t.turns)):
        return "truncated"
    return None


def action_hash(t: Trajectory) -> bytes:
    """A digest of every action's token ids, turn boundaries included."""
    h = hashlib.blake2b(digest_size=16)
    for turn in t.turns:
        h.update(len(turn.action.token_ids_T).to_bytes(4, "little"))
        for tok in turn.action.token_ids_T:
            h.update(int(tok).to_bytes(8, "little", signed=True))
    return h.digest()


@dataclass(frozen=True)
class Filtered:
    """What :meth:`GroupFilter.apply` decided for one step.

    ``kept`` are the cleaned groups to train on and ``positions`` their indices in the input
    (so per-trajectory data such as staleness weights can follow via ``kept_trajectories``);
    ``dropped`` maps an input index to the reason its whole group was dropped."""

    kept: list[TrajectoryGroup]
    positions: list[int]
    kept_trajectories: list[list[int]]
    dropped: dict[int, str]
    counts: dict[str, int]

    def metrics(self) -> dict[str, float]:
        out = {f"filter/{k}": float(v) for k, v in self.counts.items()}
        out["rollout/zero_variance_groups"] = float(self.counts["zero_variance"])
        return out


class GroupFilter:
    """Applies the filters above with one run's settings."""

    def __init__(self, config: FilterConfig | None = None, zero_variance: bool = True):
        self.cfg = config or FilterConfig()
        self.zero_variance = zero_variance

    def _clean(self, group: TrajectoryGroup, counts: Counter) -> list[int]:
        keep, seen = [], set()
        for i, t in enumerate(group.trajectories):
            why = trajectory_problem(t, self.cfg.truncated)
            if why is None and self.cfg.dedup_within_group:
                h = action_hash(t)
                why = "duplicate_in_group" if h in seen else None
                seen.add(h)
            if why is None:
                keep.append(i)
            else:
                counts[why] += 1
        return keep

    def _verdict(self, rewards: Sequence[float]) -> str | None:
        if not rewards:
            return "empty"
        if len(rewards) < self.cfg.min_group_size:
            return "too_few"
        if self.zero_variance and (len(rewards) < 2 or max(rewards) == min(rewards)):
            return "zero_variance"
        return None

    def apply(self, groups: Sequence[TrajectoryGroup]) -> Filtered:
        counts: Counter[str] = Counter({k: 0 for k in TRAJECTORY_REASONS + GROUP_REASONS})
        kept, positions, kept_trajs, dropped = [], [], [], {}
        for gi, group in enumerate(groups):
            idx = self._clean(group, counts)
            why = self._verdict([group.trajectories[i].reward for i in idx])
            if why is not None:
                counts[why] += 1
                dropped[gi] = why
                continue
            trajs = tuple(group.trajectories[i] for i in idx)
            kept.append(group if len(trajs) == len(group.trajectories)
                        else replace(group, trajectories=trajs))
            positions.append(gi)
            kept_trajs.append(idx)
        return Filtered(kept, positions, kept_trajs, dropped, dict(counts))
