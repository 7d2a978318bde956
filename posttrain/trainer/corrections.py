"""Behaviour–trainer mismatch: the registered corrections and the per-step mismatch metrics.

The tokens of an RL batch were sampled by the inference engine (logprobs ``logp_beh``) and
are scored by the trainer (``logp_old``: its logprobs at the start of the step, with the
weights the update starts from). Even with identical weights the two differ — other kernels,
another precision, a sampler that is not the trainer's forward — and with a stale sample
they differ by the policy lag as well. Per token ``d = logp_old - logp_beh`` is the log
importance ratio ``log(pi_trainer / pi_behaviour)``.

A correction turns ``d`` into a detached per-token weight ``w`` that multiplies each
token's loss term (``losses.py``); it never changes the trust-region ratio itself. Registered
in :data:`CORRECTIONS` (ids listed torch-free in :data:`~posttrain.trainer.algorithms.CORRECTION_IDS`,
which the config check reads):

- ``none`` — ``w = 1``;
- ``tis`` — token-level truncated IS, ``w = min(exp(d), tis_cap)`` (the default, and the
  correction posttrain always had: it acts only when the caller computed ``old_logprobs``,
  i.e. on stale or multi-epoch batches; otherwise the PPO ratio is taken against the
  behaviour policy and its clip is the guard);
- ``seq_mis`` — sequence-level masked IS: a trajectory whose geometric-mean ratio
  ``exp(mean_t d)`` leaves ``[correction_low, correction_high]`` gets ``w = 0`` on every
  token (it contributes no gradient), the others ``w = 1``;
- ``icepop`` — token masking outside a band: ``w = exp(d)`` where ``exp(d)`` is in
  ``[correction_low, correction_high]``, else 0.

``seq_mis`` and ``icepop`` are *decoupled*: the loss's ratio is taken against the trainer's
start-of-step logprobs, which on a fresh single-epoch batch are the detached logprobs of the
step's own forward (the same weights, so no extra forward pass), and the correction alone
handles the engine. ``none`` and ``tis`` keep the ratio against ``old_logprobs`` when given,
else against the behaviour logprobs.

:func:`mismatch_metrics` is logged by every loss on every step (``mismatch/*`` in
docs/metrics.md), whatever correction is selected. Sequences are trajectories: the rows of
one multi-turn episode are pooled (``batch.sample_ids``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from posttrain.core.registry import Registry

# exp() of a log-ratio beyond this is numerically meaningless (as in losses.py).
MAX_LOG_RATIO = 20.0

WeightFn = Callable[[torch.Tensor, torch.Tensor, Any, Any], torch.Tensor]


@dataclass(frozen=True)
class Correction:
    """A registered correction: ``weight(d, mask, batch, cfg) -> w [B, L]`` (detached).

    ``decoupled``: the loss takes its trust-region ratio against the trainer's own
    start-of-step logprobs (see the module docstring)."""

    name: str
    weight: WeightFn
    decoupled: bool


CORRECTIONS: Registry[Correction] = Registry("correction", entry_point_group="posttrain.corrections",
                                             versioned=False)


def _register(name: str, decoupled: bool):
    def deco(fn: WeightFn) -> WeightFn:
        CORRECTIONS.add(name, Correction(name, fn, decoupled))
        return fn
    return deco


def sequence_log_ratio(d: torch.Tensor, mask: torch.Tensor, sample_ids: torch.Tensor) -> torch.Tensor:
    """Mean per-token log-ratio of each trajectory, broadcast back to its rows: ``[B]``.

    ``exp`` of it is the geometric-mean ratio of the sequence; rows of one trajectory pool
    their tokens (a multi-turn episode split into segments is still one sequence)."""
    if not d.shape[0]:
        return d.new_zeros(0)
    n = int(sample_ids.max()) + 1
    sums = d.new_zeros(n).index_add_(0, sample_ids, (d * mask).sum(1))
    counts = d.new_zeros(n).index_add_(0, sample_ids, mask.sum(1))
    return (sums / counts.clamp(min=1.0))[sample_ids]


def _in_band(x: torch.Tensor, cfg: Any) -> torch.Tensor:
    return (x >= cfg.correction_low) & (x <= cfg.correction_high)


@_register("none", decoupled=False)
def no_correction(d, mask, batch, cfg) -> torch.Tensor:
    return torch.ones_like(mask)


@_register("tis", decoupled=False)
def token_tis(d, mask, batch, cfg) -> torch.Tensor:
    """Ionides-style truncated IS per token; 1 where no start-of-step logprobs were computed."""
    if batch.old_logprobs is None or cfg.tis_cap is None:
        return torch.ones_like(mask)
    return torch.exp(d).clamp(max=cfg.tis_cap)


@_register("seq_mis", decoupled=True)
def sequence_masked_is(d, mask, batch, cfg) -> torch.Tensor:
    """0 on every token of a trajectory whose geometric-mean ratio is out of band, else 1."""
    geo = torch.exp(sequence_log_ratio(d, mask, batch.sample_ids))
    return _in_band(geo, cfg).to(mask.dtype).unsqueeze(1).expand_as(mask).contiguous()


@_register("icepop", decoupled=True)
def icepop_mask(d, mask, batch, cfg) -> torch.Tensor:
    """The token's own ratio inside the band, 0 outside it (both sides)."""
    k = torch.exp(d)
    return torch.where(_in_band(k, cfg), k, torch.zeros_like(k))


