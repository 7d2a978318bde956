"""A real LoRA training run: SFT, DPO and RL on one adapter through the pipeline; its checkpoints
resume exactly after a SIGKILL; ``posttrain models merge`` writes a plain HF folder whose greedy
held-out answers equal base + adapter's, answer for answer.

Real pieces: the pipeline in subprocesses (``python -m posttrain train``), peft, the HF
backend, real domains and verifiers, transformers' ``from_pretrained`` without peft.
"""

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.checkpoint import latest_checkpoint
from posttrain.trainer.lora import ADAPTER_CONFIG, adapter_state_dict, load_adapter
from posttrain.trainer.phases import load_policy
from posttrain.trainer.tasks import heldout_tasks


def _cfg(tmp_path: Path, make_cfg) -> Path:
    cfg = make_cfg(rl__steps=4, rl__checkpoint_every=2, dpo__steps=1, run_name="lora")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    return path


def _posttrain(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "posttrain", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})


def _ok(proc: subprocess.Popen, timeout: float = 400) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err.decode()[-3000:]
    return out.decode()


def _rows(out: Path) -> dict:
    rows = {}
    for line in (out / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["step"]] = {k: v for k, v in row.items() if not k.startswith("time")}
    return rows


def _answers(backend, cfg) -> list[str]:
    tasks = heldout_tasks(cfg.domains[0], 24, cfg.eval.seed_offset)
    groups, _, _ = play_scheduled(backend, tasks, SamplingParams(n=1, greedy=True, max_new_tokens=4))
    return [g.trajectories[0].turns[-1].action.text for g in groups]


@pytest.mark.slow  # ~100 s at load 11 (three subprocesses: train, from_pretrained, merge)
def test_lora_run_checkpoints_and_merges(tmp_path, make_cfg):
    cfg_path = _cfg(tmp_path, make_cfg)
    run = tmp_path / "run"
    _ok(_posttrain("train", str(cfg_path), "--out", str(run)))
    summary = json.loads((run / "summary.json").read_text())
    assert summary["rl_steps"] == 4
    ck = latest_checkpoint(run)
    assert (ck / "model" / ADAPTER_CONFIG).is_file()  # the checkpoint holds the adapter only
    assert not list((ck / "model").glob("model*.safetensors"))
    meta = json.loads((ck / "meta.json").read_text())
    assert "model/adapter_model.safetensors" in meta["files"]  # size- and crc-checked
    # the final model/ loads with plain transformers, peft unimportable
    probe = ("import sys; sys.modules['peft'] = None\n"
             "from transformers import AutoModelForCausalLM\n"
             f"m = AutoModelForCausalLM.from_pretrained({str(run / 'model')!r})\n"
             "print(type(m).__name__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "LlamaForCausalLM" in out.stdout, out.stderr[-2000:]

    merged = tmp_path / "merged"
    info = json.loads(_ok(_posttrain("models", "merge", str(run), "--out", str(merged), "--json")))
    assert info["step"] == 4 and info["trainable"] < info["total"]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cfg = make_cfg(rl__steps=4)
    policy, tok = load_policy(cfg)
    load_adapter(policy, ck / "model")
    assert any(t.abs().sum() > 0 for n, t in adapter_state_dict(policy).items() if "lora_B" in n)
    plain = AutoModelForCausalLM.from_pretrained(merged)
    a = _answers(HFBackend(copy.deepcopy(policy).eval(), tok), cfg)
    b = _answers(HFBackend(plain.eval(), AutoTokenizer.from_pretrained(merged)), cfg)
    assert a == b  # answer for answer
    ids = torch.tensor([tok("12?7=")["input_ids"]])
    base, _ = load_policy(make_cfg(model__lora=None))
    with torch.no_grad():  # merged = base + scale * B @ A: the adapter's function, not the base's
        want, got = policy(input_ids=ids).logits, plain(input_ids=ids).logits
        assert (want - got).abs().max() < 1e-4
        assert (base(input_ids=ids).logits - got).abs().max() > 1e-2


@pytest.mark.slow
def test_killed_lora_run_resumes_bit_identical(tmp_path, make_cfg):
    cfg_path = _cfg(tmp_path, make_cfg)
    ref = _posttrain("train", str(cfg_path), "--out", str(tmp_path / "ref"))
    killed = tmp_path / "killed"
    proc = _posttrain("train", str(cfg_path), "--out", str(killed), "--set", "rl.steps=1000")
    ckpts, deadline = killed / "checkpoints", time.time() + 300
    while time.time() < deadline:
        done = [p for p in ckpts.glob("step_*") if (p / "meta.json").exists()] if ckpts.exists() else []
        if any(int(p.name.split("_")[1]) >= 2 for p in done):
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _ok(ref)
    _ok(_posttrain("train", str(cfg_path), "--out", str(killed)))
    a, b = _rows(tmp_path / "ref"), _rows(killed)
    assert sorted(a) == sorted(b)
    for step in a:
        assert a[step] == b[step], f"step {step} differs"
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (tmp_path / "ref", killed))
    assert sb["resumed_from_step"] >= 2 and sa["heldout_after"] == sb["heldout_after"]
    from safetensors.torch import load_file

    wa, wb = (load_file(str(d / "adapter" / "adapter_model.safetensors")) for d in (tmp_path / "ref", killed))
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_lora_async_thread_run_syncs_adapter_only(tmp_path, make_cfg):
    """In process (~13 s at load 15): the async loop (thread producers, lag 1) publishes the
    adapter alone into its ring, and the run writes a resumable LoRA checkpoint."""
    from safetensors.torch import load_file

    from posttrain.trainer.pipeline import run_pipeline

    cfg = make_cfg(rl__steps=3, rl__max_policy_lag=1, rl__checkpoint_every=2, sft__steps=10,
                   eval__heldout_per_domain=2)
    summary = run_pipeline(cfg, tmp_path / "run", show_progress=False)
    assert summary["rl_steps"] == 3 and summary["policy_version"] == 3
    ck = latest_checkpoint(tmp_path / "run")  # resumable: the adapter, crc-listed
    assert (ck / "model" / ADAPTER_CONFIG).is_file() and (tmp_path / "run" / "adapter").is_dir()
    behaviour = sorted((ck / "behaviour").glob("v*.safetensors"))
    assert behaviour  # the ring's older versions, as the async loop published them
    for f in behaviour:
        keys = load_file(str(f)).keys()
        assert keys and all("lora_" in k for k in keys), f"{f.name} holds base weights"
