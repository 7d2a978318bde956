"""The adapters' "restate the prompt's facts" probes, and the reasoning-gym holes they found."""

import json

import pytest

from posttrain.domains.adapters._restate import normalize, restate_probes

PROMPT = ("Here is the question:\nGiven:\n1. (S ∨ P)\n.2. (P ∧ S)\n.3. (S → Q)\n"
          ".What can we conclude from the above statements? There are 3 of them.\n\nAnswer.")


def test_probes_cover_each_premise_the_joined_premises_and_the_prompt():
    got = restate_probes(PROMPT, "(P ∨ R)", instruction="\n\nAnswer.")
    texts = set(got.probes.values())
    assert {"(S ∨ P)", "(P ∧ S)", "(S → Q)"} <= texts  # list markers (even ".2.") removed
    assert "((S ∨ P)) ∧ ((P ∧ S)) ∧ ((S → Q))" in texts
    assert "(S ∨ P), (P ∧ S), (S → Q)" in texts
    assert PROMPT in texts and "There are 3 of them." in texts
    assert got.skipped == 0 and all(k.startswith("restate_") for k in got.probes)


def test_a_piece_equal_to_the_reference_is_skipped_and_counted():
    got = restate_probes("Pick the largest:\n- 12.5\n- 7\n- 3", "12.5")
    assert got.skipped == 1
    assert "12.5" not in got.probes.values() and "7" in got.probes.values()
    assert normalize(" 12.5. ") == normalize("12.5")


def test_fixed_text_shared_by_other_prompts_is_left_out():
    mine = "Start: 0\nButtons:\nA: Add 2\nFor example: A → B → C"
    others = ["Start: 5\nButtons:\nA: Sub 1\nFor example: A → B → C",
              "Start: 1\nButtons:\nB: Add 3\nFor example: A → B → C"]
    got = restate_probes(mine, "A → A", others=others)
    assert "For example: A → B → C" not in got.probes.values() and got.template >= 1
    assert "A: Add 2" in got.probes.values()  # this task's own fact stays
    assert mine in got.probes.values()  # the whole prompt always stays


def test_limit_keeps_the_whole_prompt_and_premise_probes_first():
    prompt = "\n".join(f"{i}. fact number {i}" for i in range(1, 200))
    got = restate_probes(prompt + "\n\nAnswer.", "x", instruction="\n\nAnswer.", limit=10)
    assert len(got.probes) == 10
    assert list(got.probes)[:3] == ["restate_prompt", "restate_prompt_body",
                                    "restate_premises0_and_sym"]


rg = pytest.importorskip("reasoning_gym")

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task  # noqa: E402
from posttrain.domains.adapters._rg_strict import (  # noqa: E402
    buttons_shape,
    knights_knaves_shape,
    restates_premises,
)
from posttrain.domains.adapters.reasoning_gym import rg_id  # noqa: E402

load_builtin_domains()
ENTRY = {"metadata": {"premises": ["(S ∨ P)", "(P ∧ S)", "(S → Q)", "(Q ∧ R)"],
                      "variables": ["P", "Q", "R", "S"]}}


@pytest.mark.parametrize("answer,restates", [
    ("(S ∨ P)", True), ("(P ∨ S)", True), ("¬(¬(S ∧ P))", True),  # a premise, reordered, negated twice
    ("((Q ∧ R) ∧ (S ∧ P))", True), ("(R ∧ (P ∧ (S ∧ Q)))", True),  # conjunctions of premises
    ("(P ∨ R)", False), ("(P ∧ Q)", False), ("(R → Q)", False), ("P", False), ("junk ∧", False),
])
def test_restates_premises(answer, restates):
    assert restates_premises(answer, ENTRY) is restates


def test_answer_shapes():
    assert knights_knaves_shape("Samuel is an altruist, and Isabella is a egoist")
    assert knights_knaves_shape("Zoey is a knight and Ava is a knave.")
    assert not knights_knaves_shape("Samuel expressed that Isabella is an egoist if and only if "
                                    "Samuel is an altruist")
    assert buttons_shape("B → A → A") and buttons_shape("A->B") and not buttons_shape("B: Add 2")


