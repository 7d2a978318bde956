"""`posttrain train` with a vision-language model folder: SFT with images, RL, held-out
evaluation and the saved policy, through the CLI on the built-in tiny VLM (real pieces: a
LLaVA model saved with save_pretrained, its processor, real visual and text domains).

The end-to-end run mixes a visual and a text domain on purpose: an untrained VLM samples its
image placeholder token in text answers, which the sampler and the trainer must both rule out
(without that the update fails: "image features and image tokens do not match")."""

import json
import os
import subprocess
import sys

import pytest
import torch
import yaml

from posttrain.core.config import DomainSpec, _set_dotted, validate_config
from posttrain.core.errors import ConfigError
from posttrain.inference.vlm import VLMBackend
from posttrain.models.loading import is_vision_folder, load_model, policy_backend, processor_of, save_model
from posttrain.trainer.phases import load_policy
from posttrain.trainer.sft_vision import vision_sft_batch
from posttrain.trainer.tasks import TaskStream
from posttrain.trainer.validate import check_run_config
from posttrain.vision.tiny_vlm import build_tiny_vlm

VISUAL = "finance.chart_peak-v1"


@pytest.fixture(scope="module")
def vlm_folder(tmp_path_factory):
    model, processor = build_tiny_vlm(seed=0)
    return save_model(model, processor.tokenizer, tmp_path_factory.mktemp("vlm") / "model")


def _cfg(folder, **over):
    data = {"seed": 0, "model": {"path": str(folder)},
            "domains": [{"id": VISUAL, "difficulties": [1]}, {"id": "math.add-v1", "difficulties": [1]}],
            "sft": {"steps": 2, "batch_size": 2, "lr": 0.001, "warmup_steps": 0},
            "rl": {"steps": 2, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 6,
                   "filter_zero_variance": False, "max_policy_lag": 0},
            "eval": {"heldout_per_domain": 2, "max_new_tokens": 6}}
    for dotted, value in over.items():
        _set_dotted(data, dotted.replace("__", "."), value)
    return validate_config(data)


def test_a_saved_vlm_folder_loads_as_a_vlm_with_its_processor(vlm_folder):
    assert is_vision_folder(vlm_folder) and (vlm_folder / "processor_config.json").is_file()
    model, tok = load_model(vlm_folder)
    assert processor_of(model) is not None and tok is processor_of(model).tokenizer
    assert isinstance(policy_backend(model, tok), VLMBackend)


def test_vlm_sft_rows_carry_their_images_and_the_trainer_sees_them(vlm_folder):
    cfg = _cfg(vlm_folder)
    model, tok = load_policy(cfg)
    tasks = TaskStream([DomainSpec(id=VISUAL, difficulties=[1])], seed=1).next(2)
    batch = vision_sft_batch(VLMBackend(model, processor_of(model)), tasks, tok.pad_token_id)
    assert batch.images == tuple((t.public["images"][0],) for t in tasks)
    image_id = model.config.image_token_id
    assert all(int((row == image_id).sum()) > 0 for row in batch.input_ids)  # expanded placeholders
    # the loss changes when the pixels change: the images reach the forward
    from posttrain.trainer.sft import sft_loss
    with torch.no_grad():
        a = sft_loss(model, batch)[0]
        other = ((tasks[1].public["images"][0],), (tasks[0].public["images"][0],))
        b = sft_loss(model, batch.__class__(**{**batch.__dict__, "images": other}))[0]
    assert float(a) != float(b)


def test_vlm_runs_refuse_what_they_do_not_support_by_field(vlm_folder):
    for over, field in ((dict(dpo__steps=1), "dpo.steps"),
                        (dict(inference__backend="vllm"), "inference.backend"),
                        (dict(rl__max_policy_lag=1, async_rl__executor="process"), "async_rl.executor"),
                        (dict(domains=[{"id": "geometry3d.match_plate-v1"}]), "sft.steps")):
        with pytest.raises(ConfigError, match=field):
            check_run_config(_cfg(vlm_folder, **over))
    check_run_config(_cfg(vlm_folder, domains=[{"id": "geometry3d.match_plate-v1"}], sft__steps=0))


