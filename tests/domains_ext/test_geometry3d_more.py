"""The second wave of geometry3d domains: the new measurements are right on shapes with known
answers, references score 1 at every difficulty, one-defect models earn partial credit,
gates and far-off shapes score 0, probes stay at the floor, and every domain passes the
checker. Kept small: one seed per difficulty (measurement costs ~10-100 ms per answer)."""

import math

import numpy as np
import pytest

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.verifiers.geometry import Program, grid_for, parse, voxelize
from posttrain.verifiers.geometry_more import centroid, check_more, contained_fraction, surface_area

load_builtin_domains()
NEW = ["bracket", "flange", "tube", "spoked_wheel", "counterbore", "stacked_boxes", "staircase", "block_pyramid",
       "rook", "mirror_part", "surface_area", "placement", "inscribed", "bridge", "housing"]
IDS = [f"geometry3d.{n}-v1" for n in NEW]


def vox(script):
    prog = parse(script)
    assert isinstance(prog, Program), prog
    grid = grid_for(prog.root)
    return voxelize(prog.root, grid), grid


def test_family_size():
    family = [i for i in DOMAINS.ids() if i.startswith("geometry3d.")]
    assert set(IDS) <= set(family) and len(family) >= 20, family


def test_area_centroid_containment():
    v, g = vox("b = box 10 6 4\nm = translate b 3 -2 5")
    assert surface_area(v, g.v) == pytest.approx(2 * (60 + 40 + 24))
    assert centroid(v, g) == pytest.approx([3, -2, 5])
    v2, g2 = vox("a = box 10 6 4\nh = box 2 2 10\nd = difference a h")
    assert surface_area(v2, g2.v) == pytest.approx(2 * (60 - 4 + 40 + 24) + 4 * 2 * 4)
    req = np.zeros_like(v)
    req[v.nonzero()[0][0], v.nonzero()[1][0], v.nonzero()[2][0]] = True
    assert contained_fraction(v, req) == 1.0 and contained_fraction(~v, req) == 0.0
    assert math.isnan(centroid(np.zeros((2, 2, 2), bool), g)[0])


@pytest.mark.parametrize("c,m,want", [
    ({"kind": "area", "value": 100}, {"area": 102}, True), ({"kind": "area", "value": 100}, {"area": 110}, False),
    ({"kind": "centroid", "value": [1, 2, 3], "tol": 0.3}, {"centroid": [1.2, 2, 3]}, True),
    ({"kind": "centroid", "value": [1, 2, 3], "tol": 0.3}, {"centroid": [1.5, 2, 3]}, False),
    ({"kind": "volume_max", "value": 100}, {"volume": 90}, True), ({"kind": "volume_max", "value": 100}, {"volume": 120}, False),
    ({"kind": "within", "lo": [0, 0, 0], "hi": [5, 5, 5]}, {"min": [0, 0, 0], "max": [5, 5, 7]}, False),
    ({"kind": "contains", "name": "A"}, {"contains:A": 0.99}, True), ({"kind": "contains", "name": "A"}, {}, False),
    ({"kind": "area", "value": 1}, {}, False), ({"kind": "size", "value": [1, 1, 1]}, {}, None),
])
def test_check_more(c, m, want):
    assert check_more(c, m, 0.5) is want


@pytest.mark.parametrize("did", IDS)
def test_reference_probes_far(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        task = sample_task(dom, 5, d)
        assert task == sample_task(dom, 5, d)
        ref = dom.solve(task)
        s = dom.score(task, ref)
        assert s.value == 1.0, (d, s.reason)
        assert dom.score(task, f"```\n{ref}\n```").value == 1.0
        last = [ln for ln in ref.splitlines() if ln.strip() and not ln.startswith("result")][-1].split()[0]
        far = ref.replace("\nresult ", "\n# ") + f"\nfar_away = translate {last} 300 0 0"
        assert dom.score(task, far).value == 0.0  # same shape, wrong place: gated
    for name, probe in dom.probes(task).items():  # d3: the richest task
        assert dom.score(task, probe).value <= 0.05, name


def _score(did, seed, d, edit):
    dom = DOMAINS.get(did)
    task = sample_task(dom, seed, d)
    return dom.score(task, edit(task.hidden["target"])), task


def test_partial_flange_without_bolt_holes():
    s, _ = _score("geometry3d.flange-v1", 1, 2,
                  lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith("k")).replace(
                      "part = difference disc bore " + " ".join(f"k{i}" for i in range(4)), "part = difference disc bore"))
    assert 0.3 < s.value < 1.0 and s.components["holes"][0] == 0.0 and s.components["size"][0] == 1.0


def test_surface_area_wrong_height_loses_area():
    def taller(t):
        lines = t.splitlines()
        w, d, h = lines[0].split()[3:6]
        return f"b0 = box {w} {d} {int(h) + 2}\nb = translate b0 0 0 {(int(h) + 2) / 2}"
    s, _ = _score("geometry3d.surface_area-v1", 2, 1, taller)
    assert s.components["area"][0] == 0.0 and 0.0 < s.value < 1.0


def test_bridge_gates_on_one_piece():
    s, task = _score("geometry3d.bridge-v1", 0, 2, lambda t: "\n".join(t.splitlines()[:3] + ["u = union ca cb"]))
    assert s.value == 0.0 and "gate" in s.reason
    s2, _ = _score("geometry3d.bridge-v1", 0, 2, lambda t: t.replace("box 2 ", "box 3 ").replace(" 2\nr", " 3\nr"))
    assert s2.value < 1.0  # a fatter connector breaks the material bound


def test_placement_needs_the_centroid():
    s, task = _score("geometry3d.placement-v1", 3, 3, lambda t: t)
    assert s.value == 1.0
    goal = next(c["value"] for c in task.hidden["constraints"] if c["kind"] == "centroid")
    part = "\n".join(task.hidden["target"].splitlines()[:-1])
    name = part.splitlines()[-1].split("=")[0].strip()
    naive = f"{part}\nplaced = translate {name} {goal[0]} {goal[1]} {goal[2]}"  # ignores the hole's offset
    s2 = DOMAINS.get("geometry3d.placement-v1").score(task, naive)
    assert s2.components["centroid"][0] == 0.0 and s2.value < 1.0


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0,), difficulties=(3,))
    assert report.ok, report.failures
