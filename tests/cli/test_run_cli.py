"""Smoke tests of the run commands: quickstart/train end to end on a shrunk model; bad configs."""

import json

from typer.testing import CliRunner

from posttrain.cli.main import app

runner = CliRunner()
SMALL = ["--set", "model.tiny.hidden_size=32", "--set", "model.tiny.num_layers=1",
         "--set", "model.tiny.num_heads=2", "--set", "model.tiny.intermediate_size=64",
         "--set", "sft.steps=2", "--set", "sft.batch_size=4", "--set", "rl.steps=2",
         "--set", "rl.prompts_per_step=2", "--set", "rl.group_size=2",
         "--set", "rl.checkpoint_every=0", "--set", "eval.heldout_per_domain=2"]


def test_help_lists_every_command():
    out = runner.invoke(app, ["--help"]).output
    for cmd in ("quickstart", "train", "domains", "sandbox", "eval", "models", "audit"):
        assert cmd in out


def test_quickstart_runs_end_to_end(tmp_path):
    res = runner.invoke(app, ["quickstart", "--out", str(tmp_path / "qs"), *SMALL])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "qs" / "summary.json").read_text())
    assert set(summary["heldout_after"]["per_domain"]) == set(summary["domains"])
    for phase in ("model", "sft", "eval_before", "rl", "eval_after"):
        assert phase in summary["wall_s"]
    for name in ("metrics.jsonl", "report.html", "model/config.json", "groups.jsonl"):
        assert (tmp_path / "qs" / name).exists(), name
    assert list((tmp_path / "qs" / "tensorboard").iterdir())


def test_train_rejects_a_bad_config_before_any_work(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("rl:\n  group_size: 0\n  lrr: 1\n")
    res = runner.invoke(app, ["train", str(cfg), "--out", str(tmp_path / "run")])
    assert res.exit_code == 2
    assert "rl.group_size" in res.output and "rl.lrr" in res.output
    assert not (tmp_path / "run").exists()


def test_train_starts_from_a_local_hf_folder(tmp_path):
    from posttrain.core.config import TinyModelConfig
    from posttrain.models import build_tiny_model, save_model

    model, tok = build_tiny_model(TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                                  intermediate_size=64), seed=5)
    save_model(model, tok, tmp_path / "hf")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("domains: [{id: math.add-v1, difficulties: [1]}]\n")
    res = runner.invoke(app, ["train", str(cfg), "--model", str(tmp_path / "hf"),
                              "--out", str(tmp_path / "run"), *SMALL])
    assert res.exit_code == 0, res.output
    assert f"path: {tmp_path / 'hf'}" in (tmp_path / "run" / "config.yaml").read_text()
    assert (tmp_path / "run" / "model" / "model.safetensors").exists()
