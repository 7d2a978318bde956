"""The generated domain catalogue (issue 19, item 4): current, incremental, pure rendering.

``test_committed_catalogue_is_current`` is the CI check: after adding or changing a domain,
run ``posttrain domains catalogue`` and commit ``docs/catalogue.md`` and
``posttrain/domains/calibration.json``.
"""

import copy
import json
from pathlib import Path

from typer.testing import CliRunner

from posttrain.cli.catalogue_cmd import render
from posttrain.cli.main import app
from posttrain.domains.calibration import PATH

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "catalogue.md"


def _catalogue(*args):
    return CliRunner().invoke(app, ["domains", "catalogue", *args])


def test_committed_catalogue_is_current():
    r = _catalogue("--check", "--out", str(DOC))
    assert r.exit_code == 0, r.output


def test_check_names_stale_domains_and_a_stale_page(tmp_path):
    doc = json.loads(PATH.read_text())
    data, out = tmp_path / "cal.json", tmp_path / "catalogue.md"
    gone = copy.deepcopy(doc)
    entry = gone["domains"].pop("math.add-v1")
    gone["domains"]["math.retired-v1"] = entry
    gone["domains"]["math.sub-v1"]["record"]["difficulties"] = [1]
    data.write_text(json.dumps(gone))
    out.write_text(render(gone))
    r = _catalogue("--check", "--data", str(data), "--out", str(out))
    assert r.exit_code == 1
    assert "math.add-v1: new domain" in r.output
    assert "math.retired-v1: no longer registered" in r.output
    assert "math.sub-v1: changed: difficulties" in r.output
    data.write_text(json.dumps(doc))
    out.write_text(render(doc) + "edited by hand\n")
    r = _catalogue("--check", "--data", str(data), "--out", str(out))
    assert r.exit_code == 1 and "not the rendering" in r.output


def test_regenerating_measures_only_what_changed(tmp_path):
    doc = json.loads(PATH.read_text())
    data, out = tmp_path / "cal.json", tmp_path / "catalogue.md"
    stale = copy.deepcopy(doc)
    del stale["domains"]["math.add-v1"]
    stale["domains"]["math.retired-v1"] = copy.deepcopy(doc["domains"]["math.sub-v1"])
    data.write_text(json.dumps(stale))
    r = _catalogue("--data", str(data), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "] math.add-v1" in r.output and "math.sub-v1" not in r.output  # only what changed
    new = json.loads(data.read_text())
    add = new["domains"]["math.add-v1"]
    assert "math.retired-v1" not in new["domains"]
    assert add["record"] == doc["domains"]["math.add-v1"]["record"]
    assert all(c["pass_rate"] == 1.0 for c in add["reference"].values())  # the reference solves it
    assert add["verifier_components"] and add["hidden"] == ["answer"] and add["probes"]
    assert "model" not in add  # no --model: the model's column is "-", never made up
    assert out.read_text() == render(new)
    assert "| `math.add-v1` |" in out.read_text()
    assert _catalogue("--check", "--data", str(data), "--out", str(out)).exit_code == 0


def test_render_is_a_pure_function_of_the_data():
    doc = json.loads(PATH.read_text())
    assert render(doc) == render(copy.deepcopy(doc))
    text = render(doc)
    assert text.startswith("# Domain catalogue") and "issue 12" in text
    assert text.count("\n| `") == len(doc["domains"])


def test_a_reworded_skill_line_keeps_the_measured_figures(tmp_path):
    doc = json.loads(PATH.read_text())
    data, out = tmp_path / "cal.json", tmp_path / "catalogue.md"
    old = copy.deepcopy(doc)
    entry = old["domains"]["math.sub-v1"]
    entry["record"]["summary"] = "an older wording"
    entry["model"] = {"1": {"pass_rate": 0.25, "n_tasks": 8}}  # a figure no rerun would make
    entry["reference"]["1"]["pass_rate"] = 0.5
    data.write_text(json.dumps(old))
    r = _catalogue("--data", str(data), "--out", str(out))
    assert r.exit_code == 0, r.output
    new = json.loads(data.read_text())["domains"]["math.sub-v1"]
    assert new["record"] == doc["domains"]["math.sub-v1"]["record"]  # the wording is current
    assert new["model"] == {"1": {"pass_rate": 0.25, "n_tasks": 8}}  # nothing dropped
    assert new["reference"]["1"]["pass_rate"] == 0.5  # nor re-measured
    old["domains"]["math.sub-v1"]["record"]["difficulties"] = [1, 2]  # a real change re-measures
    data.write_text(json.dumps(old))
    assert _catalogue("--data", str(data), "--out", str(out)).exit_code == 0
    again = json.loads(data.read_text())["domains"]["math.sub-v1"]
    assert "model" not in again and again["reference"]["1"]["pass_rate"] == 1.0
