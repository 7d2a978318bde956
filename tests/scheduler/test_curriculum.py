"""Curriculum rules: levels, floor, learnability, zero-variance prediction, exact resume."""

import json

import numpy as np
import pytest

from posttrain.core.errors import ConfigError, SchedulerError
from posttrain.scheduler import Curriculum, CurriculumDomain

ONES, ZEROS, MIXED = [1.0] * 8, [0.0] * 8, [1.0, 0.0] * 4


def dom(name, family="math", levels=(1, 2, 3)):
    return CurriculumDomain(f"{family}.{name}-v1", family, tuple(levels))


def test_promotes_a_saturated_cell_after_min_groups():
    cur = Curriculum([dom("a")], {"min_groups": 3})
    for _ in range(2):
        cur.update("math.a-v1", 1, ONES)
    assert cur.frontier_difficulty("math.a-v1") == 1  # not enough evidence yet
    cur.update("math.a-v1", 1, ONES)
    assert cur.frontier_difficulty("math.a-v1") == 2
    assert ("math.a-v1", 2) in cur.active_cells()
    assert ("math.a-v1", 3) not in cur.active_cells()
    p = cur.probabilities()
    assert p[("math.a-v1", 2)] > 10 * p[("math.a-v1", 1)]  # the solved level is only replayed
    assert cur.metrics()["sched/promotions"] == 1


def test_demotes_a_collapsed_cell():
    cur = Curriculum([dom("a")], {"min_groups": 2, "demote_at": 0.1})
    for _ in range(2):
        cur.update("math.a-v1", 1, ONES)
    assert cur.frontier_difficulty("math.a-v1") == 2
    cur.update("math.a-v1", 2, ZEROS)
    assert cur.frontier_difficulty("math.a-v1") == 2  # one group is not evidence
    cur.update("math.a-v1", 2, ZEROS)
    assert cur.frontier_difficulty("math.a-v1") == 1
    assert ("math.a-v1", 2) not in cur.active_cells()
    assert [e["kind"] for e in cur.to_json()["events"]] == ["promote", "demote"]


def test_a_mixed_cell_neither_promotes_nor_demotes():
    cur = Curriculum([dom("a")], {"min_groups": 2})
    for _ in range(20):
        cur.update("math.a-v1", 1, MIXED)
    assert cur.frontier_difficulty("math.a-v1") == 1


def test_prefers_learnable_cells_over_solved_and_impossible_ones():
    doms = [dom("mixed"), dom("solved"), dom("impossible")]
    cur = Curriculum(doms, {"promote_at": 1.0, "floor_share": 0.0, "seed": 3})
    for _ in range(10):
        cur.update("math.mixed-v1", 1, MIXED)
        cur.update("math.solved-v1", 1, ONES)
        cur.update("math.impossible-v1", 1, ZEROS)
    p = cur.probabilities()
    assert p[("math.mixed-v1", 1)] > 20 * p[("math.solved-v1", 1)]
    assert p[("math.mixed-v1", 1)] > 20 * p[("math.impossible-v1", 1)]
    drawn = cur.next_cells(2000)
    assert sum(d == "math.mixed-v1" for d, _ in drawn) / 2000 > 0.9


def test_floor_keeps_every_domain_alive_even_with_stage_weight_zero():
    doms = [dom("mixed")] + [dom(f"dead{i}") for i in range(3)] + [dom("lh", "long_horizon")]
    stages = {"long_horizon": {"weight": [[0, 0.0]]}}
    cur = Curriculum(doms, {"floor_share": 0.2, "promote_at": 1.0, "stages": stages, "seed": 1})
    for _ in range(10):
        cur.update("math.mixed-v1", 1, MIXED)
        for i in range(3):
            cur.update(f"math.dead{i}-v1", 1, ZEROS)
    drawn = cur.next_cells(20_000)
    share = {d.id: sum(x == d.id for x, _ in drawn) / len(drawn) for d in doms}
    floor_each = 0.2 / len(doms)
    assert all(s >= 0.8 * floor_each for s in share.values()), share
    assert share["math.mixed-v1"] > 0.5