def get_correction(name: str) -> Correction:
    return CORRECTIONS.get(name)


def log_ratio(old: torch.Tensor, beh: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``d = (old - beh)`` on action tokens, 0 elsewhere, clamped where exp() is meaningless."""
    return ((old - beh) * mask).clamp(-MAX_LOG_RATIO, MAX_LOG_RATIO)


@torch.no_grad()
def mismatch_metrics(d: torch.Tensor, mask: torch.Tensor, weight: torch.Tensor, batch: Any,
                     cfg: Any) -> dict[str, float]:
    """The behaviour–trainer mismatch of one batch (keys defined in docs/metrics.md).

    ``d``: trainer-minus-behaviour logprobs on action tokens; ``weight``: the correction's."""
    # Band tests in the dtype the corrections use, so that the counts agree with their masks.
    out_of_band = (~_in_band(torch.exp(d), cfg)).double()
    masked = (weight == 0).double()
    # float64 and expm1: at an in-sync engine d is ~1e-6 and exp(d) - 1 - d cancels in float32.
    d64, m64 = d.double(), mask.double()
    n = m64.sum().clamp(min=1.0)
    tokens = mask.bool()
    mean = lambda x: float((x * m64).sum() / n)  # noqa: E731
    out = {
        # KL(behaviour || trainer) from tokens drawn by the behaviour policy: k3 >= 0, k1 raw.
        "mismatch/kl_k3": mean(torch.expm1(d64) - d64),
        "mismatch/kl_k1": mean(-d64),
        "mismatch/abs_logp_mean": mean(d64.abs()),
        "mismatch/abs_logp_max": float(d64.abs()[tokens].max()) if bool(tokens.any()) else 0.0,
        "mismatch/out_of_band_frac": mean(out_of_band),
        "mismatch/masked_frac": mean(masked),
    }
    rows = mask.sum(1) > 0
    if bool(rows.any()):
        seq = sequence_log_ratio(d, mask, batch.sample_ids)[rows]
        # One value per trajectory (rows of one episode carry the same sequence ratio).
        _, first = torch.unique(batch.sample_ids[rows], return_inverse=True)
        geo = torch.exp(seq.new_zeros(int(first.max()) + 1).scatter_(0, first, seq))
        out["mismatch/seq_ratio_min"] = float(geo.min())
        out["mismatch/seq_ratio_max"] = float(geo.max())
        out["mismatch/seq_ratio_std"] = float(geo.std(unbiased=False))
        out["mismatch/seq_out_of_band_frac"] = float((~_in_band(geo, cfg)).float().mean())
    return out
