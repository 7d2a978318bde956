"""Held-out evaluation keeps every task's reward in task order, and a run's before/after gain
is the paired one (same tasks), with the standard error of the per-task differences."""

from __future__ import annotations

import json
import math

import pytest
from eval_helpers import OracleBackend, _h

from posttrain.core.config import DomainSpec
from posttrain.eval.paired import paired_z
from posttrain.eval.run_report import heldout_table
from posttrain.trainer.heldout import heldout_accuracy, paired_gain
from posttrain.trainer.tasks import heldout_tasks

SPECS = [DomainSpec(id="math.add-v1", difficulties=[1]), DomainSpec(id="math.sub-v1", difficulties=[1])]
N, OFFSET = 60, 5_000


def test_rewards_are_per_task_in_task_order():
    """The oracle is wrong exactly on the prompts its hash marks: ``rewards[d][i]`` must be 0
    there and 1 elsewhere, task by task, which a shuffled or pooled list would break."""
    res = heldout_accuracy(OracleBackend(wrong_rate=0.3, salt="a"), SPECS, N, OFFSET, batch_size=7)
    for spec in SPECS:
        want = [0.0 if _h(t.prompt[-1]["content"], "a") < 0.3 else 1.0
                for t in heldout_tasks(spec, N, OFFSET)]
        assert 0 < sum(want) < N  # both outcomes occur
        assert res["rewards"][spec.id] == want
        assert res["per_domain"][spec.id] == pytest.approx(sum(want) / N)


def test_paired_gain_matches_the_per_task_differences():
    before = heldout_accuracy(OracleBackend(wrong_rate=0.5, salt="a"), SPECS, N, OFFSET)
    after = heldout_accuracy(OracleBackend(wrong_rate=0.2, salt="b"), SPECS, N, OFFSET)
    gain = paired_gain(before, after)
    pooled_b = [r for s in SPECS for r in before["rewards"][s.id]]
    pooled_a = [r for s in SPECS for r in after["rewards"][s.id]]
    diffs = [a - b for a, b in zip(pooled_a, pooled_b)]
    mean = sum(diffs) / len(diffs)
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1) / len(diffs))
    assert gain["overall"]["n"] == 2 * N
    assert gain["overall"]["gain"] == pytest.approx(mean) and gain["overall"]["se"] == pytest.approx(se)
    assert gain["overall"]["z"] == pytest.approx(mean / se)
    for s in SPECS:
        g = gain["per_domain"][s.id]
        assert g["gain"] == pytest.approx(after["per_domain"][s.id] - before["per_domain"][s.id])
    same = paired_gain(before, before)["overall"]
    assert (same["gain"], same["se"], same["z"]) == (0.0, 0.0, 0.0)


def test_paired_z_edges():
    # a task that failed on either side is left out of both means, not counted as 0
    assert paired_z([1.0, 0.0, None, 1.0], [1.0, 1.0, 1.0, None]) == pytest.approx(
        {"before": 0.5, "after": 1.0, "gain": 0.5, "se": 0.5, "z": 1.0, "n": 2})
    # every task moved alike: z undefined, kept JSON-safe
    r = paired_z([0.0, 0.0], [1.0, 1.0])
    assert r["z"] is None and json.loads(json.dumps(r)) == r
    assert paired_z([], [])["n"] == 0
    with pytest.raises(ValueError, match="same held-out tasks"):
        paired_z([1.0], [1.0, 0.0])


def test_report_shows_the_paired_error():
    before = heldout_accuracy(OracleBackend(wrong_rate=0.5, salt="a"), SPECS, N, OFFSET)
    after = heldout_accuracy(OracleBackend(wrong_rate=0.2, salt="b"), SPECS, N, OFFSET)
    html = heldout_table({"heldout_before": before, "heldout_after": after,
                          "heldout_gain": paired_gain(before, after)})
    assert "SE of the change (paired)" in html
    assert 'data-path="summary/heldout_gain/overall/z"' in html
    assert 'data-path="summary/heldout_gain/per_domain/math.sub-v1/se"' in html
    # an older summary without the gain still renders, without the columns
    assert "paired" not in heldout_table({"heldout_before": before, "heldout_after": after})
