"""The CAD verifier and renderer on real kernel output (build123d on the host, no sandbox):
references score 1, a dimension off by 10 % scores lower, blobs are gated to 0, the render
IoU of the reference is 1 and of a shifted part lower, point containment and hole counts."""

import io
import tempfile
from pathlib import Path

import numpy as np
import pytest

from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.domains.geometry3d.cad_kit import block_probe, target_model
from posttrain.tools import cad_harness
from posttrain.verifiers.cad import contains, measure, render_score, score_model
from posttrain.verifiers.cad_render import ascii_view, png_bytes, render_views, window

load_builtin_domains()
CAD_IDS = sorted(i for i in DOMAINS.ids() if i.startswith("geometry3d.cad_"))


def host_model(script: str):
    with tempfile.TemporaryDirectory() as out:
        summary = cad_harness.build(script, out)
        assert summary["ok"], summary
        return measure([p.read_bytes() for p in sorted(Path(out).glob("body_*.stl"))])


def stretched(script: str, axis: int = 0, by: float = 1.1) -> str:
    """The same model with one dimension (along ``axis``) 10 % longer."""
    factors = [1.0, 1.0, 1.0]
    factors[axis] = by
    return (script + "from build123d import scale as _scale\n"
            f"result = [_scale(s, by={tuple(factors)}) for s in result] if isinstance(result, list) "
            f"else _scale(result, by={tuple(factors)})\n")


def test_there_are_at_least_twelve_real_tier_domains():
    assert len(CAD_IDS) >= 12
    for i in CAD_IDS:
        dom = DOMAINS.get(i)
        assert dom.tier == "real" and dom.id.endswith("-v1") and len(dom.difficulties) >= 3


@pytest.mark.parametrize("domain_id", CAD_IDS)
def test_reference_is_one_and_perturbed_or_blob_lower(domain_id):
    dom = DOMAINS.get(domain_id)
    task = sample_task(dom, 1, 2)
    want = target_model(task.hidden["script"])
    spec = task.hidden["spec"]
    assert score_model(host_model(task.hidden["script"]), want, spec, dom.id).value == 1.0
    worse = score_model(host_model(stretched(task.hidden["script"])), want, spec, dom.id)
    assert worse.value <= 0.9, worse  # one dimension 10 % off: measurably lower
    blob = score_model(host_model(block_probe(task.hidden["script"])), want, spec, dom.id)
    assert blob.value == 0.0 and "gate failed" in blob.reason


def test_render_iou_is_one_for_the_reference_and_lower_when_shifted():
    script = "from build123d import *\nresult = Box(40, 20, 6) - Pos(8, 0, 0) * Cylinder(4, 10)\n"
    ref, same = host_model(script), host_model(script)
    raw, per = render_score(same, ref)
    assert raw == 1.0 and all(v == 1.0 for v in per.values())
    shifted = host_model(script.replace("result = ", "result = Pos(6, 0, 0) * (") + ")\n")
    raw_s, per_s = render_score(shifted, ref)
    assert raw_s < 0.9 and per_s["top_iou"] < 0.9
    score = score_model(shifted, ref, {"probes": []}, "t")
    assert score.components["render"][0] < 1.0 and score.components["placement"][0] < 1.0


def test_containment_and_hole_count_on_a_drilled_plate():
    m = host_model("from build123d import *\nresult = Box(40, 20, 6) - Pos(-10, 0, 0) * Cylinder(3, 10)"
                   " - Pos(10, 0, 0) * Cylinder(3, 10)\n")
    body = m.bodies[0]
    assert body.closed and body.genus == 2
    assert abs(body.volume - (40 * 20 * 6 - 2 * np.pi * 9 * 6)) / body.volume < 0.01
    inside = contains(m.tris, [[-10, 0, 0], [-10, 2.5, 0], [-10, 3.5, 0], [0, 0, 0], [0, 0, 3.5], [25, 0, 0]])
    assert inside.tolist() == [False, False, True, True, False, False]


def test_invalid_bytes_are_an_invalid_body_not_a_crash():
    m = measure([b"solid junk\nendsolid junk\n"])
    assert not m.bodies[0].closed
    ref = host_model("from build123d import *\nresult = Box(10, 10, 10)\n")
    s = score_model(m, ref, {"probes": []}, "t")
    assert s.value == 0.0 and s.components["valid"][0] == 0.0


def test_png_and_text_views():
    m = host_model("from build123d import *\nresult = Box(30, 10, 5)\n")
    views = render_views(m.tris, window(*m.bounds()))
    from PIL import Image

    img = Image.open(io.BytesIO(png_bytes(views["top"])))
    assert img.size == (views["top"].shape[0], views["top"].shape[1]) and img.mode == "L"
    arr = np.asarray(img)
    assert (arr > 0).sum() == np.isfinite(views["top"]).sum()
    text = ascii_view(views["top"])
    assert "#" in text and "." in text
