"""The behaviour corrections and GSPO/CISPO against hand computations on a three-sample batch.

Batch (one group, advantages given directly; logprobs in nats):
  sample 0: actions [7, 8],  A = +1
  sample 1: action  [9],     A = -1
  sample 2: actions [7, 9],  A = +1
Start-of-step trainer / behaviour ratios k = exp(old - beh) per token:
  sample 0: (4, 2)   -> geometric mean sqrt(8) = 2.83, above the band [0.5, 2]
  sample 1: (1.5,)   -> 1.5, inside
  sample 2: (0.1, 1) -> sqrt(0.1) = 0.316, below
Token ratios outside [0.5, 2]: 4 and 0.1 (2 of 5); 2 is on the edge and kept.
"""

import math

import pytest
import torch
from trainer_helpers import group, traj

from posttrain.core.config import RLConfig, RunConfig
from posttrain.core.errors import ConfigError
from posttrain.trainer.algorithms import ALGORITHMS, CORRECTION_IDS
from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.corrections import CORRECTIONS
from posttrain.trainer.losses import LOSSES, LossConfig

BEH = ([-1.0, -2.0], [-0.5], [-1.0, -1.5])
K = ([4.0, 2.0], [1.5], [0.1, 1.0])
ADV = [1.0, -1.0, 1.0]
CELLS = [(0, 2), (0, 3), (1, 2), (2, 2), (2, 3)]  # (row, column) of the 5 action tokens
K_FLAT = [4.0, 2.0, 1.5, 0.1, 1.0]
ROW_OF = [0, 0, 1, 2, 2]
CFG = LossConfig(clip_low=0.2, clip_high=0.2, tis_cap=2.0, correction_low=0.5, correction_high=2.0)


def _batch():
    g = group(traj([5, 6], [7, 8], 1.0, logprobs=BEH[0]), traj([5, 6], [9], 0.0, logprobs=BEH[1]),
              traj([5, 6], [7, 9], 1.0, logprobs=BEH[2]))
    return build_policy_batch([g], [ADV], pad_id=0)


def _at(batch, values):
    """A [B, L] tensor holding ``values`` (one per action token) added to the behaviour logprobs."""
    out = batch.behaviour_logprobs.clone()
    for (r, c), v in zip(CELLS, values):
        out[r, c] += v
    return out


def _old(batch):
    return _at(batch, [math.log(k) for k in K_FLAT])


def _run(loss, correction, new_ratios=None, with_old=True):
    """loss, metrics, d loss / d logp_new at the 5 action tokens."""
    batch = _batch()
    old = _old(batch)
    if with_old:
        batch = batch.replace(old_logprobs=old)
    new = old if new_ratios is None else old + _at(batch, [math.log(r) for r in new_ratios]) - batch.behaviour_logprobs
    new = new.clone().requires_grad_(True)
    cfg = LossConfig(**{**CFG.__dict__, "correction": correction})
    value, metrics = LOSSES.get(loss)(batch, new, cfg)
    value.backward()
    return value, metrics, [float(new.grad[r, c]) for r, c in CELLS]


def test_registry_ids_match_the_torch_free_list():
    assert sorted(CORRECTIONS.ids()) == sorted(CORRECTION_IDS)
    assert {"gspo", "cispo"} <= set(ALGORITHMS) and {"gspo", "cispo"} <= set(LOSSES.ids())


def test_sequence_masked_is_drops_whole_sequences_out_of_band():
    loss, m, grad = _run("grpo", "seq_mis")
    # Only sample 1 is kept. rho = 1, so its token term is -A = +1 over 1 token, / 3 samples.
    assert loss.item() == pytest.approx(1 / 3, abs=1e-6)
    assert grad[0] == grad[1] == grad[3] == grad[4] == 0.0  # out-of-band sequences: no gradient
    assert grad[2] == pytest.approx(1 / 3, abs=1e-6)  # weight 1, not the ratio 1.5
    assert m["mismatch/masked_frac"] == pytest.approx(4 / 5)
    assert m["mismatch/seq_out_of_band_frac"] == pytest.approx(2 / 3)
    assert m["mismatch/seq_ratio_max"] == pytest.approx(math.sqrt(8), rel=1e-5)
    assert m["mismatch/seq_ratio_min"] == pytest.approx(math.sqrt(0.1), rel=1e-5)
    geo = torch.tensor([math.sqrt(8), 1.5, math.sqrt(0.1)])
    assert m["mismatch/seq_ratio_std"] == pytest.approx(float(geo.std(unbiased=False)), rel=1e-5)


def test_icepop_keeps_the_ratio_inside_the_band_and_zeroes_outside():
    loss, m, grad = _run("grpo", "icepop")
    # weights (0, 2, 1.5, 0, 1); grpo gradient -A * w / (tokens of the sample * 3 samples)
    want = [0.0, -2 / 6, 1.5 / 3, 0.0, -1 / 6]
    assert grad == pytest.approx(want, abs=1e-6)
    assert m["mismatch/masked_frac"] == pytest.approx(2 / 5)
    assert m["loss/tis_weight_mean"] == pytest.approx((0 + 2 + 1.5 + 0 + 1) / 5, abs=1e-6)


def test_token_tis_truncates_at_the_cap():
    _, m, grad = _run("grpo", "tis")
    want = [-2 / 6, -2 / 6, 1.5 / 3, -0.1 / 6, -1 / 6]  # min(k, 2)
    assert grad == pytest.approx(want, abs=1e-6)
    assert m["mismatch/masked_frac"] == 0.0


