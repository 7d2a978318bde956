"""A placed run (2 FSDP ranks, 2 engines, 1 sandbox host on a local Ray cluster), its driver
SIGKILLed after a few checkpoints, resumed by the same command: the final weights equal an
uninterrupted run's bit for bit, and every step is logged once.

Real processes throughout: ``python -m posttrain.distributed.placement`` drivers that start
their own Ray clusters; the kill takes the driver's whole process tree down (Ray's processes
are its children), which the test checks before it resumes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

pytestmark = [pytest.mark.ray, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "scale" / "cpu-placement.yaml"
STEPS = 40


WARM_DOMAINS = "domains=[{id: math.add-v1, difficulties: [1]}, {id: math.compare-v1, difficulties: [1]}]"
_SETS: list[str] = []


def _cmd(out: Path) -> list[str]:
    sets = [f"rl.steps={STEPS}", "rl.lr=0.001", "rl.temperature=1.0", WARM_DOMAINS, *_SETS]
    return [sys.executable, "-m", "posttrain", "train", str(CONFIG), "--out", str(out),
            *[a for s in sets for a in ("--set", s)]]


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1"}


def _finish(out: Path) -> None:
    proc = subprocess.run(_cmd(out), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _weights(out: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    files = sorted((out / "model").glob("*.safetensors"))
    assert files, f"no weights in {out / 'model'}"
    return {k: v for f in files for k, v in load_file(f).items()}


def _steps_saved(out: Path) -> int:
    """The newest checkpointed step (the run keeps only its two newest dcp/step-N folders)."""
    steps = [int(p.name.split("-")[1]) for p in (out / "dcp").glob("step-*")
             if not p.name.endswith(".tmp")] if (out / "dcp").exists() else []
    return max(steps, default=0)


def _kill_tree_after(out: Path, checkpoints: int) -> int:
    """Start the run, SIGKILL its driver once step ``checkpoints`` is checkpointed; the step reached."""
    proc = subprocess.Popen(_cmd(out), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 600
        while _steps_saved(out) < checkpoints:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < end, "no checkpoints after 600 s"
            time.sleep(0.05)
        tree = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    _, alive = psutil.wait_procs(tree, timeout=90)
    assert not alive, f"processes of the killed run still alive: {[p.pid for p in alive]}"
    return _steps_saved(out)


def test_killed_driver_resumes_to_the_uninterrupted_weights(tmp_path):
    from async_helpers import warm_policy

    from posttrain.models.loading import save_model

    model, tok = warm_policy()  # the SFT-ed tiny policy: rewards vary, gradients are real
    _SETS[:] = [f"model.path={save_model(model, tok, tmp_path / 'warm')}"]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _finish(whole)
    reached = _kill_tree_after(killed, 3)
    assert not (killed / "summary.json").exists() and 3 <= reached < STEPS
    _finish(killed)  # the same command again
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["resumed_from_step"] >= 3 and summary["rl_steps"] == STEPS
    assert summary["placement"]["trainer"]["count"] == 2
    rows = [json.loads(ln) for ln in (killed / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    a, b = _weights(whole), _weights(killed)
    assert a.keys() == b.keys()
    diff = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert diff == 0.0, f"max |dw| {diff} between the resumed and the uninterrupted run"
    assert any(not torch.equal(v, a[k]) for k, v in model.state_dict().items() if k in a)
    grads = [r["loss/grad_norm"] for r in rows if "loss/grad_norm" in r]
    assert sum(g > 0 for g in grads) >= STEPS // 2  # real policy gradients, not a frozen policy
