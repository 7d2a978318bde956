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


def test_calibrate_plays_multi_turn_domains_through_the_engine():
    """A tool and a sandbox domain: the reference policy passes every episode (so the turns
    really ran: one action would not), a policy that answers at once passes none."""
    from posttrain.domains import get_domain, sample_task
    from posttrain.eval.select import reference_script, wrong_script
    from posttrain.rollout.scripted import ScriptedPolicy

    ids = ["tools.fx_cross-v1", "terminal.line_endings-v1"]
    tasks = [sample_task(get_domain(i), 1_000_000 + k, d) for i in ids for k in range(2) for d in (1, 3)]
    good = calibrate(ScriptedPolicy(tasks, reference_script), ids, n_tasks=2, difficulties=[1, 3],
                     seed=1_000_000)
    bad = calibrate(ScriptedPolicy(tasks, wrong_script), ids, n_tasks=2, difficulties=[1, 3],
                    seed=1_000_000)
    for i in ids:
        assert len(tasks[0].prompt) and all(len(get_domain(i).reference_actions(t)) >= 2
                                            for t in tasks if t.domain == i)
        for d in ("1", "3"):
            assert good["domains"][i][d]["pass_rate"] == 1.0 and good["domains"][i][d]["n_samples"] == 2
            assert bad["domains"][i][d]["pass_rate"] == 0.0 and bad["domains"][i][d]["errors"] == 0