def test_mismatch_metrics_by_hand():
    _, m, _ = _run("grpo", "none")
    d = [math.log(k) for k in K_FLAT]
    assert m["mismatch/kl_k3"] == pytest.approx(sum(math.exp(x) - 1 - x for x in d) / 5, rel=1e-5)
    assert m["mismatch/kl_k1"] == pytest.approx(-sum(d) / 5, rel=1e-5)
    assert m["mismatch/abs_logp_mean"] == pytest.approx(sum(abs(x) for x in d) / 5, rel=1e-5)
    assert m["mismatch/abs_logp_max"] == pytest.approx(math.log(10), rel=1e-5)
    assert m["mismatch/out_of_band_frac"] == pytest.approx(2 / 5)
    assert m["mismatch/masked_frac"] == 0.0


def test_decoupled_corrections_need_no_old_logprobs():
    """Without old_logprobs a decoupled correction measures logp_new (detached) against the
    behaviour: the same weights as the step's start, so the result equals passing them."""
    batch = _batch()
    new = _old(batch).requires_grad_(True)
    cfg = LossConfig(**{**CFG.__dict__, "correction": "icepop"})
    loss, m = LOSSES.get("grpo")(batch, new, cfg)
    loss.backward()
    with_old, m_old, grad_old = _run("grpo", "icepop")
    assert loss.item() == pytest.approx(with_old.item(), abs=1e-6)
    assert [float(new.grad[r, c]) for r, c in CELLS] == pytest.approx(grad_old, abs=1e-6)
    assert m["mismatch/kl_k3"] == pytest.approx(m_old["mismatch/kl_k3"])
    # the legacy tis keeps the ratio against the behaviour: the same logprobs are clipped there
    _, _, legacy = _run("grpo", "tis", with_old=False)
    assert legacy[0] == 0.0  # k = 4 > 1.2 with A > 0: PPO's clipped branch


def test_gspo_one_ratio_per_sequence():
    # new / old ratios per token; sequence ratios: s0 = sqrt(1.1 * 1.25), s1 = 0.7, s2 = sqrt(1.5)
    loss, m, grad = _run("gspo", "none", new_ratios=[1.1, 1.25, 0.7, 1.5, 1.0])
    s0, s2 = math.sqrt(1.1 * 1.25), math.sqrt(1.5)
    # s0 inside [0.8, 1.2]: -s0; s1 below with A < 0: clipped to 0.8; s2 above with A > 0: -1.2
    assert loss.item() == pytest.approx((-s0 + 0.8 - 1.2) / 3, abs=1e-6)
    # d/dlogp_t of -s0 averaged over its 2 tokens: -s0 / 2 / 3 samples, the same for both tokens
    assert grad[0] == pytest.approx(-s0 / 6, abs=1e-6) and grad[1] == pytest.approx(grad[0], abs=1e-7)
    assert grad[2:] == [0.0, 0.0, 0.0]  # clipped sequences carry no gradient
    assert m["loss/clip_frac"] == pytest.approx(3 / 5)  # tokens of clipped sequences
    assert s2 > 1.2


def test_cispo_clips_the_weight_and_keeps_every_gradient():
    loss, m, grad = _run("cispo", "none", new_ratios=[1.1, 1.25, 0.7, 1.5, 1.0])
    w = [1.1, 1.2, 0.8, 1.2, 1.0]  # clip(r, 0.8, 1.2), a constant
    adv = [ADV[r] for r in ROW_OF]
    assert grad == pytest.approx([-a * x / 5 for a, x in zip(adv, w)], abs=1e-6)
    assert all(g != 0 for g in grad)  # unlike PPO, a clipped token still moves
    batch = _batch()
    new = _old(batch) + _at(batch, [math.log(r) for r in (1.1, 1.25, 0.7, 1.5, 1.0)]) - batch.behaviour_logprobs
    logp = [float(new[r, c]) for r, c in CELLS]
    assert loss.item() == pytest.approx(sum(-a * x * lp for a, x, lp in zip(adv, w, logp)) / 5, abs=1e-5)
    assert m["loss/clip_frac_high"] == pytest.approx(2 / 5) and m["loss/clip_frac_low"] == pytest.approx(1 / 5)


def test_every_loss_logs_the_mismatch():
    for name in LOSSES.ids():
        _, m, _ = _run(name, "tis")
        assert m["mismatch/kl_k3"] > 0 and m["mismatch/out_of_band_frac"] == pytest.approx(2 / 5), name


def test_config_accepts_the_names_and_rejects_typos():
    from posttrain.trainer.validate import check_run_config

    for name in CORRECTION_IDS:
        check_run_config(RunConfig(rl=RLConfig(correction=name)))
    for name in ("gspo", "cispo"):
        check_run_config(RunConfig(rl=RLConfig(algorithm=name)))
    with pytest.raises(ConfigError, match=r"rl.correction: got 'icepp'; did you mean 'icepop'"):
        check_run_config(RunConfig(rl=RLConfig(correction="icepp")))
    with pytest.raises(ConfigError, match="rl.correction_low"):
        check_run_config(RunConfig(rl=RLConfig(correction_low=2.0, correction_high=1.0)))
    assert LossConfig.from_rl(RLConfig(correction="seq_mis", correction_high=3.0)).correction_high == 3.0
