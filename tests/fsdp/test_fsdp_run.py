"""The sharded RL entry end to end: torchrun with 2 gloo ranks, then a resume on 1 process.

Real processes throughout: ``torchrun --nproc-per-node 2 -m posttrain.trainer.fsdp.run``
plays real episodes on rank 0 (tiny model, math.add), trains on both ranks, writes DCP
checkpoints; the second run, a plain ``python -m posttrain.trainer.fsdp.run`` on the same
folder with more steps, resumes from the 2-rank checkpoint (DCP resharding 2 -> 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

CONFIG = """\
run_name: fsdp
seed: 3
torch_threads: 1
model:
  tiny: {hidden_size: 32, num_layers: 2, num_heads: 2, intermediate_size: 64}
domains:
  - {id: math.add-v1, difficulties: [1]}
sft: {steps: 0}
rl: {algorithm: grpo, steps: 3, prompts_per_step: 2, group_size: 3, lr: 0.001,
     max_new_tokens: 6, checkpoint_every: 2, filter_zero_variance: false, temperature: 2.0}
distributed: {backend: gloo, micro_batch_tokens: 24}
"""


def _run(cmd: list[str], cwd: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.slow
def test_two_rank_run_then_resume_on_one(tmp_path):
    from posttrain.trainer.fsdp.dist import free_port

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG)
    out = tmp_path / "run"
    entry = ["-m", "posttrain.trainer.fsdp.run", str(cfg), "--out", str(out)]
    _run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
          "--master-addr", "127.0.0.1", "--master-port", str(free_port()), *entry], tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["backend"] == "gloo" and summary["rl_steps"] == 3
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(r["dist/world_size"] == 2.0 and "loss/total" in r for r in rows)
    assert all(r["batch/micro_batches"] >= 2 for r in rows)  # the token budget cut each step
    assert sorted(p.name for p in (out / "dcp").iterdir()) == ["step-2", "step-3"]
    from posttrain.models.loading import load_model

    first, _ = load_model(out / "model")
    _run([sys.executable, *entry, "--set", "rl.steps=4"], tmp_path)  # one plain process
    summary = json.loads((out / "summary.json").read_text())
    assert summary["world_size"] == 1 and summary["resumed_from_step"] == 3
    assert summary["rl_steps"] == 4 and summary["policy_version"] == 4
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    assert sorted(p.name for p in (out / "dcp").iterdir()) == ["step-3", "step-4"]  # step-2 pruned
    second, _ = load_model(out / "model")
    assert second.state_dict().keys() == first.state_dict().keys()
