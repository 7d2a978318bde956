"""The real-tier CAD domains end to end: reference trajectories replayed through the episode
engine run the real ``cad`` tool in a real isolated sandbox and score 1.0; the exploit probes
score at the floor; ``domains list`` marks them real; the conformance checker passes (slow)."""

import json

import pytest

from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.rollout.scripted import replay, replay_score
from posttrain.sandbox import isolated_available

load_builtin_domains()
CAD_IDS = sorted(i for i in DOMAINS.ids() if i.startswith("geometry3d.cad_"))
pytestmark = pytest.mark.skipif(not isolated_available()[0], reason="needs bubblewrap")


# one of each kind (part, assembly, edit, drawing, feedback) in the default tier; each
# episode pays a cold OCC import in the sandbox (5-20 s), so all fourteen are the slow tier
DEFAULT = {"geometry3d.cad_plate_holes-v1", "geometry3d.cad_shaft_bushing-v1",
           "geometry3d.cad_edit_move_block-v1", "geometry3d.cad_drawing_slot_block-v1",
           "geometry3d.cad_fit_volume-v1"}


@pytest.mark.parametrize("domain_id", [i if i in DEFAULT else pytest.param(i, marks=pytest.mark.slow)
                                       for i in CAD_IDS])
def test_reference_trajectory_scores_one_through_the_sandbox(domain_id):
    dom = DOMAINS.get(domain_id)
    task = sample_task(dom, 0, max(dom.difficulties))
    actions = dom.reference_actions(task)
    traj = replay(dom, task, actions)
    assert traj.score is not None and traj.score.error is None, traj.error
    assert traj.score.value == 1.0, traj.score.reason
    assert traj.stop_reason == "done" and len(traj.turns) == len(actions)


@pytest.mark.parametrize("domain_id", ["geometry3d.cad_edit_hole_size-v1", "geometry3d.cad_stacked-v1"])
def test_probes_score_at_the_floor(domain_id):
    dom = DOMAINS.get(domain_id)
    task = sample_task(dom, 0, 1)
    probes = dom.probes(task)
    assert {"empty_script", "precomputed_stl", "bounding_box_block", "prints_passed"} <= set(probes)
    for name, actions in probes.items():
        s = replay_score(dom, task, actions)
        assert s.error is None and s.value == 0.0, (name, s.reason)


def test_feedback_tool_shows_measurements_and_render():
    dom = DOMAINS.get("geometry3d.cad_correct_flange-v1")
    task = sample_task(dom, 0, 1)
    env = dom.make_env(task)
    try:
        from posttrain.core.types import Completion

        step = env.step(Completion(text=dom.reference_actions(task)[0]))
        text = step.observation.messages[0]["content"]
        assert "through-holes 5" in text and "top view" in text and "#" in text, text
        assert env.sandbox.read_file("out/view_top.png").startswith(b"\x89PNG")
    finally:
        env.close()


def test_look_variant_shows_the_views_as_images_and_its_reference_scores_one():
    import base64

    from posttrain.core.types import Completion

    dom = DOMAINS.get("geometry3d.cad_look_flange-v1")
    assert dom.vision and dom.tier == "real"
    task = sample_task(dom, 0, 1)
    env = dom.make_env(task)
    try:
        assert not env.reset().images  # the brief is text; renders come with each model
        draft, fixed, done = dom.reference_actions(task)
        step = env.step(Completion(text=draft))
        pngs = [base64.b64decode(i) for i in step.observation.images]
        assert len(pngs) == 2 and all(p.startswith(b"\x89PNG") for p in pngs)
        assert pngs == [env.sandbox.read_file("out/view_top.png"),
                        env.sandbox.read_file("out/view_front.png")]
        text = step.observation.messages[0]["content"]
        assert "through-holes 5" in text and "#" not in text, text  # pictures, not text art
        step2 = env.step(Completion(text=fixed))
        assert len(step2.observation.images) == 2
        assert [base64.b64decode(i) for i in step2.observation.images] != pngs  # the bolts moved
        last = env.step(Completion(text=done))
        assert last.done
    finally:
        env.close()
    traj = replay(dom, task, dom.reference_actions(task))
    assert traj.score.value == 1.0, traj.score.reason


def test_domains_list_marks_them_real():
    from typer.testing import CliRunner

    from posttrain.cli.main import app

    out = CliRunner().invoke(app, ["domains", "list", "--json"])
    rows = {r["id"]: r for r in json.loads(out.stdout)}
    for i in CAD_IDS:
        assert rows[i]["tier"] == "real" and rows[i]["needs_sandbox"] and rows[i]["multi_turn"]
    assert rows["geometry3d.plate_holes-v1"]["tier"] == "light"


@pytest.mark.slow
@pytest.mark.parametrize("domain_id", CAD_IDS)
def test_conformance(domain_id):
    from posttrain.rollout.conformance import check_domain

    rep = check_domain(DOMAINS.get(domain_id))
    assert rep.ok, rep.failures
