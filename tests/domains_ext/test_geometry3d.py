"""The geometry3d family: the language parses strictly within caps, measurements are right on
shapes with known answers, references score 1, partial models earn partial credit, probes and
far-off shapes score 0, renders are PNGs."""

import math

import numpy as np
import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.domains.geometry3d.render import render_observation, render_png
from posttrain.verifiers.geometry import MAX_LINES, Program, ParseError, euler, grid_for, measure, parse, voxelize

load_builtin_domains()
IDS = [i for i in DOMAINS.ids()
       if i.startswith("geometry3d.") and getattr(DOMAINS.get(i), "tier", "light") == "light"
       and not getattr(DOMAINS.get(i), "vision", False)]  # real tier: test_cad_*; visual: test_vision_domains


def measured(script):
    prog = parse(script)
    assert isinstance(prog, Program), prog
    grid = grid_for(prog.root)
    vox = voxelize(prog.root, grid)
    return measure(vox, grid), vox


def test_family_size():
    assert len(IDS) >= 5, IDS


@pytest.mark.parametrize("script,holes,cavities,pieces", [
    ("a = box 10 10 10", 0, 0, 1),
    ("a = box 40 30 6\nh = cylinder 4 20\nd = difference a h", 1, 0, 1),
    ("a = box 40 30 20\nb = box 36 26 16\nd = difference a b", 0, 1, 1),
    ("a = box 40 30 6\nh = cylinder 3 20\ni = translate h 10 0 0\nj = translate h -10 0 0\nd = difference a i j", 2, 0, 1),
    ("a = sphere 5\nb = translate a 20 0 0\nu = union a b", 0, 0, 2),
    ("a = box 30 30 30\nh = cylinder 3 40\nr = rotate h x 90\nd = difference a h r", 3, 0, 1),
])
def test_topology(script, holes, cavities, pieces):
    m, _ = measured(script)
    assert (m["holes"], m["cavities"], m["pieces"]) == (holes, cavities, pieces)


def test_euler_of_known_solids():
    one = np.zeros((3, 3, 3), bool)
    one[1, 1, 1] = True
    assert euler(one) == 1
    ring = np.zeros((5, 5, 3), bool)
    ring[1:4, 1:4, 1] = True
    ring[2, 2, 1] = False
    assert euler(ring) == 0


def test_volume_size_symmetry_and_placement():
    m, _ = measured("b = box 20 10 6\np = translate b 0 0 3")
    assert m["volume"] == pytest.approx(1200) and m["size"] == pytest.approx([20, 10, 6])
    assert m["min"][2] == pytest.approx(0) and m["sym_x"] == 1.0
    m, _ = measured("c = cylinder 10 10")
    assert m["volume"] == pytest.approx(math.pi * 1000, rel=0.03)
    m, _ = measured("b = box 10 10 10\nc = translate b 12 0 0\nu = union b c")
    assert m["sym_x"] < 0.9  # offset union is not mirror-symmetric about x = 0


@pytest.mark.parametrize("script", [
    "", "import os\nprint('PASSED')", "a = box 1 1", "a = box 1 1 -1", "a = box 1 1 nan", "a = box 1e9 1 1",
    "a = box 1 1 1\na = box 2 2 2", "a = union b c", "a = box 1 1 1\nresult zz", "x" * 7000,
    "\n".join(f"s{i} = sphere 1" for i in range(MAX_LINES + 1)), "a = rotate a q 90",
])
def test_parse_rejects(script):
    assert isinstance(parse(script), ParseError)


def test_huge_shapes_stay_bounded():
    prog = parse("a = box 2000 2000 2000")
    assert isinstance(prog, ParseError)
    prog = parse("a = box 1000 1000 1000")
    g = grid_for(prog.root)
    assert max(g.shape) <= 64


@pytest.mark.parametrize("did", IDS)
def test_reference_probes_partial(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        task = sample_task(dom, 5, d)
        ref = dom.solve(task)
        assert dom.score(task, ref).value == 1.0
        assert dom.score(task, f"```\n{ref}\n```").value == 1.0
        for name, probe in dom.probes(task).items():
            assert dom.score(task, probe).value <= 0.05, (name, d)
        far = ref + "\nfar_away = translate " + ref.splitlines()[-1].split()[0] + " 500 0 0"
        if "result" not in ref:
            assert dom.score(task, far).value == 0.0  # same shape, wrong place: no overlap, gate


def test_partial_credit_plate_without_holes():
    dom = DOMAINS.get("geometry3d.plate_holes-v1")
    task = sample_task(dom, 2, 2)
    lines = task.hidden["target"].splitlines()
    s = dom.score(task, "\n".join(lines[:2]))  # the plate, undrilled
    assert 0.3 < s.value < 1.0
    assert s.components["holes"][0] == 0.0 and s.components["size"][0] == 1.0


def test_volume_fit_wrong_radius_loses_volume_only():
    dom = DOMAINS.get("geometry3d.volume_fit-v1")
    task = sample_task(dom, 1, 2)
    r = float(task.hidden["target"].split()[3])
    h = task.hidden["target"].split()[4]
    s = dom.score(task, f"c = cylinder {r * 1.15:.2f} {h}\np = translate c 0 0 {float(h) / 2}")
    assert s.components["volume"][0] == 0.0 and 0 < s.value < 1


def test_render_png():
    png = render_png("b = box 20 10 6\nh = cylinder 2 10\nd = difference b h")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    assert render_png("not a script")[:4] == b"\x89PNG"
    assert render_observation("s = sphere 4")[:4] == "iVBO"


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0,))
    assert report.ok, report.failures
