"""The HTML reports render in a real headless Chromium, and every number on the page matches the JSON.

Builds a realistic evaluation (three real arithmetic domains, real rollout and verifiers, n=8,
k=1,4,8, a planted regression against a base, an audit queue) and a training-run folder, renders
both reports, loads them in Chromium (Debian package, installed by scripts/system-deps.sh) with
networking off, and checks the dumped DOM: every figure decoded, every ``data-path`` cell equals
the number at that path in the JSON files. With POSTTRAIN_WRITE_SCREENSHOT=1 the screenshot is
copied to docs/img/report.png (the README's picture).
"""

import json
import math
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from posttrain.domains.base import get_domain
from posttrain.eval.audit import build_audit, write_audit
from posttrain.eval.compare import compare_evals, write_compare
from posttrain.eval.regression import build_regression_set
from posttrain.eval.report import render_eval_report
from posttrain.eval.run_report import render_run_report
from posttrain.eval.runner import EvalSpec, evaluate

from eval_helpers import OracleBackend, _h

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                reason="chromium is not installed (bash scripts/system-deps.sh)")


def _chromium(url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    assert CHROMIUM, "chromium is required in CI (scripts/system-deps.sh installs it)"
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp / 'chrome-profile'}",
            "--virtual-time-budget=3000", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=90)


class _Cells(HTMLParser):
    """Collects (data-path, data-value, text) of every numeric cell, and the embedded JSON."""

    def __init__(self):
        super().__init__()
        self.cells, self._open, self.data_json, self._in_data, self.body = [], None, "", False, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if "data-path" in a:
            self._open = [a["data-path"], a.get("data-value"), ""]
        if tag == "script" and a.get("id") == "report-data":
            self._in_data = True

    def handle_data(self, data):
        if self._open is not None:
            self._open[2] += data
        if self._in_data:
            self.data_json += data

    def handle_endtag(self, tag):
        if self._open is not None and tag in ("td", "span"):
            self.cells.append(tuple(self._open))
            self._open = None
        if tag == "script":
            self._in_data = False


def _at(doc, path):
    node = doc
    for part in path.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _check_page(dom: str, sources: dict) -> int:
    p = _Cells()
    p.feed(dom)
    assert p.body.get("data-images-ok") not in (None, "pending", "no"), p.body
    embedded = json.loads(p.data_json)
    for key, doc in sources.items():
        assert embedded[key] == json.loads(json.dumps(doc)), f"embedded {key} differs from the file"
    for path, raw, text in p.cells:
        root, _, rest = path.partition("/")
        want = _at(sources[root], rest)
        text = text.strip()
        if want is None:
            assert text == "—", path
            continue
        assert raw is not None and float(raw) == pytest.approx(float(want), rel=1e-12), path
        decimals = len(text.split(".")[1]) if "." in text else 0
        assert abs(float(text) - float(want)) <= 0.5 * 10 ** -decimals + 1e-12, (path, text, want)
    return len(p.cells)


class _Skill(OracleBackend):
    """Wrong more often on bigger operands (scaled by ``noise``), so domains and ks differ."""

    def __init__(self, noise: float, salt: str):
        super().__init__(wrong_rate=0.0, salt=salt)
        self.noise = noise

    def _answer(self, text, i):
        right = super()._answer(text, i)
        digits = len(re.findall(r"\d", text))
        p_wrong = min(0.95, 0.07 * digits * self.noise)
        noisy = _h(f"{text}#{i}", self.salt) < p_wrong
        return str(int(right) + 1) if noisy and right.lstrip("-").isdigit() else right


