"""Policy-gradient losses: registered pure functions ``(batch, logprobs_new, config) -> (loss, metrics)``.

Three log-probabilities of each action token meet here (all aligned as in ``batch.py``):

- ``logp_new``  — the trainer's current weights, with gradient (``token_logprobs``);
- ``logp_old``  — the "proximal" policy of PPO: ``batch.old_logprobs`` when the caller
  computed them at the start of the step (no gradient), else ``batch.behaviour_logprobs``;
- ``logp_beh``  — the behaviour policy that sampled the token (the inference engine's
  logprobs, possibly ``max_policy_lag`` versions old).

The trust-region ratio is ``rho = exp(logp_new - logp_old)``. The off-policy correction is a
detached per-token weight ``w`` from ``logp_old - logp_beh``, chosen by ``correction``
(:mod:`.corrections`: ``none``, ``tis``, ``seq_mis``, ``icepop``). The default ``tis`` is a
truncated importance weight ``w = min(exp(logp_old - logp_beh), tis_cap)``: it is only not 1
when ``old_logprobs`` are given, i.e. it corrects the gap between the weights that sampled a
token and the weights at the start of this step, while ``rho`` keeps the update close to the
latter (the decoupled objective of AReaL; Yao et al.'s TIS). Without ``old_logprobs`` the
ratio itself is taken against the behaviour policy, and clipping is the only guard against a
stale sample — except for the decoupled corrections, whose ``logp_old`` is then the detached
``logp_new`` (the same weights: this is exact on a single-epoch step).

Besides the PPO-style losses: ``gspo`` (a sequence-level ratio, clipped per sequence) and
``cispo`` (REINFORCE weighted by the clipped, stop-gradient ratio). Every loss also returns
the behaviour–trainer mismatch metrics ``mismatch/*`` of :func:`.corrections.mismatch_metrics`.

Every function returns a scalar loss to minimise and a dict of float metrics (keys defined in
docs/algorithms.md). Nothing here steps an optimizer or touches a model. Per-token
advantages (``[B, L]``) are accepted wherever per-row ones (``[B]``) are.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Callable

import torch

from posttrain.core.errors import ConfigError
from posttrain.core.registry import Registry

from .batch import PolicyBatch
from .corrections import get_correction, log_ratio, mismatch_metrics, sequence_log_ratio

LossFn = Callable[..., tuple[torch.Tensor, dict[str, float]]]
LOSSES: Registry[LossFn] = Registry("loss", entry_point_group="posttrain.losses", versioned=False)

# exp() of a log-ratio beyond this is numerically meaningless; beyond it the gradient is 0.
_MAX_LOG_RATIO = 20.0


@dataclass(frozen=True)
class LossConfig:
    """Knobs of the losses. Build it from an ``RLConfig`` with :meth:`from_rl`.

    ``tis_cap``: truncation of importance weights (None disables the ``tis`` correction and
    the REINFORCE ratio truncation). ``norm_length``: Dr. GRPO's constant divisor (tokens per
    sample); ``from_rl`` takes ``max_new_tokens``. ``correction``: an id of
    :data:`.corrections.CORRECTIONS`; ``correction_low``/``correction_high``: the band of
    ratios ``seq_mis`` and ``icepop`` keep (and ``mismatch/out_of_band_frac`` counts against).
    """

    clip_low: float = 0.2
    clip_high: float = 0.28
    kl_coef: float = 0.0
    tis_cap: float | None = 2.0
    norm_length: int = 16
    correction: str = "tis"
    correction_low: float = 0.5
    correction_high: float = 2.0

    @classmethod
    def from_rl(cls, rl: Any, **overrides: Any) -> "LossConfig":
        """From ``posttrain.core.config.RLConfig`` (fields it lacks keep their defaults)."""
        values = {f.name: getattr(rl, f.name) for f in fields(cls) if hasattr(rl, f.name)}
        if not hasattr(rl, "norm_length") and hasattr(rl, "max_new_tokens"):
            values["norm_length"] = rl.max_new_tokens
        values.update(overrides)
        return cls(**values)


def as_loss_config(config: Any) -> LossConfig:
    return config if isinstance(config, LossConfig) else LossConfig.from_rl(config)


@dataclass(frozen=True)
class _Terms:
    mask: torch.Tensor  # [B, L] float
    adv: torch.Tensor  # [B, L] float
    ratio: torch.Tensor  # [B, L], gradient flows
    is_weight: torch.Tensor  # [B, L], detached
    kl: torch.Tensor | None  # [B, L] k3 to the reference, gradient flows
    log_ratio: torch.Tensor  # [B, L] log rho, gradient flows
    mismatch: dict[str, float]  # mismatch/* of the step's start-of-step logprobs


def _terms(batch: PolicyBatch, logp_new: torch.Tensor, cfg: LossConfig) -> _Terms:
    mask = batch.action_mask.to(logp_new.dtype)
    adv = batch.advantages
    adv = adv.unsqueeze(1).expand_as(logp_new) if adv.dim() == 1 else adv
    beh = batch.behaviour_logprobs
    correction = get_correction(cfg.correction)
    # Without old_logprobs the detached logp_new *are* the start-of-step logprobs on the first
    # (only) epoch: the mismatch is measured, and decoupled corrections applied, for free.
    start = batch.old_logprobs if batch.old_logprobs is not None else logp_new.detach()
    old = start if batch.old_logprobs is not None or correction.decoupled else beh
    lr = ((logp_new - old) * mask).clamp(-_MAX_LOG_RATIO, _MAX_LOG_RATIO)
    ratio = torch.exp(lr)
    d = log_ratio(start, beh, mask)
    is_weight = correction.weight(d, mask, batch, cfg).detach()
    mismatch = mismatch_metrics(d, mask, is_weight, batch, cfg)
    kl = None
    if batch.ref_logprobs is not None:
        d = ((batch.ref_logprobs - logp_new) * mask).clamp(-_MAX_LOG_RATIO, _MAX_LOG_RATIO)
        kl = torch.exp(d) - d - 1.0  # k3: unbiased, always >= 0 (Schulman 2020)
    elif cfg.kl_coef > 0:
        raise ConfigError("kl_coef > 0 needs batch.ref_logprobs (frozen_logprobs of the reference)")
    return _Terms(mask, adv, ratio, is_weight, kl, lr, mismatch)


# aggregations ---------------------------------------------------------------------------
def _num_samples(batch: PolicyBatch) -> float:
    if batch.global_num_samples is not None:
        return float(batch.global_num_samples)
    return float(max(1, batch.num_samples))


def _num_tokens(batch: PolicyBatch, mask: torch.Tensor) -> float:
    if batch.global_num_tokens is not None:
        return float(batch.global_num_tokens)
    return float(max(1.0, float(mask.sum())))


def seq_mean_token_mean(x: torch.Tensor, mask: torch.Tensor, batch: PolicyBatch) -> torch.Tensor:
    """Mean over samples of each sample's token mean (rows of one trajectory pooled)."""
    row_tokens = mask.sum(1)
    n_samples = int(batch.sample_ids.max()) + 1 if batch.num_rows else 0
    sample_tokens = row_tokens.new_zeros(n_samples).index_add_(0, batch.sample_ids, row_tokens)
    per_row = (x * mask).sum(1) / sample_tokens[batch.sample_ids].clamp(min=1.0)
    return (per_row * batch.sample_weights).sum() / _num_samples(batch)


