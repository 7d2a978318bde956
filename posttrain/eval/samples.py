"""Per-sample evaluation records: one line of ``samples.jsonl`` per generated trajectory.

A :class:`SampleRecord` is what every downstream number is computed from (pass@k, layer
matrix, efficiency, the paired regression gate, the audit channel). It is flat JSON on disk
(a pydantic model: it crosses a process boundary) and carries the item key so that two
evaluations of the same regression set can be paired item by item.

It does not hold the full trajectory (prompts, logprobs); the answer text is kept, capped,
for review and audit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from pydantic import BaseModel, ConfigDict

from posttrain.core.images import ImageStore, image_ref, trajectory_images
from posttrain.core.types import Trajectory

from .layers import classify

ANSWER_CAP = 4000


class SampleRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str  # the Task key: domain/d<difficulty>/s<seed>
    domain: str
    difficulty: int
    seed: int
    sample: int
    reward: float
    success: bool
    status: str = "ok"  # ok | error (infrastructure / verifier failure: excluded, counted)
    error: str | None = None
    layers: dict[str, bool | None]
    first_failure: str | None = None
    turns: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    stop_reason: str = "done"
    policy_version: int = 0
    answer: str = ""
    reason: str = ""
    resumed: bool = False  # the episode went on from a checkpoint after an interruption
    images: list[str] = []  # "sha256:<hex>" of each image the episode saw (files in images/)


def wall_time(traj: Trajectory) -> float:
    """Wall seconds of an episode: ``timings['wall_s']`` (or ``total_s``), else the sum of timings."""
    t = dict(traj.timings or {})
    for key in ("wall_s", "total_s"):
        if key in t:
            return float(t[key])
    return float(sum(v for v in t.values() if isinstance(v, (int, float))))


def record_from_trajectory(traj: Trajectory, sample: int, threshold: float = 1.0,
                           long_horizon: bool = False, images: ImageStore | None = None) -> SampleRecord:
    """Classify one trajectory into a :class:`SampleRecord` (``images``: where the images it
    saw are stored, once each, for the report's thumbnails)."""
    out = classify(traj, threshold=threshold, long_horizon=long_horizon)
    seen = trajectory_images(traj)
    refs = [images.put(i) for i in seen] if images is not None else [image_ref(i) for i in seen]
    answer = traj.turns[-1].action.text if traj.turns else ""
    return SampleRecord(
        item=traj.task.key, domain=traj.task.domain, difficulty=traj.task.difficulty,
        seed=traj.task.seed, sample=sample, reward=float(traj.reward), success=out.success,
        status=out.status, error=out.error, layers=dict(out.flags),
        first_failure=out.first_failure, turns=len(traj.turns), tokens=traj.num_action_tokens,
        wall_s=wall_time(traj), stop_reason=traj.stop_reason,
        policy_version=max(traj.policy_versions, default=0), answer=answer[:ANSWER_CAP],
        reason=(traj.score.reason if traj.score is not None else "")[:500],
        resumed=bool((traj.timings or {}).get("checkpoint_resumed")), images=refs,
    )


def write_samples(path: Path, records: Iterable[SampleRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for r in records:
            f.write(r.model_dump_json() + "\n")


def read_samples(path: Path) -> list[SampleRecord]:
    with Path(path).open() as f:
        return [SampleRecord.model_validate(json.loads(line)) for line in f if line.strip()]
