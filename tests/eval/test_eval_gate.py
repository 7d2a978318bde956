"""End to end on real domains and the real rollout: evaluate, cache, reuse, and the regression gate."""

import json

import pytest

from posttrain.core.serde import to_dict
from posttrain.core.types import TrajectoryGroup
from posttrain.domains.base import get_domain
from posttrain.eval.cache import CachingBackend, GenerationCache
from posttrain.eval.compare import compare_evals
from posttrain.eval.regression import RegressionSet, build_regression_set
from posttrain.eval.runner import EvalSpec, evaluate, load_reusable_groups
from posttrain.core.errors import ConfigError

from eval_helpers import OracleBackend

IDS = ("math.add-v1", "math.sub-v1")


@pytest.fixture(scope="module")
def domains():
    return {i: get_domain(i) for i in IDS}


@pytest.fixture(scope="module")
def rset(domains):
    return build_regression_set(domains.values(), per_domain=60, seed=0)


def _eval(tmp, name, backend, domains, rset, n=1, ks=(1,)):
    return evaluate(backend, domains, rset, EvalSpec(n=n, ks=ks), tmp / name,
                    meta={"model": name}, report=False)


def test_regression_set_is_deterministic_and_versioned(tmp_path, domains, rset):
    again = build_regression_set(domains.values(), per_domain=60, seed=0)
    assert again.hashes() == rset.hashes()
    assert build_regression_set(domains.values(), per_domain=60, seed=1).hashes() != rset.hashes()
    p = rset.save(tmp_path / "r.json")
    assert RegressionSet.load(p) == rset
    data = json.loads(p.read_text())
    data["domains"]["math.add-v1"]["items"][0][1] += 1  # edit an item without a version bump
    p.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="hash mismatch"):
        RegressionSet.load(p)
    with pytest.raises(ConfigError, match="math.sub-v1"):
        rset.tasks({"math.add-v1": domains["math.add-v1"]})


def test_gate_flags_a_planted_regression_and_passes_identical(tmp_path, domains, rset):
    base = _eval(tmp_path, "base", OracleBackend(wrong_rate=0.05), domains, rset)
    assert base["domains"]["math.add-v1"]["pass@k"]["1"]["value"] > 0.85
    _eval(tmp_path, "same", OracleBackend(wrong_rate=0.05), domains, rset)
    # planted: the new version is wrong on ~40 % of prompts (salted differently)
    _eval(tmp_path, "worse", OracleBackend(wrong_rate=0.4, salt="y"), domains, rset)
    same = compare_evals(tmp_path / "base", tmp_path / "same")
    assert not same["regression"] and same["overall"]["delta"] == 0
    assert all(v["p_regression"] == 1.0 for v in same["domains"].values())
    worse = compare_evals(tmp_path / "base", tmp_path / "worse")
    assert worse["regression"]
    assert set(worse["regressed_domains"]) == set(IDS)
    assert worse["domains"]["math.add-v1"]["method"] == "mcnemar_exact"
    assert worse["overall"]["delta"] < -0.2
    # reversed, it is an improvement, not a regression
    assert not compare_evals(tmp_path / "worse", tmp_path / "base")["regression"]


def test_multi_sample_gate_uses_paired_bootstrap(tmp_path, domains, rset):
    small = build_regression_set(domains.values(), per_domain=30, seed=2)
    _eval(tmp_path, "a", OracleBackend(sample_noise=0.1), domains, small, n=4, ks=(1, 4))
    _eval(tmp_path, "b", OracleBackend(sample_noise=0.1, wrong_rate=0.5), domains, small, n=4, ks=(1, 4))
    res = compare_evals(tmp_path / "a", tmp_path / "b")
    assert res["domains"]["math.sub-v1"]["method"] == "paired_bootstrap"
    assert res["regression"]


def test_compare_refuses_different_items(tmp_path, domains, rset):
    other = build_regression_set(domains.values(), per_domain=60, seed=5)
    _eval(tmp_path, "a", OracleBackend(), domains, rset)
    _eval(tmp_path, "b", OracleBackend(), domains, other)
    with pytest.raises(ConfigError, match="nothing to compare"):
        compare_evals(tmp_path / "a", tmp_path / "b")


def test_pass_at_k_from_real_rollouts(tmp_path, domains):
    small = build_regression_set([domains["math.add-v1"]], per_domain=20, seed=3)
    res = _eval(tmp_path, "k", OracleBackend(sample_noise=0.5), domains, small, n=8, ks=(1, 4, 8))
    d = res["domains"]["math.add-v1"]
    p1, p4, p8 = (d["pass@k"][k]["value"] for k in ("1", "4", "8"))
    assert 0.3 < p1 < 0.7 and p1 < p4 < p8 <= 1.0
    assert d["pass^k"]["4"] < p1
    assert d["layers"]["L1"]["rate"] == 1.0  # the real rollout reports format_ok
    with pytest.raises(ConfigError, match="n=2"):
        EvalSpec(n=2, ks=(1, 4)).check()


def test_cache_is_keyed_by_weights_and_reused(tmp_path, domains):
    small = build_regression_set([domains["math.add-v1"]], per_domain=10, seed=4)
    cache = GenerationCache(tmp_path / "gen.sqlite")
    inner = OracleBackend()
    be = CachingBackend(inner, cache, weights_id="hash-A")
    first = _eval(tmp_path, "c1", be, domains, small, n=2, ks=(1,))
    assert be.misses == 10 and be.hits == 0
    # same weights hash, a different (wrong) inner model: answers come from the cache
    be2 = CachingBackend(OracleBackend(wrong_rate=1.0), cache, weights_id="hash-A")
    second = _eval(tmp_path, "c2", be2, domains, small, n=2, ks=(1,))
    assert be2.hits == 10 and be2.misses == 0
    assert second["overall"]["pass@k"] == first["overall"]["pass@k"]
    # new weights hash: regenerated, never served from another model's entries
    be3 = CachingBackend(OracleBackend(wrong_rate=1.0), cache, weights_id="hash-B")
    third = _eval(tmp_path, "c3", be3, domains, small, n=2, ks=(1,))
    assert be3.misses == 10 and third["overall"]["pass@k"]["1"]["value"] == 0.0
    be3.load_weights(1, None)
    assert be3.weights_id is None


def test_reuses_a_training_groups_samples(tmp_path, domains):
    from posttrain.rollout import run_groups
    from posttrain.inference.base import SamplingParams

    small = build_regression_set([domains["math.add-v1"]], per_domain=6, seed=6)
    tasks = small.tasks(domains)
    groups = run_groups(OracleBackend(), tasks[:4], SamplingParams(n=2))
    path = tmp_path / "groups.jsonl"
    path.write_text("".join(json.dumps(to_dict(g)) + "\n" for g in groups))
    reuse = load_reusable_groups(path)
    assert load_reusable_groups(path, policy_version=3) == {}
    counting = OracleBackend(wrong_rate=1.0)
    res = evaluate(counting, domains, small, EvalSpec(n=2, ks=(1,)), tmp_path / "r",
                   reuse=reuse, report=False)
    assert res["meta"]["reused_items"] == 4 and res["meta"]["generated_items"] == 2
    assert counting.prompts_seen == 2
    assert res["overall"]["pass@k"]["1"]["value"] == pytest.approx(4 / 6)