def test_zero_variance_prediction_is_the_beta_binomial_predictive():
    cur = Curriculum([dom("a"), dom("b")], {"group_size": 8, "promote_at": 1.0})
    # uniform prior: E[p^G] + E[(1-p)^G] = 2 / (G + 1)
    assert cur.predict_zero_variance("math.a-v1", 1) == pytest.approx(2 / 9)
    for _ in range(4):
        cur.update("math.a-v1", 1, ONES)
    # Beta(1 + passes, 1): E[p^8] = (a / (a + 8)) exactly, with a = 1 + discounted passes
    a = 1 + 8 * sum(0.95 ** k for k in range(4))
    assert cur.predict_zero_variance("math.a-v1", 1) == pytest.approx(a / (a + 8) + 0.0, abs=1e-3)
    for _ in range(16):
        cur.update("math.a-v1", 1, ONES)
    assert cur.predict_zero_variance("math.a-v1", 1) > 0.9
    # predicted all-equal: avoided before generation (only the tiny floor weight is left)
    assert cur.probabilities()[("math.a-v1", 1)] < 0.1
    assert cur.update("math.b-v1", 1, ONES) is False
    assert cur.update("math.b-v1", 1, MIXED) is True


def test_stage_weights_change_with_step():
    doms = [dom("x"), dom("lh", "long_horizon")]
    stages = {"long_horizon": {"weight": [[0, 0.1], [1000, 1.0]]}, "domain": {"weight": [[0, 1.0]]}}
    cur = Curriculum(doms, {"stages": stages, "floor_share": 0.0})
    early = cur.probabilities()[("long_horizon.lh-v1", 1)]
    cur.set_step(1000)
    late = cur.probabilities()[("long_horizon.lh-v1", 1)]
    assert early == pytest.approx(0.1 / 1.1)
    assert late == pytest.approx(0.5)


def test_quota_budget_and_priority():
    doms = [dom("a"), dom("b"), dom("c")]
    cfg = {"domains": {"math.a-v1": {"max_share": 0.1, "weight": 10.0},
                       "math.b-v1": {"budget": 7, "priority": 5}}}
    cur = Curriculum(doms, cfg)
    assert cur.probabilities()[("math.a-v1", 1)] == pytest.approx(0.1)
    first = cur.next_cells(50)
    n_b = sum(d == "math.b-v1" for d, _ in first)
    assert first[:n_b] == [("math.b-v1", 1)] * n_b  # higher priority first
    rest = cur.next_cells(500)
    assert n_b + sum(d == "math.b-v1" for d, _ in rest) == 7  # budget is exact
    assert len(rest) == 500


def test_state_dict_round_trip_gives_identical_decisions():
    doms = [dom(f"d{i}", levels=(1, 2, 3, 4)) for i in range(6)]
    cfg = {"seed": 11, "min_groups": 2}
    a = Curriculum(doms, cfg)
    rng = np.random.default_rng(0)

    def drive(cur, steps, rng):
        out = []
        for s in range(steps):
            cur.set_step(s)
            cells = cur.next_cells(16)
            out += cells
            for d, k in cells:
                cur.update(d, k, (rng.random(8) < 1.0 / k).astype(float).tolist())
        return out

    drive(a, 20, rng)
    saved = json.loads(json.dumps(a.state_dict()))
    b = Curriculum(doms, cfg)
    b.load_state_dict(saved)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    assert drive(a, 20, rng_a) == drive(b, 20, rng_b)
    assert a.state_dict() == b.state_dict()
    assert a.metrics()["sched/promotions"] > 0
    with pytest.raises(SchedulerError):
        Curriculum(doms[:3], cfg).load_state_dict(saved)


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match="demote_at"):
        Curriculum([dom("a")], {"demote_at": 0.9, "promote_at": 0.8})
    with pytest.raises(ConfigError, match="flor_share.*floor_share"):
        Curriculum([dom("a")], {"flor_share": 0.1})
    with pytest.raises(ConfigError, match="math.nope-v1"):
        Curriculum([dom("a")], {"domains": {"math.nope-v1": {"weight": 2}}})
    with pytest.raises(SchedulerError):
        Curriculum([dom("a")]).update("math.a-v1", 9, ONES)


def test_json_and_heatmap(tmp_path):
    cur = Curriculum([dom("a"), dom("b", levels=(1, 2, 3, 4, 5))])
    cur.update("math.a-v1", 1, MIXED)
    doc = cur.to_json()
    cell = {(c["domain"], c["difficulty"]): c for c in doc["cells"]}
    assert cell[("math.a-v1", 1)]["pass_rate"] == 0.5
    assert cell[("math.a-v1", 1)]["count"] == 8
    assert cell[("math.a-v1", 1)]["reward_var"] == 0.25
    assert cell[("math.b-v1", 5)]["pass_rate"] is None
    cur.write_json(str(tmp_path / "curriculum.json"))
    assert json.loads((tmp_path / "curriculum.json").read_text())["cells"][0]["domain"] == "math.a-v1"
    cur.heatmap(str(tmp_path / "h.png"))
    data = (tmp_path / "h.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
