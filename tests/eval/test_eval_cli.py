"""CLI smoke tests: eval run/compare/report/audit/probes/regression-set and models, on real domains."""

import json

import pytest
from typer.testing import CliRunner

from posttrain.cli.main import app
from posttrain.domains.base import get_domain
from posttrain.eval.regression import build_regression_set

runner = CliRunner()


def _script(path, wrong_every=0):
    """Fake-backend replies for math.add-v1's regression items: right, or planted wrong."""
    dom = get_domain("math.add-v1")
    rs = build_regression_set([dom], per_domain=40, seed=0)
    script = {}
    for i, t in enumerate(rs.tasks({dom.id: dom})):
        a = str(t.hidden["answer"])
        wrong = wrong_every and i % wrong_every == 0
        script[t.prompt[-1]["content"]] = [str(int(a) + 1) if wrong else a]
    path.write_text(json.dumps(script))
    return path


def _run(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("POSTTRAIN_HOME", str(tmp_path / "home"))
    return tmp_path


def _eval(tmp, name, script, *extra):
    return _run("eval", "run", "--backend", "fake", "--fake-script", script, "--domains",
                "math.add-v1", "--per-domain", 40, "--n", 1, "--k", "1", "--out", tmp / name,
                "--json", *extra)


def test_eval_run_compare_gate_exit_codes(home):
    good = _script(home / "good.json")
    bad = _script(home / "bad.json", wrong_every=3)
    r = _eval(home, "base", good)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["domains"]["math.add-v1"]["pass@k"]["1"]["value"] == 1.0
    assert {"results.json", "samples.jsonl", "report.html", "metrics.jsonl", "regression_set.json"} <= \
        {p.name for p in (home / "base").iterdir()}
    assert (home / "base" / "tensorboard").is_dir()
    # the bare form `posttrain eval --model ...` is the same command
    r = _run("eval", "--backend", "fake", "--fake-script", bad, "--domains", "math.add-v1",
             "--per-domain", 40, "--n", 1, "--k", "1", "--out", home / "new")
    assert r.exit_code == 0, r.output
    assert "pass@1=0.650" in r.output
    same = _run("eval", "compare", home / "base", home / "base", "--fail-on-regression")
    assert same.exit_code == 0 and "gate: pass" in same.output
    gated = _run("eval", "compare", home / "base", home / "new", "--fail-on-regression", "--json")
    assert gated.exit_code == 1
    verdict = json.loads(gated.output)
    assert verdict["regression"] and verdict["regressed_domains"] == ["math.add-v1"]
    assert (home / "new" / "compare.json").is_file()
    assert "REGRESSION" in (home / "new" / "report.html").read_text()
    # without the flag, the verdict is reported but the exit status stays 0
    assert _run("eval", "compare", home / "base", home / "new").exit_code == 0


def test_eval_errors_are_one_line(home):
    r = _run("eval", "run", "--backend", "fake", "--fake-script", home / "missing.json",
             "--domains", "math.add-v1", "--n", 2, "--k", "1,4")
    assert r.exit_code == 2 and "n=2" in r.output
    r = _run("eval", "run", "--backend", "fake", "--domains", "math.nope", "--n", 1, "--k", "1")
    assert r.exit_code == 2 and "unknown domain" in r.output
    r = _run("eval", "compare", home, home)
    assert r.exit_code == 2 and "results.json" in r.output


def test_regression_set_file_and_report(home):
    out = home / "rs.json"
    r = _run("eval", "regression-set", "--domains", "math.add-v1", "--per-domain", 40, "--out", out)
    assert r.exit_code == 0 and out.is_file()
    r = _eval(home, "e", _script(home / "s.json"), "--regression-set", out)
    assert r.exit_code == 0, r.output
    (home / "e" / "report.html").unlink()
    assert _run("eval", "report", home / "e").exit_code == 0
    assert (home / "e" / "report.html").is_file()


def test_audit_marks_become_probes(home):
    _eval(home, "run", _script(home / "s.json"))
    r = _run("eval", "audit", home / "run", "--domain", "math.add-v1", "--high-reward", 5, "--json")
    assert r.exit_code == 0, r.output
    queued = json.loads(r.output)
    assert sum("high_reward" in i["reasons"] for i in queued["items"]) == 5
    assert all(i["prompt"].endswith("=") for i in queued["items"])  # regenerated from the seed
    assert "reward hacking" in (home / "run" / "report.html").read_text()
    target = queued["items"][0]
    marks = home / "marks.json"
    marks.write_text(json.dumps([{"id": target["id"], "domain": "math.add-v1", "note": "test"}]))
    r = _run("eval", "audit", home / "run", "--domain", "math.add-v1", "--marks", marks, "--json")
    assert r.exit_code == 0 and len(json.loads(r.output)["new_probes"]) == 1
    again = _run("eval", "audit", home / "run", "--domain", "math.add-v1", "--mark", target["id"], "--json")
    assert json.loads(again.output)["new_probes"] == []  # idempotent
    audit = json.loads((home / "run" / "audit.json").read_text())
    assert [i["marked"] for i in audit["domains"]["math.add-v1"]["items"]].count(True) == 1
    # the marked answer is the correct sum, so the current verifier still rewards it: exit 1
    r = _run("eval", "probes", "--domain", "math.add-v1", "--json")
    assert r.exit_code == 1 and json.loads(r.output)["probes"] == 1
    # a probe the verifier rejects passes the check
    store = home / "home" / "exploits" / "math.add-v1.jsonl"
    store.write_text(json.dumps({**json.loads(store.read_text()), "answer": "not a number"}) + "\n")
    assert _run("eval", "probes", "--domain", "math.add-v1").exit_code == 0
    bad = _run("eval", "audit", home / "run", "--domain", "math.add-v1", "--mark", "nope")
    assert bad.exit_code == 2 and "unknown audit item" in bad.output


def test_models_cli_promote_gate_rollback(home):
    reg = home / "reg.sqlite"
    folders = []
    for name in ("base", "p1", "p2"):
        d = home / name
        d.mkdir()
        (d / "config.json").write_text("{}")
        (d / "model.safetensors").write_bytes(name.encode())
        folders.append(d)
    R = ["--registry", reg]
    assert _run("models", "register-foundation", "tiny", folders[0], *R).exit_code == 0
    for f, run_id in ((folders[1], "r1"), (folders[2], "r2")):
        r = _run("models", "register", f, "--base", "tiny", "--run-id", run_id, "--config-hash",
                 "abc", "--domain", "math.add-v1", "--data-position", '{"step": 10}', *R)
        assert r.exit_code == 0, r.output
    assert _run("models", "promote", "tiny.pt1", *R).exit_code == 0
    failing = home / "cmp.json"
    failing.write_text(json.dumps({"regression": True, "regressed_domains": ["math.add-v1"]}))
    r = _run("models", "promote", "tiny.pt2", "--gate", failing, *R)
    assert r.exit_code == 1 and "refused" in r.output
    failing.write_text(json.dumps({"regression": False}))
    assert _run("models", "promote", "tiny.pt2", "--gate", failing, *R).exit_code == 0
    listed = json.loads(_run("models", "list", "--json", *R).output)
    assert [v["id"] for v in listed if v["current"]] == ["tiny.pt2"]
    shown = json.loads(_run("models", "show", "tiny.pt2", "--json", *R).output)
    assert shown["lineage"] == ["tiny.pt2", "tiny"] and shown["weights_intact"]
    r = _run("models", "rollback", *R)
    assert r.exit_code == 0 and "tiny.pt1" in r.output
    assert _run("models", "promote", "tiny", *R).exit_code == 2
    assert _run("models", "show", "tiny", "--json", *R).exit_code == 0


def test_eval_on_a_local_hf_folder_caches_by_weights_hash(home):
    import torch

    from posttrain.models.loading import save_model
    from posttrain.models.tiny import build_tiny_model
    from posttrain.models.versions import weights_hash

    torch.set_num_threads(1)
    folder = save_model(*build_tiny_model(seed=0), home / "tiny")
    args = ["eval", "run", "--model", folder, "--domains", "math.add-v1", "--per-domain", 4,
            "--n", 2, "--k", "1,2", "--max-new-tokens", 4, "--json"]
    first = json.loads(_run(*args, "--out", home / "a").stdout)
    assert first["meta"]["weights_id"] == weights_hash(folder)
    assert first["meta"]["cache"]["misses"] == 4 and first["overall"]["samples"] == 8
    second = json.loads(_run(*args, "--out", home / "b").stdout)
    assert second["meta"]["cache"]["hits"] == 4 and second["meta"]["cache"]["misses"] == 0
    answers = [[json.loads(x)["answer"] for x in (home / d / "samples.jsonl").read_text().splitlines()]
               for d in ("a", "b")]
    assert answers[0] == answers[1]
