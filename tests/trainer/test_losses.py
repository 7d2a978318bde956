"""Losses against hand-computed values on a two-sample batch; clipping, k3 KL, TIS, micro-batches.

The batch used throughout (one group, advantages given directly):
  sample 0: prompt [5, 6], actions [7, 8], behaviour logprobs (-1.0, -2.0), A = +1
  sample 1: prompt [5, 6], action  [9],    behaviour logprob  -0.5,         A = -1
New logprobs are behaviour + log(ratio) with ratios rho = (1.1, 1.25) and (0.7,):
  token a: A=+1, rho=1.1  -> inside every band
  token b: A=+1, rho=1.25 -> outside the symmetric 0.2 band (clipped at 1.2), inside DAPO's 1.28
  token c: A=-1, rho=0.7  -> below 1 - 0.2: clipped at 0.8 (pessimistic branch), zero gradient
"""

import math

import pytest
import torch
from trainer_helpers import group, traj

from posttrain.core.config import RLConfig
from posttrain.core.errors import ConfigError
from posttrain.trainer.batch import build_policy_batch, split_policy_batch
from posttrain.trainer.losses import LOSSES, LossConfig, get_algorithm

CFG = LossConfig(clip_low=0.2, clip_high=0.28, kl_coef=0.0, tis_cap=2.0, norm_length=4)
A, B, C = (0, 2), (0, 3), (1, 2)  # (row, column) of tokens a, b, c


def _batch():
    g = group(traj([5, 6], [7, 8], 1.0, logprobs=[-1.0, -2.0]), traj([5, 6], [9], 0.0, logprobs=[-0.5]))
    return build_policy_batch([g], [[1.0, -1.0]], pad_id=0)


def _new_logprobs(batch, ratios=((A, 1.1), (B, 1.25), (C, 0.7))):
    lp = batch.behaviour_logprobs.clone()
    for (r, c), rho in ratios:
        lp[r, c] += math.log(rho)
    return lp.requires_grad_(True)


def _run(name, batch=None, lp=None, cfg=CFG):
    batch = batch if batch is not None else _batch()
    lp = lp if lp is not None else _new_logprobs(batch)
    loss, metrics = LOSSES.get(name)(batch, lp, cfg)
    loss.backward()
    return loss, metrics, lp.grad


def test_grpo_value_gradient_and_clip():
    loss, m, grad = _run("grpo")
    # per-token max(-A rho, -A clip(rho)): a -1.1, b max(-1.25, -1.2) = -1.2, c max(0.7, 0.8) = 0.8
    # sample means: (-1.1 - 1.2) / 2 = -1.15 and 0.8; mean over samples -0.175
    assert loss.item() == pytest.approx(-0.175, abs=1e-6)
    # d loss / d logp_a = -A rho / (2 tokens * 2 samples) = -0.275; clipped tokens get exactly 0
    assert grad[A].item() == pytest.approx(-0.275, abs=1e-6)
    assert grad[B].item() == 0.0 and grad[C].item() == 0.0
    assert m["loss/clip_frac"] == pytest.approx(2 / 3)
    assert m["loss/clip_frac_high"] == pytest.approx(1 / 3)
    assert m["loss/ratio_mean"] == pytest.approx((1.1 + 1.25 + 0.7) / 3, abs=1e-6)
    assert m["loss/policy"] == m["loss/total"] == pytest.approx(-0.175, abs=1e-6)


def test_dapo_clip_higher_and_global_token_mean():
    loss, m, grad = _run("dapo")
    # band [0.8, 1.28]: b is inside now. tokens -1.1, -1.25, 0.8; token mean over 3 = -0.516667
    assert loss.item() == pytest.approx(-1.55 / 3, abs=1e-6)
    assert grad[A].item() == pytest.approx(-1.1 / 3, abs=1e-6)
    assert grad[B].item() == pytest.approx(-1.25 / 3, abs=1e-6)
    assert grad[C].item() == 0.0
    assert m["loss/clip_frac"] == pytest.approx(1 / 3)


