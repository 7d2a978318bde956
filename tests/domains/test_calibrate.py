"""Calibration: pass rates per (domain, difficulty), JSON + PNG, on a scripted and a real model."""

import json
import re

import pytest
from typer.testing import CliRunner

from posttrain.cli._calibrate import calibrate, write_outputs
from posttrain.cli.main import app


def _adder(messages, j):
    """Answers additions right only at difficulty 1 (one-digit operands), sorts wrong always."""
    text = messages[-1]["content"]
    m = re.fullmatch(r"(\d+)\+(\d+)=", text)
    if m and len(m.group(1)) == 1:
        return str(int(m.group(1)) + int(m.group(2)))
    return "0" if j == 0 else "1"


def test_calibrate_pass_rates_with_scripted_backend(tmp_path):
    fake = pytest.importorskip("posttrain.inference.fake")
    res = calibrate(fake.FakeBackend(_adder), ["math.add-v1", "algorithms.sort-v1"], n_tasks=5,
                    samples=2, difficulties=[1, 2])
    add = res["domains"]["math.add-v1"]
    assert set(add) == {"1", "2"}
    assert add["1"]["pass_rate"] == 1.0 and add["1"]["n_samples"] == 10
    assert add["2"]["pass_rate"] == 0.0 and add["2"]["errors"] == 0
    assert res["domains"]["algorithms.sort-v1"]["1"]["pass_rate"] == 0.0
    paths = write_outputs(res, tmp_path / "cal")
    assert json.loads(paths["json"].read_text())["domains"]["math.add-v1"]["1"]["pass_rate"] == 1.0
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_cli_on_tiny_model(tmp_path):
    tiny = pytest.importorskip("posttrain.models.tiny")
    loading = pytest.importorskip("posttrain.models.loading")
    pytest.importorskip("posttrain.inference.hf")
    model, tok = tiny.build_tiny_model(seed=0)
    loading.save_model(model, tok, tmp_path / "m")
    r = CliRunner().invoke(app, ["domains", "calibrate", "--model", str(tmp_path / "m"),
                                 "--domains", "math.add-v1,math.compare-v1", "--n", "2",
                                 "--max-new-tokens", "4", "--out", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert set(res["domains"]) == {"math.add-v1", "math.compare-v1"}
    cell = res["domains"]["math.add-v1"]["4"]
    assert cell["n_tasks"] == 2 and 0.0 <= cell["pass_rate"] <= 1.0
    assert (tmp_path / "out" / "calibration.json").is_file()
    assert (tmp_path / "out" / "calibration.png").stat().st_size > 1000


def test_calibrate_cli_bad_model_path(tmp_path):
    pytest.importorskip("posttrain.models.loading")
    r = CliRunner().invoke(app, ["domains", "calibrate", "--model", str(tmp_path / "none"),
                                 "--out", str(tmp_path / "o"), "--domains", "math.add-v1"])
    assert r.exit_code == 2 and "not a folder" in r.output
