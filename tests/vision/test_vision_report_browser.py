"""The evaluation report shows thumbnails of the images visual episodes saw, in real Chromium.

A real visual domain (finance.chart_value-v1: matplotlib charts in the observation), the
real evaluation runner and episode engine (a scripted vision-capable backend answers), the
report rendered and loaded in headless Chromium (networking off): every thumbnail decodes,
each is the stored image bit for bit, and each reward cell equals thumbnails.json.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest

from posttrain.domains.base import get_domain
from posttrain.eval.regression import build_regression_set
from posttrain.eval.report import render_eval_report
from posttrain.eval.runner import EvalSpec, evaluate
from posttrain.inference.fake import FakeBackend

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                reason="chromium is not installed (bash scripts/system-deps.sh)")
DOMAIN = "finance.chart_value-v1"


def test_report_renders_thumbnails_of_what_the_policy_saw(tmp_path):
    dom = get_domain(DOMAIN)
    rset = build_regression_set([dom], per_domain=3, seed=0)
    out = tmp_path / "eval"
    evaluate(FakeBackend(lambda msgs, i: "42"), {DOMAIN: dom}, rset, EvalSpec(n=2, ks=(1, 2)), out,
             meta={"model": "scripted", "backend": "fake"}, report=False)
    page = render_eval_report(out)
    thumbs = json.loads((out / "thumbnails.json").read_text())
    assert len(thumbs) == 6 and all(len(t["images"]) >= 1 for t in thumbs)
    stored = {p.stem for p in (out / "images").iterdir()}
    assert len(stored) == 3  # one chart per item, stored once for its two samples
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=3000", "--dump-dom", page.as_uri()]
    dom_text = subprocess.run(args, capture_output=True, text=True, timeout=90).stdout
    body = re.search(r'<body[^>]*data-images-ok="([^"]*)"', dom_text)
    assert body and body.group(1).isdigit(), "an image of the page did not decode"
    shown = re.findall(r'<img alt="[^"]*image \d+" data-image="sha256:([0-9a-f]{64})" '
                       r'src="data:image/png;base64,([^"]+)"', dom_text)
    assert len(shown) == sum(len(t["images"]) for t in thumbs)
    for digest, b64 in shown:  # the pixels on the page are the stored image, bit for bit
        raw = base64.b64decode(b64)
        assert hashlib.sha256(raw).hexdigest() == digest
        assert raw == (out / "images" / f"{digest}.png").read_bytes()
    cells = re.findall(r'data-path="thumbnails/(\d+)/reward" data-value="([^"]+)"', dom_text)
    assert len(cells) == len(thumbs)
    for i, value in cells:
        assert float(value) == thumbs[int(i)]["reward"]
    assert "Images the policy saw" in dom_text
