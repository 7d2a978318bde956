"""Smoke tests of ``posttrain domains``: JSON shapes on stdout, exit codes, no hidden data."""

import json

import pytest
from typer.testing import CliRunner

from posttrain.cli.main import app
from posttrain.core.types import Score
from posttrain.domains import DOMAINS, get_domain, make_task, sample_task

runner = CliRunner()
BASIC = {"math.add-v1", "math.sub-v1", "math.mul-v1", "math.compare-v1",
         "text_data.reverse-v1", "algorithms.sort-v1"}


def _json(result):
    return json.loads(result.stdout)  # raises if stdout is not exactly one JSON document


def test_list_json_shape():
    r = runner.invoke(app, ["domains", "list", "--json"])
    assert r.exit_code == 0, r.output
    rows = _json(r)
    assert BASIC <= {row["id"] for row in rows}
    for row in rows:
        assert {"id", "family", "difficulties", "native", "multi_turn", "needs_sandbox", "tier",
                "vision"} <= set(row)
        assert row["tier"] in ("light", "real") and isinstance(row["vision"], bool)
        assert all(isinstance(d, int) for d in row["difficulties"])
    add = next(row for row in rows if row["id"] == "math.add-v1")
    assert add["difficulties"] == [1, 2, 3, 4] and add["native"] is True
    assert add["multi_turn"] is False and add["needs_sandbox"] is False
    assert add["tier"] == "light" and add["vision"] is False


def test_list_family_filter_and_unknown_family():
    rows = _json(runner.invoke(app, ["domains", "list", "--json", "--family", "text_data"]))
    assert rows and {row["family"] for row in rows} == {"text_data"}
    r = runner.invoke(app, ["domains", "list", "--family", "cooking"])
    assert r.exit_code == 2 and "unknown family" in r.output


def test_list_marks_non_native():
    class Adapter:
        id = "logic.testadapter-v1"
        family = "logic"
        difficulties = (1, 2, 3)
        env_kind = "single_turn"
        native = False

    DOMAINS.add(Adapter.id, Adapter())
    try:
        rows = _json(runner.invoke(app, ["domains", "list", "--json", "--family", "logic"]))
        assert next(r for r in rows if r["id"] == Adapter.id)["native"] is False
    finally:
        DOMAINS.remove(Adapter.id)


def test_list_table():
    r = runner.invoke(app, ["domains", "list"])
    assert r.exit_code == 0 and "math.add-v1" in r.stdout


def test_sample_json_is_public_view():
    r = runner.invoke(app, ["domains", "sample", "math.mul-v1", "--difficulty", "3", "--seed", "5", "--json"])
    assert r.exit_code == 0, r.output
    view = _json(r)
    task = sample_task(get_domain("math.mul-v1"), 5, 3)
    assert view == json.loads(json.dumps(task.public_view()))
    assert "hidden" not in view and task.hidden["answer"] not in r.stdout


def test_sample_text_and_default_difficulty():
    r = runner.invoke(app, ["domains", "sample", "text_data.reverse", "-s", "2"])
    assert r.exit_code == 0 and "rev " in r.stdout
    assert sample_task(get_domain("text_data.reverse-v1"), 2, 1).hidden["answer"] not in r.stdout


@pytest.mark.parametrize("args", [["sample", "math.ad", "--json"], ["check", "math.ad", "--json"]])
def test_unknown_id_did_you_mean_exit_2(args):
    r = runner.invoke(app, ["domains", *args])
    assert r.exit_code == 2
    assert "did you mean" in r.output and "math.add-v1" in r.output
    assert r.stdout == "" and isinstance(r.exception, SystemExit)  # no traceback


def test_sample_bad_difficulty_exit_2():
    r = runner.invoke(app, ["domains", "sample", "math.add-v1", "-d", "9"])
    assert r.exit_code == 2 and "difficulties" in r.output


def test_check_json_ok():
    r = runner.invoke(app, ["domains", "check", "math.add-v1", "algorithms.sort", "--json",
                            "--workers", "1", "--seeds", "1"])
    assert r.exit_code == 0, r.output
    rows = _json(r)
    assert [row["id"] for row in rows] == ["math.add-v1", "algorithms.sort-v1"]
    assert all(row["ok"] is True and row["failures"] == [] for row in rows)


def test_check_needs_ids_or_all():
    r = runner.invoke(app, ["domains", "check"])
    assert r.exit_code == 2 and "--all" in r.output


class _Chatty:
    """Prints while generating and gives credit to padded answers: stdout must stay clean."""

    id = "text_data.testchatty-v1"
    family = "text_data"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng, difficulty):
        print("generating!")  # noqa: T201 - the point of the test
        w = "".join(rng.choice("abcdef") for _ in range(6))
        return make_task(self.id, difficulty, f"rev {w}=", answer=w[::-1])

    def solve(self, task):
        return task.hidden["answer"]

    def score(self, task, answer):
        return Score(float(task.hidden["answer"] in answer))

    def probes(self, task):
        return {}


@pytest.fixture
def chatty():
    dom = _Chatty()
    DOMAINS.add(dom.id, dom)
    yield dom
    DOMAINS.remove(dom.id)


def test_check_failing_domain_exit_1_and_clean_stdout(chatty):
    r = runner.invoke(app, ["domains", "check", chatty.id, "math.add-v1", "--json",
                            "--workers", "1", "--seeds", "1"])
    assert r.exit_code == 1
    rows = _json(r)
    assert rows[0]["id"] == chatty.id and rows[0]["ok"] is False
    assert any("padded" in f for f in rows[0]["failures"])
    assert rows[1]["ok"] is True
    assert "generating!" not in r.stdout


def test_check_table_output(chatty):
    r = runner.invoke(app, ["domains", "check", chatty.id, "--workers", "1", "--seeds", "1"])
    assert r.exit_code == 1
    assert "FAIL" in r.stdout and "padded" in r.stdout


@pytest.mark.slow
def test_check_all_parallel():
    r = runner.invoke(app, ["domains", "check", "--all", "--json", "--workers", "2", "--seeds", "2"])
    rows = _json(r)
    assert {row["id"] for row in rows} == set(DOMAINS.ids())
    assert r.exit_code == (0 if all(row["ok"] for row in rows) else 1)


def test_check_all_reports_broken_plugins(monkeypatch):
    from posttrain.cli import domains_cmd

    monkeypatch.setitem(DOMAINS.discovery_errors, "brokenplug", "ImportError: no module x")
    monkeypatch.setattr(domains_cmd, "_run_checks", lambda ids, *a, **k: [])
    r = runner.invoke(app, ["domains", "check", "--all", "--json"])
    assert r.exit_code == 1
    assert _json(r) == [{"id": "plugin:brokenplug", "ok": False,
                         "failures": ["failed to load: ImportError: no module x"],
                         "warnings": [], "timings": {}}]


def test_check_tier_filter():
    """``--tier`` keeps only that tier's domains (the real tier is checked apart in CI:
    ``make test-real``); an unknown tier exits 2 naming the allowed ones."""
    r = runner.invoke(app, ["domains", "check", "math.add-v1", "--tier", "real", "--json"])
    assert r.exit_code == 0 and _json(r) == []
    r = runner.invoke(app, ["domains", "check", "math.add-v1", "--tier", "light", "--json"])
    assert r.exit_code == 0 and [row["id"] for row in _json(r)] == ["math.add-v1"]
    r = runner.invoke(app, ["domains", "check", "--all", "--tier", "heavy"])
    assert r.exit_code == 2 and "light, real" in r.output
