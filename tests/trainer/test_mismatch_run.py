"""Each correction (and GSPO, CISPO) through a real RL step, checked against a hand-written loss.

The trainer is the SFT-ed tiny model; the rollout engine is the HF backend holding a
*perturbed* copy of the weights (a stand-in for an engine whose numerics differ from the
trainer's), so the behaviour logprobs really differ from the trainer's. After one real
``rl_step`` the model's gradients must equal those of the loss written out by hand from the
same trajectories — e.g. for ``seq_mis`` a sequence whose geometric-mean ratio is out of the
band contributes nothing — and the logged ``mismatch/*`` must equal the hand values.
"""

import copy
import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "async_loop"))

from async_helpers import run_config, warm_policy  # noqa: E402

from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.trainer.advantages import compute_advantages  # noqa: E402
from posttrain.trainer.batch import build_policy_batch  # noqa: E402
from posttrain.trainer.logprobs import frozen_logprobs, token_logprobs  # noqa: E402
from posttrain.trainer.reference_loop import RLState, rl_step, train_rl  # noqa: E402
from posttrain.trainer.sft import pad_id_of  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402

NOISE = 0.05  # std of the engine's weight perturbation: per-sequence ratios ~0.7..1.4 here
BAND = (0.9, 1.1)


def _perturbed(model, seed=0):
    engine = copy.deepcopy(model).eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in engine.parameters():
            p.add_(NOISE * torch.randn(p.shape, generator=gen))
    return engine


def _real_step(**rl):
    """(initial weights, gradients after one real step, its metrics, its batch)."""
    cfg = run_config(prompts_per_step=4, group_size=4, grad_clip=1e9, correction_low=BAND[0],
                     correction_high=BAND[1], **rl)
    model, tok = warm_policy()
    init = copy.deepcopy(model)
    backend = HFBackend(_perturbed(model), tok)
    groups = []
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    metrics = rl_step(model, optimizer, backend, TaskStream(cfg.domains, seed=cfg.seed), cfg.rl,
                      RLState(), pad_id=pad_id_of(tok), seed=cfg.seed, on_groups=groups.extend)
    grads = [p.grad.clone() for p in model.parameters()]
    algo = cfg.rl.algorithm
    batch = build_policy_batch(groups, compute_advantages(groups, "grpo" if algo != "rloo" else algo),
                               pad_id_of(tok))
    return init, grads, metrics, batch


def _per_sample(batch, x):
    """Sum over each sample's action tokens and its token count: ([N], [N])."""
    m = batch.action_mask.float()
    n = int(batch.sample_ids.max()) + 1
    sums = torch.zeros(n).index_add(0, batch.sample_ids, (x * m).sum(1))
    return sums, torch.zeros(n).index_add(0, batch.sample_ids, m.sum(1))


def _sample_adv(batch):
    n = int(batch.sample_ids.max()) + 1
    return torch.zeros(n).index_put_((batch.sample_ids,), batch.advantages)


# hand-written losses: (model, batch) -> scalar whose gradient the step must reproduce ---------
def _hand_seq_mis(lp, batch, beh):
    d_sum, n_tok = _per_sample(batch, lp.detach() - beh)
    geo = torch.exp(d_sum / n_tok)
    keep = (geo >= BAND[0]) & (geo <= BAND[1])
    lp_sum, _ = _per_sample(batch, lp)  # decoupled ratio exp(lp - sg(lp)) has gradient grad(lp)
    return -(keep * _sample_adv(batch) * lp_sum / n_tok).sum() / keep.numel(), keep


def _hand_icepop(lp, batch, beh):
    k = torch.exp(lp.detach() - beh)
    w = torch.where((k >= BAND[0]) & (k <= BAND[1]), k, torch.zeros_like(k))
    adv = batch.advantages[:, None]
    s, n_tok = _per_sample(batch, -adv * w * lp)
    return (s / n_tok).sum() / n_tok.numel(), (w == 0) & batch.action_mask


def _hand_gspo(lp, batch, beh, low=0.05, high=0.05):
    d_sum, n_tok = _per_sample(batch, lp - beh)
    s = torch.exp(d_sum / n_tok)
    a = _sample_adv(batch)
    per_seq = torch.maximum(-a * s, -a * s.clamp(1 - low, 1 + high))
    clipped = ((a > 0) & (s > 1 + high)) | ((a < 0) & (s < 1 - low))
    return per_seq.mean(), clipped


def _hand_cispo(lp, batch, beh, low=0.2, high=0.28):
    w = torch.exp(lp.detach() - beh).clamp(1 - low, 1 + high)
    m = batch.action_mask.float()
    return (-batch.advantages[:, None] * w * lp * m).sum() / m.sum(), None


def _hand_tis(lp, batch, beh, low=0.2):
    # fresh batch: tis is the legacy objective, PPO clip of the ratio against the behaviour
    r = torch.exp(lp - beh)
    adv = batch.advantages[:, None]
    per = torch.maximum(-adv * r, -adv * r.clamp(1 - low, 1 + low))
    s, n_tok = _per_sample(batch, per)
    return (s / n_tok).sum() / n_tok.numel(), None


