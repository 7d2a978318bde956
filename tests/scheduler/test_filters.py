"""GroupFilter: what each filter drops, the counters, and the positions that let weights follow."""

from __future__ import annotations

from posttrain.core.config import FilterConfig
from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, TrajectoryGroup, Turn
from posttrain.scheduler.filters import GROUP_REASONS, TRAJECTORY_REASONS, GroupFilter

TASK = Task(domain="test.toy-v1", seed=0, difficulty=1, prompt=({"role": "user", "content": "x"},))


def traj(reward, tokens=(1,), *, finish="stop", error=None, score_error=False, stop="done"):
    c = Completion(text="", token_ids_T=tuple(tokens), logprobs_T=(-1.0,) * len(tokens),
                   finish_reason=finish)
    score = Score(reward, error=ErrorInfo("verifier", "crash") if score_error else None)
    return Trajectory(task=TASK, turns=(Turn(Observation(messages=()), c),), score=score,
                      stop_reason=stop, error=ErrorInfo(*error) if error else None)


def grp(*trajs):
    return TrajectoryGroup(task=TASK, trajectories=tuple(trajs))


def test_zero_variance_drops_uninformative_groups_only():
    informative = grp(traj(0.0), traj(1.0))
    all_right = grp(traj(1.0), traj(1.0), traj(1.0))
    only_error_differs = grp(traj(0.0), traj(0.0), traj(1.0, error=("sandbox", "boom")))
    single = grp(traj(1.0))
    out = GroupFilter().apply([all_right, informative, only_error_differs, single])
    assert out.kept[0].trajectories == informative.trajectories and out.positions == [1]
    assert out.dropped == {0: "zero_variance", 2: "zero_variance", 3: "zero_variance"}
    assert out.counts["zero_variance"] == 3 and out.counts["infra_error"] == 1
    assert out.metrics()["rollout/zero_variance_groups"] == 3.0
    kept = GroupFilter(zero_variance=False).apply([all_right, single])
    assert kept.positions == [0, 1] and not kept.dropped


def test_every_trajectory_reason_is_counted_and_the_rest_survives():
    mixed = grp(traj(1.0, (1,)), traj(0.0, (2,)), traj(1.0, (3,), finish="length"),
                traj(1.0, (4,), score_error=True), traj(0.0, (5,), error=("parse", "bad json")),
                traj(1.0, (6,), error=("sandbox", "gone")), traj(1.0, (1,)))
    out = GroupFilter(FilterConfig(truncated=True, dedup_within_group=True)).apply([mixed])
    assert out.kept_trajectories == [[0, 1]]
    assert [t.reward for t in out.kept[0].trajectories] == [1.0, 0.0]
    c = out.counts
    assert (c["truncated"], c["verifier_error"], c["malformed"], c["infra_error"],
            c["duplicate_in_group"]) == (1, 1, 1, 1, 1)
    assert set(out.metrics()) >= {f"filter/{r}" for r in TRAJECTORY_REASONS + GROUP_REASONS}


def test_defaults_keep_truncated_and_duplicate_samples():
    g = grp(traj(1.0, (1,)), traj(1.0, (1,)), traj(0.0, (2,), finish="length", stop="max_tokens"))
    out = GroupFilter().apply([g])
    assert out.kept_trajectories == [[0, 1, 2]] and out.kept[0] is g


def test_min_group_size_and_empty_groups():
    two = grp(traj(1.0), traj(0.0))
    truncated = grp(traj(1.0, finish="length"), traj(0.0, finish="length"))
    out = GroupFilter(FilterConfig(min_group_size=3, truncated=True)).apply([two, truncated])
    assert out.dropped == {0: "too_few", 1: "empty"}
    assert out.counts["too_few"] == 1 and out.counts["empty"] == 1 and out.counts["truncated"] == 2
