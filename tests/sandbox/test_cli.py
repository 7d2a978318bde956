"""Smoke tests of ``posttrain sandbox exec`` and ``selfcheck`` output shapes."""

import json

from typer.testing import CliRunner

from posttrain.cli.main import app

runner = CliRunner()


def test_exec_prints_exec_result_json():
    r = runner.invoke(app, ["sandbox", "exec", "--limits", '{"memory_bytes": 134217728}', "--",
                            "sh", "-c", "echo hi; exit 3"])
    doc = json.loads(r.stdout.strip().splitlines()[-1])
    assert r.exit_code == 1 and doc["status"] == "nonzero_exit" and doc["exit_code"] == 3
    assert doc["stdout"] == "hi\n" and doc["backend"] == "isolated"


def test_exec_rejects_bad_limits():
    r = runner.invoke(app, ["sandbox", "exec", "--limits", '{"memory": 1}', "--", "true"])
    assert r.exit_code == 2 and "memory" in json.loads(r.stdout)["reason"]


def test_selfcheck_json_reports_every_case(monkeypatch):
    from posttrain.cli import sandbox_cmd
    from posttrain.sandbox import attacks

    monkeypatch.setattr(attacks, "ATTACKS", [a for a in attacks.ATTACKS
                                             if a[0] in ("orphans", "host_secrets")])
    r = runner.invoke(app, ["sandbox", "selfcheck", "--json"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["ok"] is True
    assert [c["case"] for c in doc["cases"]] == ["host_secrets", "orphans"]
    assert all(c["contained"] and c["host_clean"] for c in doc["cases"])
    assert sandbox_cmd.app is not None