def token_sum_over_constant(x: torch.Tensor, mask: torch.Tensor, batch: PolicyBatch,
                            norm_length: int) -> torch.Tensor:
    """Sum of token terms / (samples * norm_length): no per-sequence length normalisation."""
    per_row = (x * mask).sum(1)
    return (per_row * batch.sample_weights).sum() / (_num_samples(batch) * float(norm_length))


def token_mean(x: torch.Tensor, mask: torch.Tensor, batch: PolicyBatch) -> torch.Tensor:
    """Sum of token terms / number of action tokens in the (global) batch."""
    per_row = (x * mask).sum(1)
    return (per_row * batch.sample_weights).sum() / _num_tokens(batch, mask)


# building blocks --------------------------------------------------------------------------
def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x * mask).sum() / mask.sum().clamp(min=1.0))


def _clipped_surrogate(t: _Terms, low: float, high: float):
    """PPO's pessimistic surrogate per token and where its clipped branch removed the gradient."""
    unclipped = -t.adv * t.ratio
    clipped = -t.adv * t.ratio.clamp(1.0 - low, 1.0 + high)
    per_token = torch.maximum(unclipped, clipped) * t.is_weight
    with torch.no_grad():
        r = t.ratio.detach()
        hit_high = (t.adv > 0) & (r > 1.0 + high)
        hit_low = (t.adv < 0) & (r < 1.0 - low)
    return per_token, hit_high.to(t.mask.dtype), hit_low.to(t.mask.dtype)


