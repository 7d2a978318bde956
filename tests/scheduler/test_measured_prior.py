"""The curriculum starts from measured pass rates (issue 19, item 5) and the level checks."""

import pytest

from posttrain.core.errors import ConfigError
from posttrain.domains.calibration import difficulty_flags, level_prior, load
from posttrain.scheduler import Curriculum, CurriculumDomain


def dom(name, levels=(1, 2, 3)):
    return CurriculumDomain(f"math.{name}-v1", "math", tuple(levels))


def test_prior_skips_saturated_levels_and_seeds_cell_statistics():
    prior = {("math.a-v1", 1): 1.0, ("math.a-v1", 2): 0.5, ("math.a-v1", 3): 0.0,
             ("math.b-v1", 1): 0.0}
    cur = Curriculum([dom("a"), dom("b")], {"measured_prior_samples": 8.0}, prior=prior)
    assert cur.frontier_difficulty("math.a-v1") == 2  # level 1 measured as saturated
    assert cur.frontier_difficulty("math.b-v1") == 1
    rates = dict(zip(cur.cells, cur.stats.pass_rate().tolist()))
    assert rates[("math.a-v1", 2)] == pytest.approx(0.5)
    assert rates[("math.a-v1", 3)] == pytest.approx(1 / 10)  # Beta(1, 1) + 0 of 8 passes
    assert rates[("math.b-v1", 2)] == pytest.approx(0.5)  # unmeasured: the flat prior
    # a cell measured at 0 predicts an all-fail group: the learnable cell gets the draws
    p = cur.probabilities()
    assert p[("math.a-v1", 2)] > p[("math.b-v1", 1)]


def test_prior_fades_as_groups_arrive_and_survives_resume():
    prior = {("math.a-v1", 1): 0.0}
    cur = Curriculum([dom("a")], {"min_groups": 2}, prior=prior)
    before = float(cur.stats.pass_rate()[0])
    for _ in range(6):
        cur.update("math.a-v1", 1, [1.0] * 8)
    assert float(cur.stats.pass_rate()[0]) > 0.8 > before
    again = Curriculum([dom("a")], {"min_groups": 2})
    again.load_state_dict(cur.state_dict())
    assert again.cells == cur.cells and again.next_cells(5) == cur.next_cells(5)


def test_prior_rejects_a_rate_outside_0_1():
    with pytest.raises(ConfigError, match="outside"):
        Curriculum([dom("a")], prior={("math.a-v1", 1): 1.5})


def test_measured_prior_reads_the_committed_figures():
    doc = load()
    measured = [(i, e) for i, e in doc["domains"].items()
                if isinstance(e.get("model"), dict) and "skipped" not in e["model"]]
    if not measured:
        pytest.skip("no model figures committed")
    did, entry = measured[0]
    levels = tuple(int(d) for d in entry["record"]["difficulties"])
    cur = Curriculum([CurriculumDomain(did, entry["record"]["family"], levels)],
                     {"measured_prior": True, "measured_prior_samples": 4.0})
    want = level_prior(did)
    assert want and set(want) <= set(levels)
    got = dict(zip(cur.cells, cur.stats.pass_rate().tolist()))
    for lvl, p in want.items():
        assert got[(did, lvl)] == pytest.approx((1 + 4 * p) / (2 + 4))


def test_difficulty_flags():
    cell = lambda p, n=20: {"pass_rate": p, "n_samples": n}  # noqa: E731
    assert difficulty_flags({"1": cell(0.5), "2": cell(0.3), "3": cell(0.1)}) == []
    assert difficulty_flags({"1": cell(0.95), "2": cell(0.5)}) == ["level 1 saturated (0.95)"]
    assert difficulty_flags({"1": cell(0.1), "2": cell(0.8)}) == ["not monotone: d2 0.80 > d1 0.10"]
    # two tasks a cell: 0.0 then 0.5 is noise, not a broken level
    assert difficulty_flags({"1": cell(0.0, 2), "2": cell(0.5, 2)}) == []
    assert difficulty_flags({"1": {"pass_rate": None}, "2": cell(0.5)}) == []


def test_training_stream_starts_from_the_committed_figures():
    # the run config's curriculum section reaches the scheduler: `curriculum.config.measured_prior`
    from posttrain.core.config import DomainSpec
    from posttrain.trainer.tasks import CurriculumStream

    want = level_prior("math.add-v1")
    if not want:
        pytest.skip("no model figures committed for math.add-v1")
    stream = CurriculumStream([DomainSpec(id="math.add-v1")], seed=0,
                              config={"measured_prior": True, "measured_prior_samples": 8.0})
    cur = stream.curriculum
    got = dict(zip(cur.cells, cur.stats.pass_rate().tolist()))
    for lvl, p in want.items():
        assert got[("math.add-v1", lvl)] == pytest.approx((1 + 8 * p) / 10)
    assert stream.next(4)[0].domain == "math.add-v1"
