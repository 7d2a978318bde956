"""Layer attribution and per-domain summaries from sample records."""

import pytest

from posttrain.eval.aggregate import item_scores, summarize, summarize_all
from posttrain.eval.estimators import pass_at_k
from posttrain.eval.layers import classify
from posttrain.eval.samples import read_samples, record_from_trajectory, write_samples

from eval_helpers import traj


def test_first_failing_layer_is_blamed():
    assert classify(traj(reward=1.0, format_ok=True)).first_failure is None
    assert classify(traj(reward=0.0, format_ok=False)).first_failure == "L1"
    out = classify(traj(reward=0.0, format_ok=True, tool_ok=False))
    assert out.first_failure == "L2" and out.flags["L1"] is True
    assert classify(traj(reward=0.0, format_ok=True, tool_ok=True)).first_failure == "L3"
    # format broken but the verifier still passed: not a success, blamed on L1
    both = classify(traj(reward=1.0, format_ok=False))
    assert both.first_failure == "L1" and not both.success and both.flags["L3"] is True


def test_unmeasured_layers_are_none_and_skipped():
    out = classify(traj(reward=0.0))
    assert out.flags["L1"] is None and out.flags["L2"] is None and out.flags["L4"] is None
    assert out.first_failure == "L3"


def test_long_horizon_layer():
    ok = classify(traj(reward=1.0, components={"a": (1.0, 1.0)}), long_horizon=True)
    assert ok.flags["L4"] is True and ok.success
    budget = classify(traj(reward=1.0, stop="max_turns"), long_horizon=True)
    assert budget.first_failure == "L4"
    partial = classify(traj(reward=1.0, components={"a": (1.0, 1.0), "b": (0.5, 1.0)}),
                       threshold=0.9, long_horizon=True)
    assert partial.flags["L3"] is True and partial.first_failure == "L4"


def test_infra_errors_are_not_model_failures():
    inf = classify(traj(error=("inference", "server down")))
    assert inf.status == "error" and inf.first_failure is None and not inf.success
    ver = classify(traj(score_error="boom"))
    assert ver.status == "error" and "boom" in ver.error
    model = classify(traj(error=("format", "unparseable"), reward=0.0))
    assert model.status == "ok" and model.first_failure == "L1"
    tool = classify(traj(error=("tool_call", "bad json"), reward=0.0))
    assert tool.first_failure == "L2"


def _records():
    recs = []
    # item s0: 4/4, s1: 1/4, s2: 0/4 (one sample an infra error), all format-measured
    for seed, wins in ((0, 4), (1, 1), (2, 0)):
        for i in range(4):
            if seed == 2 and i == 3:
                t = traj(seed=seed, error=("inference", "x"))
            else:
                t = traj(seed=seed, reward=1.0 if i < wins else 0.0, format_ok=i != 2 or seed == 0)
            recs.append(record_from_trajectory(t, i))
    return recs


def test_summary_numbers(tmp_path):
    recs = _records()
    write_samples(tmp_path / "s.jsonl", recs)
    assert read_samples(tmp_path / "s.jsonl") == recs
    s = summarize(recs, ks=(1, 4))
    assert s["tasks"] == 3 and s["samples"] == 12 and s["errors"] == 1 and s["valid_samples"] == 11
    # item s2 has 3 valid samples: dropped from pass@4, kept for pass@1
    assert s["dropped"] == {"1": 0, "4": 1}
    p1 = (pass_at_k(4, 4, 1) + pass_at_k(4, 1, 1) + pass_at_k(3, 0, 1)) / 3
    assert s["pass@k"]["1"]["value"] == pytest.approx(p1)
    assert s["pass@k"]["4"]["value"] == pytest.approx((1.0 + 1.0) / 2)
    assert s["pass^k"]["4"] == pytest.approx(0.5)
    assert s["success_rate"]["value"] == pytest.approx(5 / 11)
    assert s["layers"]["L1"]["measured"] == 11 and s["layers"]["L1"]["passed"] == 9
    assert s["first_failure"]["L1"] == 2 and s["first_failure"]["L3"] == 4
    assert s["failed"] == 6
    assert s["efficiency"]["turns"] == 1 and s["efficiency"]["wall_s"] == pytest.approx(0.5)


def test_summarize_all_and_item_scores():
    recs = _records() + [record_from_trajectory(traj("math.sub-v1", seed=9, reward=1.0), 0)]
    out = summarize_all(recs, ks=(1,))
    assert set(out["domains"]) == {"math.add-v1", "math.sub-v1"}
    assert out["overall"]["tasks"] == 4
    assert out["macro"]["pass@1"] == pytest.approx(
        (out["domains"]["math.add-v1"]["pass@k"]["1"]["value"] + 1.0) / 2)
    scores = item_scores(recs)
    assert scores["math.add-v1/d1/s1"] == pytest.approx(0.25)
    assert scores["math.sub-v1/d1/s9"] == 1.0