def _metrics(batch, logp_new, t: _Terms, policy, total, kl_value, entropy, hit_high, hit_low):
    m = t.mask
    with torch.no_grad():
        r = t.ratio.detach()
        d = ((logp_new.detach() - batch.behaviour_logprobs) * m).clamp(-_MAX_LOG_RATIO, _MAX_LOG_RATIO)
        behaviour_k3 = torch.exp(d) - d - 1.0  # k3 of KL(behaviour || current), tokens ~ behaviour
        out = {
            "loss/total": float(total.detach()),
            "loss/policy": float(policy.detach()),
            "loss/kl": kl_value,
            "loss/clip_frac": _masked_mean(hit_high + hit_low, m),
            "loss/clip_frac_high": _masked_mean(hit_high, m),
            "loss/clip_frac_low": _masked_mean(hit_low, m),
            "loss/ratio_mean": _masked_mean(r, m),
            "loss/ratio_max": float((r * m).max()) if m.numel() else 0.0,
            "loss/tis_weight_mean": _masked_mean(t.is_weight, m),
            "loss/behaviour_kl": _masked_mean(behaviour_k3, m),
            "loss/advantage_mean": _masked_mean(t.adv, m),
            "loss/action_tokens": float(m.sum()),
            **t.mismatch,
        }
        if entropy is not None:
            out["loss/entropy"] = _masked_mean(entropy.detach(), m)
    return out


def _finish(batch, logp_new, cfg, t, per_token, aggregate, entropy, hit_high, hit_low):
    policy = aggregate(per_token)
    total, kl_value = policy, 0.0
    if t.kl is not None:
        kl_value = _masked_mean(t.kl.detach(), t.mask)
        if cfg.kl_coef > 0:
            total = policy + cfg.kl_coef * aggregate(t.kl)
    metrics = _metrics(batch, logp_new, t, policy, total, kl_value, entropy, hit_high, hit_low)
    return total, metrics


# registered losses ------------------------------------------------------------------------
@LOSSES.register("grpo")
def grpo_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
              entropy: torch.Tensor | None = None):
    """Clipped surrogate, symmetric band [1 - clip_low, 1 + clip_low]; mean over samples of token means."""
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    per_token, hh, hl = _clipped_surrogate(t, cfg.clip_low, cfg.clip_low)
    agg = lambda x: seq_mean_token_mean(x, t.mask, batch)  # noqa: E731
    return _finish(batch, logprobs_new, cfg, t, per_token, agg, entropy, hh, hl)


@LOSSES.register("dr_grpo")
def dr_grpo_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
                 entropy: torch.Tensor | None = None):
    """Clipped surrogate (symmetric clip_low band); token sum / (samples * norm_length)."""
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    per_token, hh, hl = _clipped_surrogate(t, cfg.clip_low, cfg.clip_low)
    agg = lambda x: token_sum_over_constant(x, t.mask, batch, cfg.norm_length)  # noqa: E731
    return _finish(batch, logprobs_new, cfg, t, per_token, agg, entropy, hh, hl)


