"""2-process FSDP2 (gloo, real processes) against one plain process: parity, micro-batches, DCP.

One spawn of 2 ranks runs every scenario of ``fsdp_scenarios`` (their start-up is most of
the cost); this process runs the same scenarios without any process group. Printed: the
largest weight difference per run (``-s`` shows it).
"""

from __future__ import annotations

import pytest
import torch

import fsdp_scenarios as sc
from posttrain.trainer.fsdp.dist import spawn

TOL = 1e-4  # float32 sums in another order through AdamW steps of lr 2e-2: 0.5% of one step


def _max_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float((a[k].float() - b[k].float()).abs().max()) for k in a)


def _equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _moments(optim_state: dict) -> dict:
    return {f"{name}/{k}": v for name, st in optim_state["state"].items()
            for k, v in st.items() if k in ("exp_avg", "exp_avg_sq", "step")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fsdp")
    one = {"parity": sc.parity_runs(), "run": sc.save_and_continue(root, "1"),
           "own": sc.resume_from(root / "ck_1")}
    spawn(sc.two_rank_main, 2, str(root), backend="gloo")
    two = torch.load(root / "results.pt", weights_only=False)
    one["other"] = sc.resume_from(root / "ck_2")  # 2 ranks -> 1 process
    return one, two


@pytest.mark.parametrize("name", list(sc.RUNS))
def test_two_ranks_match_one_process(runs, name):
    one, two = runs
    assert two["world_size"] == 2
    a, b = one["parity"][name], two["parity"][name]
    assert len(a["losses"]) == sc.STEPS
    assert a["losses"] == pytest.approx(b["losses"], abs=1e-6, rel=1e-5)
    diff = _max_diff(a["weights"], b["weights"])
    print(f"fsdp2 parity {name}: max abs weight diff {diff:.3g}")
    assert diff < TOL
    start = sc.model(0).state_dict()  # the runs moved the weights (the check is not vacuous)
    assert _max_diff(start, a["weights"]) > 1e-3


@pytest.mark.parametrize("micro", ["dapo_micro", "grpo_micro"])
def test_micro_batches_equal_one_batch(runs, micro):
    one, _ = runs
    whole = micro.replace("_micro", "")
    a, b = one["parity"][whole], one["parity"][micro]
    assert a["losses"] == pytest.approx(b["losses"], abs=1e-6, rel=1e-5)
    assert _max_diff(a["weights"], b["weights"]) < TOL


def test_micro_plan_cuts_the_batch():
    from posttrain.trainer.fsdp.update import plan_micro_batches

    b = sc.batch(0)
    plan = plan_micro_batches(b, 2, 40)
    assert len(plan) == 2 and sum(map(len, plan)) >= 3  # ranks of unequal micro counts: fillers run
    rows = sorted(int(r) for p in plan for m in p for r in m.sample_ids)
    assert rows == sorted(b.sample_ids.tolist())  # every sample once, none split
    for p in plan:
        for m in p:
            assert m.global_num_tokens == float(b.action_mask.sum())
            assert m.attention_mask.sum() <= 40 or m.num_samples == 1


@pytest.mark.parametrize("side", ["one", "two"])
def test_dcp_resume_same_rank_count_is_exact(runs, side):
    r = dict(zip(("one", "two"), runs))[side]
    assert _equal(r["own"]["loaded_model"], r["run"]["saved_model"])
    assert _equal(r["own"]["resumed"], r["run"]["uninterrupted"])


@pytest.mark.parametrize("direction", ["2->1", "1->2"])
def test_dcp_reshards_between_rank_counts(runs, direction):
    one, two = runs
    src, dst = (two, one) if direction == "2->1" else (one, two)
    # what the other rank count saved is what this one loaded, bit for bit (weights, moments)
    assert _equal(dst["other"]["loaded_model"], src["run"]["saved_model"])
    loaded, saved = _moments(dst["other"]["loaded_optim"]), _moments(src["run"]["saved_optim"])
    assert loaded and _equal(loaded, saved)
    # and it trains on to the uninterrupted run's weights (within float tolerance)
    assert _max_diff(dst["other"]["resumed"], src["run"]["uninterrupted"]) < TOL
    assert _max_diff(dst["other"]["resumed"], dst["run"]["uninterrupted"]) < TOL


@pytest.mark.parametrize("loss,epochs", [("grpo", 1), ("dapo", 2)])
def test_plain_update_is_the_reference_loops(loss, epochs):
    """One process, no budget: the reference loop's policy_update, bit for bit."""
    from posttrain.trainer.fsdp.update import sharded_policy_update
    from posttrain.trainer.optim import build_optimizer
    from posttrain.trainer.reference_loop import policy_update

    cfg = sc.rl(loss, epochs)
    a, b = sc.model(0), sc.model(0)
    opt_a, opt_b = build_optimizer(a, cfg.lr), build_optimizer(b, cfg.lr)
    for s in range(2):
        ma = policy_update(a, opt_a, sc.batch(s), cfg, loss)
        mb = sharded_policy_update(b, opt_b, sc.batch(s), cfg, loss)
        assert ma["loss/total"] == mb["loss/total"]
        assert ma["loss/grad_norm"] == pytest.approx(mb["loss/grad_norm"], rel=1e-6)
    assert _equal(a.state_dict(), b.state_dict())
