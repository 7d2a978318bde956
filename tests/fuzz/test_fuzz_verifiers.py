"""Every domain's verifier against hostile policy output, through the one episode engine.

Property (for every registered domain, native and adapters): whatever text the policy
writes — random bytes, invalid UTF-8, 100k and 10 MB answers, deeply nested JSON and
tool-call JSON, look-alike digits and signs, NaN/inf strings, answers in another domain's
format — the episode ends with a Score in [0, 1] or a recorded infrastructure failure,
within a per-call time bound; never an exception, a crash of our code on the text (a Score
whose error is ``verifier``/``env``: the output would be dropped from the loss instead of
scored), or a hang. Multi-turn domains get the text as the policy's turns (so the env's
step parser sees it) and then as its final answer.

Default tier: one domain per (family, env kind, native/adapter) with the named corpus
(10 MB cases on a few single-turn domains), and a hypothesis run on fast domains. Slow tier
(and ``bench/fuzz.py``): every domain, the full corpus including the 10 MB answers, and more
hypothesis examples.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz_inputs import HUGE, actions_for, bound_for, hostile_text, hostile_texts, play
from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task

load_builtin_domains()
ALL = sorted(DOMAINS.ids())


def _needs_sandbox(dom) -> bool:
    return dom.env_kind == "sandbox" or bool(getattr(dom, "needs_sandbox", False))


def _one_per_kind() -> list[str]:
    """The first domain of every (family, env kind, adapter?) — every verifier code path
    family at least once, in seconds."""
    seen, out = set(), []
    for did in ALL:
        dom = DOMAINS.get(did)
        key = (dom.family, dom.env_kind, ".rg_" in did or not getattr(dom, "native", True))
        if key not in seen and did != "code.humaneval-v1":  # humaneval: slow tier (26 s)
            seen.add(key)
            out.append(did)
    # the reasoning-gym scorers that evaluate answers as code (see _rg_safe_eval)
    out += [d for d in ("algorithms.rg_binary_matrix-v1", "games.rg_puzzle24-v1",
                        "math.rg_simple_integration-v1") if d in DOMAINS and d not in out]
    return out


SAMPLE = _one_per_kind()
HUGE_SAMPLE = [d for d in SAMPLE if DOMAINS.get(d).env_kind == "single_turn"][:4]


def _task(did: str, seed: int = 0):
    dom = DOMAINS.get(did)
    return dom, sample_task(dom, seed, tuple(dom.difficulties)[0])


def _reference(dom, task) -> str:
    try:
        return str(dom.solve(task))
    except Exception:  # noqa: BLE001 - a reference is only used to shape the corpus
        return "42"


def _escapes(did: str, *, huge: bool, only_huge: bool = False) -> list[str]:
    dom, task = _task(did)
    out = []
    for name, text in hostile_texts(task, _reference(dom, task), huge=huge).items():
        if only_huge and len(text) < HUGE:
            continue
        o = play(dom, task, actions_for(dom, text), bound_s=bound_for(text, _needs_sandbox(dom)))
        if o.escaped:
            out.append(f"{did} {name}: {o.kind} ({o.wall_s:.2f} s) {o.detail}")
    return out


def test_sample_covers_every_family_and_kind():
    fams = {DOMAINS.get(d).family for d in SAMPLE}
    kinds = {DOMAINS.get(d).env_kind for d in SAMPLE}
    assert fams == {DOMAINS.get(d).family for d in ALL}
    assert kinds == {"single_turn", "tool", "sandbox"}


@pytest.mark.parametrize("did", SAMPLE)
def test_hostile_corpus_never_escapes(did):
    assert _escapes(did, huge=False) == []


@pytest.mark.parametrize("did", HUGE_SAMPLE)
def test_ten_megabyte_answers_stay_bounded(did):
    assert _escapes(did, huge=True, only_huge=True) == []


FAST = [d for d in SAMPLE if DOMAINS.get(d).env_kind != "sandbox"][:12]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(text=hostile_text())
def test_property_random_hostile_text_is_scored(text):
    """hypothesis: random members of every hostile family, on fast domains of every family."""
    for did in FAST:
        dom, task = _task(did)
        o = play(dom, task, actions_for(dom, text), bound_s=5.0)
        assert not o.escaped, (did, o)


@pytest.mark.slow
@pytest.mark.parametrize("did", ALL)
def test_every_domain_every_hostile_case(did):
    assert _escapes(did, huge=True) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=hostile_text())
def test_property_every_non_sandbox_domain(text):
    for did in ALL:
        dom = DOMAINS.get(did)
        if _needs_sandbox(dom):
            continue
        dom, task = _task(did)
        o = play(dom, task, actions_for(dom, text), bound_s=5.0)
        assert not o.escaped, (did, o)


@pytest.mark.parametrize("did, text", [
    ("algorithms.bipartite-v1", "9" * 5000),  # int() refuses > 4300 digits: was a ValueError
    ("text_data.json_to_xml-v1", "<a>\udcff</a>"),  # expat refuses lone surrogates
    ("instructions.delimited_parts-v1", "9" * 20_000),  # sentence regex was quadratic: 15 s
    ("instructions.yaml_doc-v1", "meta: x\n" * 150_000),  # PyYAML read 1.2 MB in ~15 s
    ("instructions.yaml_doc-v1", "[" * 50_000),  # nested past the recursion limit
])
def test_escapes_found_by_fuzzing_stay_fixed(did, text):
    dom, task = _task(did)
    o = play(dom, task, actions_for(dom, text), bound_s=1.0, hang_s=30.0)
    assert o.kind == "score" and o.value == 0.0, o