@LOSSES.register("dapo")
def dapo_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
              entropy: torch.Tensor | None = None):
    """Clip-higher surrogate, band [1 - clip_low, 1 + clip_high]; token mean over the global batch."""
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    per_token, hh, hl = _clipped_surrogate(t, cfg.clip_low, cfg.clip_high)
    agg = lambda x: token_mean(x, t.mask, batch)  # noqa: E731
    return _finish(batch, logprobs_new, cfg, t, per_token, agg, entropy, hh, hl)


def reinforce_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
                   entropy: torch.Tensor | None = None):
    """Policy gradient -A * rho, unclipped, with rho truncated at tis_cap; token mean.

    The truncation is straight-through: value ``-A * min(rho, cap)``, gradient
    ``-A * min(rho, cap) * grad(logp_new)`` — a too-large ratio is bounded, never zeroed.
    """
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    ratio = t.ratio
    zeros = torch.zeros_like(t.mask)
    hit_high = zeros
    if cfg.tis_cap is not None:
        r = ratio.detach()
        ratio = ratio * (r.clamp(max=cfg.tis_cap) / r)
        hit_high = (r > cfg.tis_cap).to(t.mask.dtype)
    per_token = -t.adv * ratio * t.is_weight
    agg = lambda x: token_mean(x, t.mask, batch)  # noqa: E731
    return _finish(batch, logprobs_new, cfg, t, per_token, agg, entropy, hit_high, zeros)


LOSSES.add("reinforce", reinforce_loss)
LOSSES.add("rloo", reinforce_loss)


@LOSSES.register("gspo")
def gspo_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
              entropy: torch.Tensor | None = None):
    """GSPO: one ratio per sequence, ``s = exp(mean_t log rho_t)``, clipped to
    ``[1 - clip_low, 1 + clip_high]``; mean over samples of ``-min(s A, clip(s) A)``.

    Written per token as ``s_t = sg(s) * rho_t / sg(rho_t)`` (value ``s``, gradient
    ``s * grad logp_t``), so that a sample's token mean has exactly the gradient of the
    sequence objective and the correction weights still apply per token. A sequence whose
    clip is active contributes no gradient at all.
    """
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    seq = sequence_log_ratio(t.log_ratio, t.mask, batch.sample_ids).unsqueeze(1)
    # The clip sees the sequence ratio in every token; the metrics keep the token ratios.
    per_token, hh, hl = _clipped_surrogate(
        replace(t, ratio=torch.exp(seq.detach() + t.log_ratio - t.log_ratio.detach())),
        cfg.clip_low, cfg.clip_high)
    return _finish(batch, logprobs_new, cfg, t, per_token,
                   lambda x: seq_mean_token_mean(x, t.mask, batch), entropy, hh, hl)


@LOSSES.register("cispo")
def cispo_loss(batch: PolicyBatch, logprobs_new: torch.Tensor, config: Any, *,
               entropy: torch.Tensor | None = None):
    """CISPO: ``-sg(clip(rho, 1 - clip_low, 1 + clip_high)) * A * logp_new``; token mean.

    The clipped weight is a constant, so every token keeps a gradient (``-w A grad logp``,
    never 0 as in PPO's clipped branch); clipping only bounds its size. The loss *value* is a
    weighted log-likelihood, not a surrogate of the ratio.
    """
    cfg = as_loss_config(config)
    t = _terms(batch, logprobs_new, cfg)
    r = t.ratio.detach()
    weight = r.clamp(1.0 - cfg.clip_low, 1.0 + cfg.clip_high)
    per_token = -t.adv * weight * logprobs_new * t.is_weight
    hit_high = (r > 1.0 + cfg.clip_high).to(t.mask.dtype)
    hit_low = (r < 1.0 - cfg.clip_low).to(t.mask.dtype)
    agg = lambda x: token_mean(x, t.mask, batch)  # noqa: E731
    return _finish(batch, logprobs_new, cfg, t, per_token, agg, entropy, hit_high, hit_low)


# algorithms = advantage estimator + loss: defined torch-free in .algorithms (the config
# check reads them before torch is imported); re-exported here for existing callers.
from .algorithms import ALGORITHMS, Algorithm, get_algorithm  # noqa: E402,F401
