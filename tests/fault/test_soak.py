"""The soak (bench/soak.py): its verdict on synthetic series, and a half-minute real soak.

The real one runs the pipeline on configs/soak.yaml (tiny model, async, SQLite work store,
bubblewrap sandboxes) for 24 s with a sample every 2 s, and checks that the JSON's slopes are
fitted from the samples it reports and that those samples are of the real process tree.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _reliability_probe as probe  # noqa: E402
import soak  # noqa: E402


def _series(n, **grow):
    """n samples a minute apart, every resource flat at 10 except ``grow`` (per sample)."""
    out = []
    for i in range(n):
        s = {"t_s": 60.0 * i, "step": 5 * i, **{r: 10.0 for r in soak.RESOURCES}}
        for r, per in grow.items():
            s[r] += per * i
        out.append(s)
    return out


def test_a_steady_leak_fails_and_its_slope_is_per_hour():
    v = soak.verdict(_series(30, fds=1.0), warmup_s=300.0)  # one fd a minute
    assert v["slopes_per_hour"]["fds"] == pytest.approx(60.0)
    assert any(x.startswith("fds:") for x in v["violations"])
    assert v["fitted_samples"] == 25


def test_spikes_and_warm_up_growth_are_not_leaks():
    series = _series(30)
    for i, s in enumerate(series):
        s["threads"] += 8.0 if i % 7 == 3 else 0.0   # producer threads that come and go
        s["rss_mb"] += 400.0 if i < 5 else 0.0       # growth inside the warm-up
    v = soak.verdict(series, warmup_s=300.0)
    assert v["violations"] == [] and v["slopes_per_hour"]["threads"] == 0.0


def test_a_bounded_pool_adding_a_sandbox_mid_run_is_a_step_not_a_leak():
    series = _series(40)
    for s in series[20:]:  # one more sandbox at minute 20 of 40: +6 processes, +30 fds, for good
        s["processes"] += 6.0
        s["fds"] += 30.0
    v = soak.verdict(series, warmup_s=300.0)
    assert v["slopes_per_hour"]["processes"] > 2.0  # a whole-window fit alone would call it growth
    assert v["later_half_slopes_per_hour"]["processes"] == 0.0 and v["violations"] == []


def test_records_are_budgeted_per_step_not_per_hour():
    per_sample_mb = 5 * 100 / 1024  # 100 KiB a step, 5 steps a sample: within the run folder's budget
    v = soak.verdict(_series(30, run_dir_mb=per_sample_mb), warmup_s=0.0)
    assert v["kb_per_step"]["run_dir_mb"] == pytest.approx(100.0, rel=1e-3) and v["violations"] == []
    v = soak.verdict(_series(30, work_store_mb=per_sample_mb), warmup_s=0.0)
    assert any(x.startswith("work_store_mb:") for x in v["violations"])


def test_too_few_samples_is_a_failure_not_a_pass():
    assert soak.verdict(_series(2), warmup_s=0.0)["violations"]


def test_short_soak_reports_slopes_of_its_real_samples(tmp_path):
    minutes, interval, warmup_min = 0.4, 2.0, 0.1
    cmd = [sys.executable, str(BENCH / "soak.py"), "--minutes", str(minutes), "--interval-s", str(interval),
           "--warmup-min", str(warmup_min), "--out", str(tmp_path), "--set", "sft.steps=2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["ok"] == (proc.returncode == 0) == (res["violations"] == [])

    samples = res["samples"]
    ts = [s["t_s"] for s in samples]
    assert len(samples) >= int(minutes * 60 / interval) - 1 and ts == sorted(set(ts))
    assert all(abs(b - a - interval) < interval for a, b in zip(ts, ts[1:]))  # on the interval
    # the samples are of the real run: a tree with sandboxes, a growing run folder, trained steps
    assert min(s["rss_mb"] for s in samples) > 50 and max(s["processes"] for s in samples) > 2
    assert max(s["live_sandboxes"] for s in samples) >= 1
    assert samples[-1]["sandbox_created"] + samples[-1]["sandbox_recycled"] > 0
    assert 0 < samples[-1]["step"] <= res["steps"] and samples[-1]["run_dir_mb"] > samples[0]["run_dir_mb"]
    assert samples[-1]["work_store_mb"] > 0

    # the slopes are the Theil-Sen fit of exactly the samples after the warm-up
    late = [s for s in samples if s["t_s"] >= res["warmup_s"]]
    assert res["fitted_samples"] == len(late) >= 3
    for r in soak.RESOURCES:
        want = probe.theil_sen([s["t_s"] / 3600 for s in late], [s[r] for s in late])
        assert res["slopes_per_hour"][r] == pytest.approx(want, abs=1e-3), r
    assert set(res["tolerance_per_hour"]) <= set(res["slopes_per_hour"])

    # stopping the run leaves nothing: no child process, sandbox or lease
    after = res["after_stop"]
    assert (after["processes"], after["live_sandboxes"], after["sandbox_leases"]) == (1, 0, 0)
