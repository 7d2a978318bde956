"""A real tiny foundation build: it learns, registers, verifies, resumes exactly, and post-trains.

Real pieces: the corpus builder (episode engine, BPE), PyTorch pre-training of a Llama,
``save_pretrained``/``from_pretrained``, the SQLite version registry, ``posttrain foundation``
and ``posttrain train`` through the CLI.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
import yaml
from foundation_helpers import TINY, tiny_recipe
from typer.testing import CliRunner

from posttrain.foundation.build import verify_foundation
from posttrain.foundation.corpus import build_corpus
from posttrain.foundation.train import BuildInterrupted, pretrain
from posttrain.models.loading import load_model
from posttrain.models.tokenizer import CHAT_TEMPLATE
from posttrain.models.versions import VersionRegistry


def test_tiny_build_learns(tiny_build, corpus_cache):
    out, info, _ = tiny_build
    # a context-free model scores the unigram loss; the built one must be far below it
    assert info["val_loss"] < 0.6 * info["unigram_val_loss"], info
    assert info["corpus"]["demos"] == 24 and info["tokens_trained"] == TINY["training"]["tokens"]
    model, tok = load_model(out)
    assert tok.chat_template == CHAT_TEMPLATE and len(tok) == TINY["tokenizer"]["vocab_size"]
    assert model.config.hidden_size == TINY["model"]["hidden_size"]
    assert not (out / "_build").exists()  # checkpoints are not shipped
    # the saved model is the trained one: its validation loss, recomputed from the saved
    # weights on the cached corpus, is the one foundation.json records
    from posttrain.foundation.train import split_rows, validation_loss

    corpus = build_corpus(tiny_recipe(), corpus_cache)  # the cache hit of the build's corpus
    assert corpus.corpus_hash == info["corpus_hash"]
    _, val = split_rows(len(corpus.tokens), TINY["training"]["val_fraction"])
    assert validation_loss(model, corpus.tokens, val, 8) == pytest.approx(info["val_loss"], abs=1e-3)


def test_registered_and_verified(tiny_build, tmp_path):
    out, info, registry = tiny_build
    with VersionRegistry(registry) as reg:
        v = reg.get(info["version_id"])
        assert v.kind == "foundation" and reg.verify(v.id)
    notes = json.loads(v.notes)
    assert notes["recipe_hash"] == info["recipe_hash"] and notes["corpus_hash"] == info["corpus_hash"]
    assert verify_foundation(out) == []
    from posttrain.cli.main import app

    recipe_file = tmp_path / "tiny.yaml"
    recipe_file.write_text(yaml.safe_dump(TINY))
    assert CliRunner().invoke(app, ["foundation", "verify", str(out), "--recipe", str(recipe_file)]).exit_code == 0
    recipe_file.write_text(yaml.safe_dump({**TINY, "name": "other"}))
    res = CliRunner().invoke(app, ["foundation", "verify", str(out), "--recipe", str(recipe_file)])
    assert res.exit_code == 1 and "the given recipe hashes to" in res.output


def test_tampering_is_detected(tiny_build, tmp_path):
    from posttrain.cli.main import app

    out, info, _ = tiny_build
    weights = tmp_path / "w"
    shutil.copytree(out, weights)
    data = bytearray((weights / "model.safetensors").read_bytes())
    data[-5] ^= 0x01  # one bit of one float
    (weights / "model.safetensors").write_bytes(bytes(data))
    problems = verify_foundation(weights)
    assert len(problems) == 1 and "model.safetensors" in problems[0]
    res = CliRunner().invoke(app, ["foundation", "verify", str(weights)])
    assert res.exit_code == 1 and "model.safetensors" in res.output
    recipe = tmp_path / "r"
    shutil.copytree(out, recipe)
    doc = json.loads((recipe / "recipe.json").read_text())
    doc["training"]["lr"] = 0.5
    (recipe / "recipe.json").write_text(json.dumps(doc))
    assert any("recipe.json hashes to" in p for p in verify_foundation(recipe))
    (recipe / "model.safetensors").unlink()
    assert any("model.safetensors is missing" in p for p in verify_foundation(recipe))


def test_killed_build_resumes_bit_for_bit(tmp_path, corpus_cache):
    recipe = tiny_recipe(training={"tokens": 7 * 4 * 128, "batch_size": 4, "checkpoint_every": 2})
    corpus = build_corpus(recipe, corpus_cache)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(corpus.tokenizer_dir))
    whole = pretrain(recipe, corpus.tokens, tok, tmp_path / "whole", progress=False)
    with pytest.raises(BuildInterrupted):  # killed after step 3: the last checkpoint is step 2
        pretrain(recipe, corpus.tokens, tok, tmp_path / "killed", progress=False, stop_after=3)
    resumed = pretrain(recipe, corpus.tokens, tok, tmp_path / "killed", progress=False)
    assert resumed.resumed_from == 2 and whole.resumed_from == 0
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [v for _, v in resumed.history] == [v for _, v in whole.history]
    assert resumed.val_loss == whole.val_loss
    # a checkpoint of another corpus is refused, not resumed on new data
    from posttrain.core.errors import ConfigError

    with pytest.raises(BuildInterrupted):
        pretrain(recipe, corpus.tokens, tok, tmp_path / "mixed", progress=False, stop_after=3,
                 corpus_hash="a" * 64)
    with pytest.raises(ConfigError, match="was trained on corpus aaaaaaaaaaaa"):
        pretrain(recipe, corpus.tokens, tok, tmp_path / "mixed", progress=False, corpus_hash="b" * 64)
    # the check can fail: a different data order gives different weights
    other = pretrain(tiny_recipe(training={**recipe.training.model_dump(), "seed": 1}), corpus.tokens,
                     tok, tmp_path / "other", progress=False)
    assert not all(torch.equal(a[k], other.model.state_dict()[k]) for k in a)


def test_posttrain_from_the_built_folder(tiny_build, tmp_path):
    """``posttrain train`` with model.path at the built folder runs an RL step on it."""
    from posttrain.cli.main import app

    out, _, _ = tiny_build
    cfg = {"run_name": "from-foundation", "torch_threads": 1, "model": {"path": str(out)},
           "domains": [{"id": "math.add-v1", "difficulties": [1]}],
           "sft": {"steps": 0}, "rl": {"steps": 1, "prompts_per_step": 2, "group_size": 2,
                                       "max_new_tokens": 6, "max_policy_lag": 0},
           "eval": {"heldout_per_domain": 4, "max_new_tokens": 6}}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output[-2000:]
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    rl = [r for r in rows if any(k.startswith("rl/") or k.startswith("loss") for k in r)]
    assert rl, rows[:3]
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert saved["model"]["path"] == str(out)


@pytest.mark.slow
def test_sigkilled_cli_build_resumes(tmp_path, corpus_cache):
    """``posttrain foundation build`` SIGKILLed after its first checkpoint, re-run with the same
    --out: it resumes from that checkpoint and ends with the uninterrupted build's weights."""
    import os
    import signal
    import subprocess
    import sys
    import time

    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({**TINY, "training": {**TINY["training"], "checkpoint_every": 4,
                                                           "tokens": 40 * 8 * 128}}))

    def cmd(out):
        return [sys.executable, "-m", "posttrain", "foundation", "build", "--recipe", str(recipe),
                "--out", str(out), "--cache-dir", str(corpus_cache), "--no-register", "--json"]

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    whole = subprocess.run(cmd(tmp_path / "whole"), capture_output=True, env=env, timeout=600)
    assert whole.returncode == 0, whole.stderr.decode()[-2000:]
    proc = subprocess.Popen(cmd(tmp_path / "killed"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    ckpts = tmp_path / "killed" / "_build" / "checkpoints"
    deadline = time.time() + 300
    while time.time() < deadline and not (ckpts.exists() and any(p.name.startswith("step_") for p in ckpts.iterdir())):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    again = subprocess.run(cmd(tmp_path / "killed"), capture_output=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    info = json.loads(again.stdout)
    assert info["resumed_from_step"] > 0
    assert info["weights_sha256"] == json.loads(whole.stdout)["weights_sha256"]