def test_dr_grpo_divides_by_a_constant_not_the_length():
    loss, _, grad = _run("dr_grpo")
    # symmetric band: -1.1 - 1.2 + 0.8 = -1.5, / (2 samples * norm_length 4) = -0.1875
    assert loss.item() == pytest.approx(-0.1875, abs=1e-6)
    assert grad[A].item() == pytest.approx(-1.1 / 8, abs=1e-6)
    # a longer answer gets proportionally more weight (no 1/|o| factor): compare per-token grads
    g2 = group(traj([5, 6], [7, 8, 7, 8], 1.0, logprobs=[-1.0] * 4), traj([5, 6], [9], 1.0, logprobs=[-1.0]))
    batch = build_policy_batch([g2], [[1.0, 1.0]], 0)
    lp = batch.behaviour_logprobs.clone().requires_grad_(True)
    LOSSES.get("dr_grpo")(batch, lp, CFG)[0].backward()
    assert lp.grad[0, 2].item() == pytest.approx(lp.grad[1, 2].item())
    lp2 = batch.behaviour_logprobs.clone().requires_grad_(True)
    LOSSES.get("grpo")(batch, lp2, CFG)[0].backward()  # GRPO: the short sample's token weighs 4x
    assert lp2.grad[1, 2].item() == pytest.approx(4 * lp2.grad[0, 2].item())


@pytest.mark.parametrize("name", ["reinforce", "rloo"])
def test_reinforce_is_unclipped_with_truncated_ratio(name):
    loss, _, grad = _run(name)
    # -A rho: -1.1, -1.25, +0.7 -> token mean -0.55; every token has a gradient
    assert loss.item() == pytest.approx(-0.55, abs=1e-6)
    assert grad[C].item() == pytest.approx(0.7 / 3, abs=1e-6)
    cfg = LossConfig(tis_cap=1.2)
    loss, m, grad = _run(name, cfg=cfg)
    # rho_b = 1.25 is truncated to 1.2 in value and gradient, not zeroed
    assert loss.item() == pytest.approx((-1.1 - 1.2 + 0.7) / 3, abs=1e-6)
    assert grad[B].item() == pytest.approx(-1.2 / 3, abs=1e-6)
    assert m["loss/clip_frac"] == pytest.approx(1 / 3)


def test_k3_kl_to_reference():
    batch = _batch()
    lp = _new_logprobs(batch)
    # ref - new = (+log 2, 0, -log 2) on tokens a, b, c
    ref = lp.detach().clone()
    ref[A] += math.log(2.0)
    ref[C] -= math.log(2.0)
    batch = batch.replace(ref_logprobs=ref)
    # k3 = e^d - d - 1: 2 - ln2 - 1 = 0.306853; 0; 0.5 + ln2 - 1 = 0.193147. Mean 0.5 / 3.
    cfg = LossConfig(kl_coef=0.5, clip_low=0.2, clip_high=0.28)
    loss, m, grad = _run("dapo", batch, lp, cfg)
    assert m["loss/kl"] == pytest.approx(0.5 / 3, abs=1e-6)
    assert loss.item() == pytest.approx(-1.55 / 3 + 0.5 * 0.5 / 3, abs=1e-6)
    # d k3 / d new = 1 - e^d: at a 1 - 2 = -1; the KL gradient adds 0.5 * (-1) / 3
    assert grad[A].item() == pytest.approx(-1.1 / 3 - 0.5 / 3, abs=1e-6)
    # reported even when it does not enter the loss
    _, m0, _ = _run("dapo", batch, _new_logprobs(batch), CFG)
    assert m0["loss/kl"] == pytest.approx(0.5 / 3, abs=1e-6)


def test_kl_without_reference_is_a_config_error():
    with pytest.raises(ConfigError, match="ref_logprobs"):
        _run("grpo", cfg=LossConfig(kl_coef=0.1))