def _build(tmp: Path) -> tuple[Path, Path]:
    doms = {i: get_domain(i) for i in ("math.add-v1", "math.sub-v1", "math.mul-v1")}
    rset = build_regression_set(doms.values(), per_domain=24, seed=0)
    spec = EvalSpec(n=8, ks=(1, 4, 8))
    evaluate(_Skill(1.0, salt="a"), doms, rset, spec, tmp / "base",
             meta={"model": "tiny-base", "backend": "hf", "weights_id": "0f3c9a1be2d4"}, report=False)
    evaluate(_Skill(1.6, salt="b"), doms, rset, spec, tmp / "new",
             meta={"model": "tiny-rl-step300", "backend": "hf", "weights_id": "7be01d55aa90"}, report=False)
    cmp = compare_evals(tmp / "base", tmp / "new")
    assert cmp["regression"] and "math.mul-v1" in cmp["regressed_domains"]  # the planted drop
    write_compare(cmp, tmp / "new" / "compare.json")
    write_audit(tmp / "new", build_audit(tmp / "new", "math.mul-v1", high_reward=3))
    render_eval_report(tmp / "new")
    run = tmp / "run"
    (run / "eval").mkdir(parents=True)
    for f in ("results.json", "samples.jsonl", "compare.json"):
        shutil.copy(tmp / "new" / f, run / "eval" / f)
    rows = [{"step": s, "reward/math.add-v1": 0.5 + 0.4 * (1 - math.exp(-s / 40)),
             "reward/math.sub-v1": 0.3 + 0.5 * (1 - math.exp(-s / 70)), "loss/policy": 1 / (1 + s / 30)}
            for s in range(0, 300, 5)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "summary.json").write_text(json.dumps({
        "run_name": "quickstart", "heldout_before": {"overall": 0.41, "math.add-v1": 0.52, "math.sub-v1": 0.30},
        "heldout_after": {"overall": 0.66, "math.add-v1": 0.83, "math.sub-v1": 0.49},
        "wall_s": {"sft": 61.2, "rl": 148.9, "eval": 12.4}}))
    (run / "curriculum.json").write_text(json.dumps({"cells": [
        {"domain": d, "difficulty": k, "samples": 100 * k * (j + 1), "pass_rate": max(0.0, 1 - 0.2 * k - 0.1 * j)}
        for j, d in enumerate(("math.add-v1", "math.sub-v1")) for k in (1, 2, 3, 4)]}))
    render_run_report(run)
    return tmp / "new", run


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("reports"))


def test_reports_render_in_chromium_and_match_the_json(built, tmp_path):
    eval_dir, run_dir = built
    # eval report: DOM after load, then the screenshot
    dom = _chromium((eval_dir / "report.html").as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    sources = {f: json.loads((eval_dir / f"{f}.json").read_text()) for f in ("results", "compare", "audit")}
    assert _check_page(dom.stdout, sources) > 100
    p1 = sources["results"]["overall"]["pass@k"]["1"]["value"]
    p8 = sources["results"]["overall"]["pass@k"]["8"]["value"]
    assert 0.2 < p1 < p8 < 1.0  # a page of zeros would not be a test
    assert "REGRESSION" in dom.stdout or "no significant change" in dom.stdout
    shot = tmp_path / "report.png"
    r = _chromium((eval_dir / "report.html").as_uri(), tmp_path, f"--screenshot={shot}",
                  "--window-size=1280,2200", "--hide-scrollbars")
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    assert _png_size(shot) == (1280, 2200) and shot.stat().st_size > 50_000
    if os.environ.get("POSTTRAIN_WRITE_SCREENSHOT"):
        (REPO / "docs" / "img").mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, REPO / "docs" / "img" / "report.png")
    # run report: held-out table, curves, heatmap, and the embedded evaluation
    dom = _chromium((run_dir / "report.html").as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    run_sources = {"summary": json.loads((run_dir / "summary.json").read_text()),
                   "results": json.loads((run_dir / "eval" / "results.json").read_text()),
                   "compare": json.loads((run_dir / "eval" / "compare.json").read_text())}
    assert _check_page(dom.stdout, run_sources) > 100
    assert dom.stdout.count("data:image/png;base64,") >= 5  # rewards, loss, 2 heatmaps, pass@k


def test_a_wrong_number_would_be_caught(built):
    """The checker itself: tampering with one cell must fail it (so the test above can fail)."""
    eval_dir, _ = built
    page = (eval_dir / "report.html").read_text()
    sources = {f: json.loads((eval_dir / f"{f}.json").read_text()) for f in ("results", "compare", "audit")}
    page = page.replace('data-images-ok="pending"', 'data-images-ok="9"')
    assert _check_page(page, sources) > 100
    tampered = re.sub(r'(data-path="results/overall/tasks" data-value="\d+">)(\d+)<',
                      lambda m: f"{m.group(1)}{int(m.group(2)) + 1}<", page, count=1)
    assert tampered != page
    with pytest.raises(AssertionError):
        _check_page(tampered, sources)
