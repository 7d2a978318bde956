"""A run killed mid-RL and resumed from its checkpoint gives the same metrics as one never killed.

Real pieces throughout: the tiny Llama model (shrunk for speed), the HF backend, real
domains and verifiers, the real pipeline in a subprocess that is SIGKILLed.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CFG = """
run_name: resume
seed: 3
model: {tiny: {hidden_size: 32, num_layers: 2, num_heads: 2, intermediate_size: 64}}
domains: [{id: math.add-v1, difficulties: [1]}, {id: math.compare-v1, difficulties: [1]}]
sft: {steps: 4, batch_size: 8}
rl: {steps: 8, prompts_per_step: 2, group_size: 4, max_new_tokens: 4, checkpoint_every: 2,
     lr: 0.01, filter_zero_variance: false, max_policy_lag: 0}
eval: {heldout_per_domain: 4, max_new_tokens: 4}
"""


def _run(cfg: Path, out: Path, extra=()):
    return subprocess.Popen([sys.executable, "-m", "posttrain", "train", str(cfg), "--out", str(out),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


def _rows(out: Path):
    rows = {}
    for line in (out / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["step"]] = {k: v for k, v in row.items() if not k.startswith("time")}
    return rows


@pytest.mark.learning
def test_killed_run_resumes_exactly(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CFG)
    ref = _run(cfg, tmp_path / "ref")
    assert ref.wait(timeout=300) == 0, ref.stderr.read().decode()[-3000:]

    killed = tmp_path / "killed"
    proc = _run(cfg, killed, ["--set", "rl.steps=1000"])  # would run long: we kill it
    deadline = time.time() + 240
    ckpts = killed / "checkpoints"
    while time.time() < deadline:
        done = [p for p in ckpts.glob("step_*") if (p / "meta.json").exists()] if ckpts.exists() else []
        if any(int(p.name.split("_")[1]) >= 4 for p in done):
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = _run(cfg, killed)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err.decode()[-3000:]

    a, b = _rows(tmp_path / "ref"), _rows(killed)
    assert sorted(a) == sorted(b)  # every step logged, none twice (rows are keyed by step)
    for step in a:
        assert a[step] == b[step], f"step {step} differs"
    sa = json.loads((tmp_path / "ref" / "summary.json").read_text())
    sb = json.loads((killed / "summary.json").read_text())
    assert sb["resumed_from_step"] >= 4
    assert sa["heldout_after"] == sb["heldout_after"]
    assert sb["rl_steps"] == 8 and sb["policy_version"] == 8
    # every RL group recorded exactly once: versions 0..7, prompts_per_step=2 each
    versions = [json.loads(ln)["policy_version"] for ln in (killed / "groups.jsonl").read_text().splitlines()]
    assert sorted(versions) == sorted(v for v in range(8) for _ in range(2))