CASES = {
    "seq_mis": (dict(correction="seq_mis"), _hand_seq_mis),
    "icepop": (dict(correction="icepop"), _hand_icepop),
    "tis": (dict(correction="tis"), _hand_tis),
    "gspo": (dict(algorithm="gspo", correction="none", clip_low=0.05, clip_high=0.05), _hand_gspo),
    "cispo": (dict(algorithm="cispo", correction="none"), _hand_cispo),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_step_gradient_is_the_hand_computed_one(case):
    rl, hand = CASES[case]
    init, grads, metrics, batch = _real_step(**rl)
    lp = token_logprobs(init, batch)
    loss, dropped = hand(lp, batch, batch.behaviour_logprobs)
    want = torch.autograd.grad(loss, list(init.parameters()), allow_unused=True)
    for g, w in zip(grads, want):
        w = torch.zeros_like(g) if w is None else w
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-7)
    assert max(float(g.abs().max()) for g in grads) > 0  # the step did train
    if dropped is not None:  # the case has teeth: something was out of band / clipped, and live
        adv = _sample_adv(batch) if dropped.dim() == 1 else batch.advantages[:, None].expand_as(dropped)
        assert bool((dropped & (adv != 0)).any()), case
        assert bool((~dropped & (adv != 0)).any()), case


def test_logged_mismatch_is_the_hand_computed_one():
    init, _, m, batch = _real_step(correction="seq_mis")
    live = batch.advantages != 0  # the update trains (and measures) the rows that carry a gradient
    old = frozen_logprobs(init, batch)
    mask = batch.action_mask & live[:, None]
    d = (old - batch.behaviour_logprobs)[mask]
    assert m["mismatch/kl_k3"] == pytest.approx(float((d.exp() - 1 - d).mean()), rel=1e-4)
    assert m["mismatch/abs_logp_max"] == pytest.approx(float(d.abs().max()), rel=1e-4)
    out = ((d.exp() < BAND[0]) | (d.exp() > BAND[1])).float().mean()
    assert m["mismatch/out_of_band_frac"] == pytest.approx(float(out), abs=1e-6)
    assert m["mismatch/kl_k3"] > 1e-3  # the perturbed engine really is a different policy


def test_in_sync_engine_mismatch_is_rounding_every_step():
    """The HF backend holding the trainer's weights: every step logs a mismatch at float
    rounding, under every correction, and nothing is masked."""
    for correction in ("tis", "seq_mis", "icepop"):
        cfg = run_config(steps=2, correction=correction)
        model, tok = warm_policy()
        backend = HFBackend(copy.deepcopy(model).eval(), tok)
        rows = []
        train_rl(model, torch.optim.AdamW(model.parameters(), lr=1e-2), backend,
                 TaskStream(cfg.domains, seed=cfg.seed), cfg.rl, pad_id=pad_id_of(tok),
                 seed=cfg.seed, on_step=lambda s, mt: rows.append(mt))
        trained = [r for r in rows if "mismatch/kl_k3" in r]
        assert len(trained) == sum("loss/total" in r for r in rows) >= 1
        for r in trained:
            assert r["mismatch/abs_logp_max"] < 1e-4, (correction, r["mismatch/abs_logp_max"])
            assert 0 <= r["mismatch/kl_k3"] < 1e-8
            assert r["mismatch/masked_frac"] == 0 and r["mismatch/out_of_band_frac"] == 0
            assert math.isclose(r["mismatch/seq_ratio_min"], 1, abs_tol=1e-4)


def test_async_loop_logs_the_lag_as_mismatch():
    """At max_policy_lag 1 a step trains on samples of the previous weights: the logged
    mismatch is then the policy lag plus the engine's rounding, far above the in-sync value."""
    from posttrain.trainer.loop import AsyncConfig, train_async

    cfg = run_config(steps=4, max_policy_lag=1, correction="icepop", kl_coef=0.05)  # KL: all rows
    model, tok = warm_policy()
    rows = {}
    train_async(model, torch.optim.AdamW(model.parameters(), lr=1e-2), HFBackend(copy.deepcopy(model).eval(), tok),
                TaskStream(cfg.domains, seed=cfg.seed), cfg.rl, pad_id=pad_id_of(tok), seed=cfg.seed,
                on_step=lambda s, m: rows.__setitem__(s, m), config=AsyncConfig())
    assert sorted(rows) == [1, 2, 3, 4] and all("mismatch/kl_k3" in r for r in rows.values())
    assert rows[1]["mismatch/abs_logp_max"] < 1e-4  # job 1 is sampled with the first weights
    stale = [rows[s]["mismatch/kl_k3"] for s in (2, 3, 4) if rows[s]["async/lag_max"] >= 1]
    # (a step whose batch had no reward signal leaves the weights, and the next lag, unchanged)
    assert stale and max(stale) > 1e-3, stale
