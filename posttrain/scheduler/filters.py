"""Quality filters and dedup for finished groups, with counters of what each dropped.

Per trajectory (dropped from its group, the rest survives):

- ``infra_error``: an error on the trajectory whose kind is an infrastructure failure;
- ``malformed``: an error of any other kind (``Trajectory.usable`` is False), no turns, or an
  action without token ids (nothing to train on);
- ``verifier_error``: no Score, or a Score whose verifier crashed (never a silent 0);
- ``truncated``: stopped by the token limit (``stop_reason == "max_tokens"`` or a completion
  with ``finish_reason == "length"``), when ``filter_truncated`` is on;
- ``duplicate_in_group``: a trajectory with the same action tokens as an earlier one in the
  group, when ``dedup_within_group`` is on (off by default: identical samples are legitimate
  and dropping them biases group-relative advantages).

Per group: ``too_few`` (fewer than ``min_group_size`` usable trajectories left),
``zero_variance`` (all usable rewards equal: no gradient under group-normalised advantages)
and ``duplicate`` (the same task and action tokens were already delivered — a retried item
whose first attempt also got through must not be trained on twice).

Guarantees: pure apart from the counters and the bounded memory of delivered hashes.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import replace

from posttrain.core.types import Trajectory, TrajectoryGroup

from .config import LocalConfig
from .retry import INFRA_KINDS


def trajectory_problem(t: Trajectory, filter_truncated: bool) -> str | None:
    """Why a trajectory must not enter the loss, or None."""
    if t.error is not None:
        return "infra_error" if t.error.kind in INFRA_KINDS else "malformed"
    if not t.turns or any(not turn.action.token_ids_T for turn in t.turns):
        return "malformed"
    if t.score is None or t.score.error is not None:
        return "verifier_error"
    if filter_truncated and (t.stop_reason == "max_tokens"
                             or any(turn.action.finish_reason == "length" for turn in t.turns)):
        return "truncated"
    return None


def action_hash(t: Trajectory) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for turn in t.turns:
        h.update(len(turn.action.token_ids_T).to_bytes(4, "little"))
        for tok in turn.action.token_ids_T:
            h.update(int(tok).to_bytes(8, "little", signed=True))
    return h.digest()


class GroupFilter:
    """Applies the filters above; ``counts`` says how many of each were dropped."""

    def __init__(self, config: LocalConfig):
        self.cfg = config
        self.counts: Counter[str] = Counter()
        self._delivered: OrderedDict[bytes, None] = OrderedDict()

    def clean(self, group: TrajectoryGroup) -> tuple[TrajectoryGroup, dict[str, int]]:
        """Drop unusable trajectories; returns the cleaned group and per-reason drops."""
        kept, dropped, seen = [], Counter(), set()
        for t in group.trajectories:
            why = trajectory_problem(t, self.cfg.filter_truncated)
            if why is None and self.cfg.dedup_within_group:
                h = action_hash(t)
                why = "duplicate_in_group" if h in seen else None
                seen.add(h)
            if why is None:
                kept.append(t)
            else:
                dropped[why] += 1
        self.counts.update(dropped)
        return replace(group, trajectories=tuple(kept)), dict(dropped)

    def group_verdict(self, group: TrajectoryGroup) -> str | None:
        """Why a cleaned group must be dropped as a whole, or None to keep it."""
        rewards = group.rewards_G
        why = None
        if len(rewards) < self.cfg.min_group_size:
            why = "too_few"
        elif self.cfg.filter_zero_variance and max(rewards) == min(rewards):
            why = "zero_variance"
        elif self.cfg.dedup_memory > 0 and self._seen_before(group):
            why = "duplicate"
        if why is not None:
            self.counts[why] += 1
        return why

    def _seen_before(self, group: TrajectoryGroup) -> bool:
        h = hashlib.blake2b(group.task.key.encode(), digest_size=16)
        for t in group.trajectories:
            h.update(action_hash(t))
        key = h.digest()
        if key in self._delivered:
            return True
        self._delivered[key] = None
        if len(self._delivered) > self.cfg.dedup_memory:
            self._delivered.popitem(last=False)
        return False
