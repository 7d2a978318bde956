"""Core records: Score invariants, JSON round-trip and pickling of every record."""

import math
import pickle

import pytest

from posttrain.core import (Completion, ErrorInfo, Observation, Score, StepResult, Task, Trajectory,
                            TrajectoryGroup, Turn, dumps, from_dict, loads, to_dict)


def _task():
    return Task("math.add-v1", 7, 2, ({"role": "user", "content": "12+34="},),
                public={"shown": [1, 2]}, hidden={"answer": "46", "tests": ["a", "b"]},
                metadata={"source": "unit"})


def _group():
    t = _task()
    c = Completion("46", (5, 6), (-0.1, -0.2), "stop", 3, (1, 2, 3))
    obs = Observation(t.prompt, tools=({"type": "function", "function": {"name": "f"}},))
    turn = Turn(obs, c, 0.5, {"format_ok": True})
    s = Score(1.0, {"exact": (1.0, 1.0)}, passed=3, total=3, reason="ok", verifier_version="v1")
    bad = Score.failure(RuntimeError("boom"), "v1")
    trajs = (Trajectory(t, (turn,), s, timings={"gen": 0.1}),
             Trajectory(t, (turn,), bad, stop_reason="error", error=ErrorInfo("inference", "x")))
    return TrajectoryGroup(t, trajs, policy_version=3)


@pytest.mark.parametrize("value,expected", [(1.5, 1.0), (-0.2, 0.0), (0.3, 0.3), (1, 1.0)])
def test_score_is_clipped_into_unit_interval(value, expected):
    s = Score(value)
    assert s.value == expected
    if value != expected:
        assert "clipped" in s.reason


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc", None])
def test_non_finite_score_is_an_error_not_a_reward(value):
    s = Score(value)
    assert s.value == 0.0 and s.error is not None and not s.ok


def test_weighted_score():
    s = Score.weighted({"a": (1.0, 3.0), "b": (0.0, 1.0)})
    assert math.isclose(s.value, 0.75)


def test_failure_score_records_the_exception():
    s = Score.failure(ValueError("bad input"), "dom-v1")
    assert s.error.kind == "ValueError" and "bad input" in s.error.message


def test_json_round_trip_of_every_record():
    g = _group()
    assert loads(TrajectoryGroup, dumps(g)) == g
    t = _task()
    assert from_dict(Task, to_dict(t)) == t
    sr = StepResult(Observation(t.prompt), 0.25, False, {"k": 1})
    assert from_dict(StepResult, to_dict(sr)) == sr


def test_pickling_of_every_record():
    g = _group()
    assert pickle.loads(pickle.dumps(g)) == g


def test_public_view_never_contains_hidden():
    view = _task().public_view()
    assert "hidden" not in view and "46" not in str(view["public"])
    assert view["prompt"][0]["content"] == "12+34="


def test_completion_requires_one_logprob_per_token():
    with pytest.raises(ValueError):
        Completion("x", (1, 2), (-0.1,))


def test_trajectory_usable_only_when_scored_without_error():
    g = _group()
    assert g.trajectories[0].usable and not g.trajectories[1].usable
    assert g.rewards_G == [1.0, 0.0]