def test_truncated_importance_weight_between_behaviour_and_step_start_policy():
    batch = _batch()
    lp = batch.behaviour_logprobs.clone()
    # the step-start ("old") policy is the current one; the sampler was stale:
    # old / behaviour = 3 at a (truncated to cap 2), 0.5 at b, 1 at c
    old = lp.clone()
    old[A] += math.log(3.0)
    old[B] += math.log(0.5)
    batch = batch.replace(old_logprobs=old)
    lp = old.clone().requires_grad_(True)  # rho = new / old = 1
    loss, m, grad = _run("reinforce", batch, lp)
    # -A * rho * w: -2, -0.5, +1 -> mean -0.5
    assert loss.item() == pytest.approx(-0.5, abs=1e-6)
    assert grad[A].item() == pytest.approx(-2 / 3, abs=1e-6)
    assert m["loss/tis_weight_mean"] == pytest.approx((2 + 0.5 + 1) / 3, abs=1e-6)
    # with the correction disabled, all weights are 1
    _, m1, _ = _run("reinforce", batch, old.clone().requires_grad_(True), LossConfig(tis_cap=None))
    assert m1["loss/tis_weight_mean"] == pytest.approx(1.0)


def test_sample_weights_scale_a_samples_contribution():
    batch = _batch().replace(sample_weights=torch.tensor([1.0, 0.5]))
    loss, _, _ = _run("grpo", batch)
    assert loss.item() == pytest.approx((-1.15 + 0.5 * 0.8) / 2, abs=1e-6)


def test_per_token_advantages_are_accepted():
    batch = _batch()
    per_token = torch.zeros_like(batch.behaviour_logprobs)
    per_token[A], per_token[B], per_token[C] = 1.0, 0.0, -1.0
    loss, _, grad = _run("dapo", batch.replace(advantages=per_token))
    assert loss.item() == pytest.approx((-1.1 + 0.0 + 0.8) / 3, abs=1e-6)
    assert grad[B].item() == 0.0


@pytest.mark.parametrize("name", sorted(LOSSES.ids()))
def test_micro_batches_sum_to_the_full_batch(name):
    g = group(traj([5, 6], [7, 8, 9], 1.0, logprobs=[-1.0, -2.0, -0.3]),
              traj([5], [9, 9], 0.0, logprobs=[-0.5, -0.1]),
              traj([5, 6, 7], [8], 1.0, logprobs=[-0.2]))
    batch = build_policy_batch([g], [[0.7, -1.4, 0.7]], 0)
    torch.manual_seed(0)
    noise = 0.3 * torch.randn_like(batch.behaviour_logprobs)
    lp_full = (batch.behaviour_logprobs + noise).requires_grad_(True)
    full, _ = LOSSES.get(name)(batch, lp_full, CFG)
    full.backward()
    total = 0.0
    for part in split_policy_batch(batch, 2):
        rows = torch.isin(batch.sample_ids, part.sample_ids).nonzero(as_tuple=True)[0]
        lp_part = (part.behaviour_logprobs + noise[rows]).requires_grad_(True)
        loss, _ = LOSSES.get(name)(part, lp_part, CFG)
        loss.backward()
        total += loss.item()
        assert torch.allclose(lp_part.grad, lp_full.grad[rows], atol=1e-7)
    assert total == pytest.approx(full.item(), abs=1e-6)


def test_algorithms_and_config():
    cfg = LossConfig.from_rl(RLConfig(clip_low=0.1, clip_high=0.3, max_new_tokens=32))
    assert (cfg.clip_low, cfg.clip_high, cfg.norm_length) == (0.1, 0.3, 32)
    assert get_algorithm("dapo").filter_zero_variance and get_algorithm("dapo").loss == "dapo"
    assert get_algorithm("reinforce_pp").advantage == "reinforce_pp"
    with pytest.raises(ConfigError, match="allowed"):
        get_algorithm("ppo2")
    # RLConfig goes straight into a loss
    loss, _ = LOSSES.get("grpo")(_batch(), _new_logprobs(_batch()), RLConfig())
    assert torch.isfinite(loss)


@pytest.mark.parametrize("name", sorted(LOSSES.ids()))
def test_an_empty_batch_gives_a_zero_loss_not_a_crash(name):
    batch = build_policy_batch([group(traj([1], [2], 1.0, error=True))], [[1.0]], 0)
    assert batch.num_rows == 0 and batch.stats["batch/unusable"] == 1
    lp = torch.zeros(batch.input_ids.shape, requires_grad=True)
    loss, m = LOSSES.get(name)(batch, lp, CFG)
    loss.backward()
    assert loss.item() == 0.0 and m["loss/action_tokens"] == 0.0
