"""bench/learning_vs_trl.py's figures from curves, and smoke runs of it and bench/profile_step.py.

The figures: time to a fraction of TRL's gain (first crossing, linear between evaluations),
the mean gain over the budget, and the per-seed summary. The smoke runs (slow) run both
scripts for real at a tiny budget and read their last-line JSON.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import learning_vs_trl as lvt  # noqa: E402


def test_time_to_reach_interpolates_the_first_crossing():
    curve = [(0.0, 0.70), (10.0, 0.80), (20.0, 0.90), (30.0, 0.85)]
    assert lvt.time_to_reach(curve, 0.85) == pytest.approx(15.0)
    assert lvt.time_to_reach(curve, 0.70) == 0.0
    assert lvt.time_to_reach(curve, 0.95) is None


def test_mean_gain_is_the_area_above_the_start_over_the_budget():
    # linear 0 -> 0.2 over 10 s, then flat at 0.2 until the budget of 20 s: (1 + 2) / 20
    assert lvt.mean_gain([(0.0, 0.5), (10.0, 0.7)], 0.5, 20.0) == pytest.approx(0.15)


def test_compare_uses_trls_plateau_and_counts_a_side_that_never_gets_there_at_the_budget():
    trl = [(0.0, 0.7), (40.0, 0.8), (80.0, 0.9), (90.0, 0.9)]  # plateau (last third) 0.9
    fast = [(0.0, 0.7), (10.0, 0.9), (90.0, 0.9)]
    out = lvt.compare(trl, fast, 0.7, 90.0)
    assert out["trl_gain"] == pytest.approx(0.2)
    assert out["trl_time_to_80pct_gain_s"] == pytest.approx(64.0)  # 0.86 between 40 and 80 s
    assert out["posttrain_time_to_80pct_gain_s"] == pytest.approx(8.0)
    assert out["time_to_80pct_gain_ratio"] == pytest.approx(8.0)
    slow = lvt.compare(trl, [(0.0, 0.7), (90.0, 0.72)], 0.7, 90.0)
    assert not slow["posttrain_reached_80pct"] and slow["posttrain_time_to_80pct_gain_s"] == 90.0
    assert slow["time_to_80pct_gain_ratio"] == pytest.approx(64.0 / 90.0, abs=1e-3)


def test_summary_gives_medians_and_ranges_over_seeds():
    seeds = [{"completions_per_s_ratio": r, "time_to_80pct_gain_ratio": 2 * r, "load_avg_seen": [1.0, l],
              "posttrain_reached_80pct": True} for r, l in ((3.0, 2.0), (2.0, 5.0), (4.0, 3.0))]
    s = lvt.summarise(seeds)
    assert s["completions_per_s_ratio_median"] == 3.0 and s["completions_per_s_ratio_range"] == [2.0, 4.0]
    assert s["time_to_80pct_gain_ratio_median"] == 6.0
    assert s["load_avg_seen"] == {"min": 1.0, "median": 1.5, "max": 5.0}


def _last_json(args):
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=900,
                         cwd=BENCH.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_learning_vs_trl_smoke_run_reports_the_seed_medians():
    pytest.importorskip("trl")
    r = _last_json([str(BENCH / "learning_vs_trl.py"), "--budget", "4", "--seeds", "2",
                    "--sft-steps", "5", "--heldout", "20", "--eval-every", "2", "--slice", "2"])
    assert len(r["seeds"]) == 2 and [s["first"] for s in r["seeds"]] == ["trl", "posttrain"]
    assert r["completions_per_s_ratio_median"] > 0
    assert "time_to_80pct_gain_ratio_median" in r or all(s["trl_gain"] <= 0 for s in r["seeds"])
    for s in r["seeds"]:
        assert s["trl_steps"] > 0 and s["posttrain_steps"] > 0
        assert s["trl_curve"][-1][0] == 4.0 and s["posttrain_curve"][-1][0] == 4.0


@pytest.mark.slow
def test_profile_step_accounts_for_the_step_and_its_floor(tmp_path):
    r = _last_json([str(BENCH / "profile_step.py"), "--sft-steps", "30", "--steps", "3",
                    "--warmup", "1", "--init", str(tmp_path / "init")])
    parts = r["parts_s"]
    assert sum(parts.values()) == pytest.approx(r["step_s"], rel=0.25)  # medians of parts
    assert r["flops_per_step"] > 0 and r["floor_s"] == pytest.approx(
        r["flops_per_step"] / (r["matmul_gflops_1thread"] * 1e9), rel=0.01)
    assert r["decode_steps"] >= 1 and r["step_over_floor"] >= 1