def _tasks(name, seeds):
    dom = DOMAINS.get(rg_id(name))
    return dom, [sample_task(dom, s, d) for d in dom.difficulties for s in seeds]


def test_propositional_logic_refuses_copied_premises_on_every_task():
    dom, tasks = _tasks("propositional_logic", range(4))  # before the fix: 38 of 50 tasks paid 1.0
    assert dom.id == "logic.rg_propositional_logic-v2"
    for t in tasks:
        premises = dom.entry(t.difficulty, t.hidden["index"])["metadata"]["premises"]
        assert dom.score(t, dom.solve(t)).value == 1.0
        for p in premises + [" ∧ ".join(premises)]:
            assert dom.score(t, f"<answer>{p}</answer>").value == 0.0, (t.seed, p)


def test_a_restating_example_answer_is_replaced():
    dom = DOMAINS.get(rg_id("propositional_logic"))
    found = 0
    for seed in range(150):  # about 1 item in 50 has a copied premise as its example answer
        t = sample_task(dom, seed, 2)
        item = dom.entry(2, t.hidden["index"])
        example = item["metadata"]["example_answer"]
        if not restates_premises(example, item):
            continue
        found += 1
        ref = dom.solve(t)
        assert ref != example and not restates_premises(ref, item)
        assert dom.score(t, ref).value == 1.0 and dom.score(t, example).value == 0.0
    assert found >= 1


# (difficulty, seed) cases; knights_knaves pays for a restated statement on ~1 task in 30
CASES = {"quantum_lock": [(d, s) for d in range(1, 5) for s in range(8)],
         "knights_knaves": [(1, 22), (3, 17), (3, 18)]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_prompt_lines_paid_before_the_fix_now_score_zero(name):
    """quantum_lock read "B: Add 2 (when any)" as B A A; knights_knaves read a quoted
    statement naming the right roles as the answer. Find the restate probes the hardened
    scorer without the generator's guard pays 1.0 for, and check they now score 0."""
    from posttrain.domains.adapters._rg_scoring import hardened_score

    dom = DOMAINS.get(rg_id(name))
    tasks = [sample_task(dom, s, d) for d, s in CASES[name]]
    paid_before = 0
    for t in tasks:
        item, raw = dom.entry(t.difficulty, t.hidden["index"]), dom.dataset(t.difficulty).score_answer
        assert dom.score(t, dom.solve(t)).value == 1.0
        for key, text in dom.probes(t).items():
            if key.startswith("restate_") and \
                    hardened_score(raw, item, text, dom.solve(t), dom.id).value == 1.0:
                paid_before += 1
                assert dom.score(t, text).value == 0.0, text
    assert paid_before >= 1  # the hole is real on these tasks, so the check above is not empty


def test_every_reasoning_gym_domain_returns_restate_probes():
    from posttrain.domains.adapters._rg_manifest import DATASETS

    for name in ["gcd", "propositional_logic", "needle_haystack", "number_format"]:
        assert name in DATASETS
        dom = DOMAINS.get(rg_id(name))
        t = sample_task(dom, 0, 1)
        probes = dom.probes(t)
        assert any(k.startswith("restate_") for k in probes), name
        assert t.prompt[-1]["content"] in probes.values()


def test_dataset_domain_returns_restate_probes(tmp_path):
    from posttrain.domains.adapters.datasets import register_dataset_domain

    rows = [{"question": f"Facts:\n- Ann has {i} apples.\n- Bob has {i + 1}.\nHow many in all?",
             "answer": str(2 * i + 1)} for i in range(1, 10)]
    path = tmp_path / "apples.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    dom = register_dataset_domain(path, id="math.restate_apples-v1", family="math",
                                  verifier="numeric")
    try:
        t = sample_task(dom, 0, 1)
        probes = dom.probes(t)
        assert any(p.startswith("Ann has") for p in probes.values())
        assert all(dom.score(t, p).value == 0.0 for k, p in probes.items() if k.startswith("restate_"))
    finally:
        DOMAINS.remove(dom.id)