def test_posttrain_train_with_a_vlm_folder_end_to_end(vlm_folder, tmp_path):
    cfg = _cfg(vlm_folder)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "posttrain", "train", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rl_steps"] == 2 and set(summary["heldout_after"]["per_domain"]) >= {VISUAL}
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert any("sft/loss" in r for r in rows) and any(f"reward/{VISUAL}" in r for r in rows)
    groups = [json.loads(line) for line in (out / "groups.jsonl").read_text().splitlines()]
    assert any(VISUAL in line for line in map(json.dumps, groups))
    model, tok = load_model(out / "model")  # the saved policy is a VLM again
    assert processor_of(model) is not None
    trained = dict(model.named_parameters())
    start, _ = load_model(vlm_folder)
    assert any(not torch.equal(p, trained[n]) for n, p in start.named_parameters())


def test_every_in_process_loader_of_a_folder_samples_a_vlm_through_the_vlm_backend(vlm_folder):
    from posttrain.cli.catalogue_cmd import _backend
    from posttrain.eval.select import build_backend
    from posttrain.serve.engine import load_served

    backends = [build_backend("hf", str(vlm_folder))[0], _backend(vlm_folder),
                load_served("tiny-vlm", vlm_folder).backend]
    assert all(isinstance(b, VLMBackend) for b in backends)


def test_rl_keeps_a_declared_frozen_vision_tower_fixed_and_trains_the_rest(tmp_path):
    """The chart foundation declares its vision tower frozen (config.json); a run on a
    chart-shape domain (SFT, then RL) leaves the tower bit-identical, changes the rest, and
    the saved policy still declares it (so a second run keeps it fixed too)."""
    from posttrain.foundation.vision import build_vision_foundation, load_vision_recipe

    recipe = load_vision_recipe(None, ["training.steps=8", "training.batch_size=4",
                                       "data.baseline_per_kind=8", "data.heldout_per_kind=2",
                                       "data.kinds=[bar_ends]", "training.vision_lr_scale=0"])
    build_vision_foundation(recipe, tmp_path / "vlm", register=False)
    cfg = _cfg(tmp_path / "vlm", domains=[{"id": "finance.chart_direction-v1", "difficulties": [1]}],
               rl__max_new_tokens=24, rl__group_size=4)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    proc = subprocess.run([sys.executable, "-m", "posttrain", "train", str(path), "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    start, _ = load_model(tmp_path / "vlm")
    after, _ = load_model(tmp_path / "run" / "model")
    trained = dict(after.named_parameters())
    tower = [n for n, _ in start.named_parameters() if "vision_tower" in n]
    assert tower and all(torch.equal(p, trained[n]) for n, p in start.named_parameters() if n in tower)
    assert any(not torch.equal(p, trained[n]) for n, p in start.named_parameters() if n not in tower)
    assert all(not trained[n].requires_grad for n in tower)


def test_a_vlm_run_resumes_from_its_checkpoint_bit_identically(vlm_folder, tmp_path):
    """A VLM's checkpoints are written by save_pretrained, which stores a LLaVA under its
    original parameter names (``language_model.model.*``); the resume must map them back.
    SFT and two RL steps, stopped, then a third from the checkpoint (its KL reference
    reloaded too) ends with the same weights as the uninterrupted run; the resume skips SFT,
    so weights not restored from the checkpoint would be the untrained folder's."""
    from posttrain.trainer.pipeline import run_pipeline

    def run(out, steps):
        cfg = _cfg(vlm_folder, rl__steps=steps, rl__checkpoint_every=1, rl__kl_coef=0.01)
        return run_pipeline(cfg, out, show_progress=False)

    run(tmp_path / "whole", 3)
    run(tmp_path / "cut", 2)
    summary = run(tmp_path / "cut", 3)
    assert summary["resumed_from_step"] == 2 and summary["rl_steps"] == 3
    whole, _ = load_model(tmp_path / "whole" / "model")
    cut = dict(load_model(tmp_path / "cut" / "model")[0].named_parameters())
    assert all(torch.equal(p, cut[n]) for n, p in whole.named_parameters())
    start = dict(load_model(vlm_folder)[0].named_parameters())
    assert any(not torch.equal(p, start[n]) for n, p in whole.named_parameters())
