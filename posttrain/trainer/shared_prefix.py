"""Policy logprobs with each distinct prompt computed once: the trainer's side of prompt sharing.

Why: a GRPO batch holds G samples of every prompt. The plain forward (``logprobs.py``)
runs every row's prompt again — on the quickstart's short completions most of the update's
compute goes to prompt tokens that are the same G times over. Here each distinct *prefix*
(a row's tokens before its first action token) runs once, its KV cache is gathered to the
rows that share it (an ``index_select``, so the gradient of every sharing row flows back
into one prefix computation), and only the rows' suffixes run per row — the training twin of
the inference backend's one-prefill-per-group.

How: prefixes are left-padded and run with ``use_cache=True`` (as the sampler prefills);
suffixes (first action token to the row's end, later observation tokens of a multi-turn row
included) are right-padded and run against the gathered cache with position ids continuing
each prefix. The logits predicting a row's first action token are the prefix's last logits.
The result is scattered back into the batch's ``[B, L]`` layout, so every loss sees exactly
what :func:`~posttrain.trainer.logprobs.token_logprobs_and_entropy` would give.

Guarantees: logprobs and entropies equal the full forward's to float32 rounding, and so do
the gradients (tested against the full forward on single- and multi-turn batches); positions
off the action tokens' span are 0, as there. :func:`plan_shared_prefix` only chooses this
path when it computes fewer padded token positions than the full forward (``max_cost``).

Does not: work with gradient checkpointing (HF turns the cache off then; the caller falls
back to the full forward), or share prefixes that are only partly common (a prefix is shared
by rows whose whole prefix is identical — the G samples of a single-turn group).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from .logprobs import logprobs_from_logits, token_logprobs_and_entropy


@dataclass(frozen=True)
class PrefixPlan:
    """Which distinct prefix each row uses, and the padded shapes of both forwards."""

    prefixes: tuple[tuple[int, ...], ...]  # distinct prefixes, in first-seen row order
    row_prefix: torch.Tensor  # [B] long, index into ``prefixes``
    starts: torch.Tensor  # [B] long, column of each row's first action token (= prefix length)
    lengths: torch.Tensor  # [B] long, real tokens per row
    cost: int  # padded positions: U * P + B * S
    full_cost: int  # padded positions of the plain forward: B * L


def plan_shared_prefix(batch: Any, max_cost: float = 0.8) -> PrefixPlan | None:
    """The plan, or None when sharing would not cut the padded positions below ``max_cost``."""
    B, L = batch.input_ids.shape
    if B < 2 or L < 2:
        return None
    action = batch.action_mask.bool()
    if not bool(action.any(1).all()):  # a row without action tokens has nothing to share
        return None
    starts = action.to(torch.int8).argmax(1)
    lengths = batch.attention_mask.sum(1)
    ids = batch.input_ids.tolist()
    slot: dict[tuple[int, ...], int] = {}
    row_prefix = []
    for b, s in enumerate(starts.tolist()):
        row_prefix.append(slot.setdefault(tuple(ids[b][:s]), len(slot)))
    prefixes = tuple(slot)
    P = max(len(p) for p in prefixes)
    S = int((lengths - starts).max())
    cost, full = len(prefixes) * P + B * S, B * L
    if cost > max_cost * full:
        return None
    return PrefixPlan(prefixes, torch.tensor(row_prefix, dtype=torch.long), starts, lengths,
                      cost, full)


def _run_prefixes(model: Any, prefixes: tuple[tuple[int, ...], ...], device):
    """Left-padded forward of the distinct prefixes: (cache, last logits [U, V], mask [U, P])."""
    U, P = len(prefixes), max(len(p) for p in prefixes)
    ids = torch.zeros((U, P), dtype=torch.long)
    mask = torch.zeros((U, P), dtype=torch.long)
    for u, p in enumerate(prefixes):
        ids[u, P - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[u, P - len(p):] = 1
    pos = (mask.cumsum(1) - 1).clamp(min=0)
    ids, mask, pos = ids.to(device), mask.to(device), pos.to(device)
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                logits_to_keep=1)
    return out.past_key_values, out.logits[:, -1], mask


def _suffixes(batch: Any, plan: PrefixPlan):
    """Right-padded suffix ids [B, S], their mask, and their columns in the batch."""
    S = int((plan.lengths - plan.starts).max())
    offsets = torch.arange(S, device=batch.input_ids.device)
    cols = plan.starts.unsqueeze(1) + offsets  # [B, S]
    real = offsets < (plan.lengths - plan.starts).unsqueeze(1)
    L = batch.input_ids.shape[1]
    ids = batch.input_ids.gather(1, cols.clamp(max=L - 1)) * real
    return ids, real.long(), cols


def shared_prefix_logprobs(model: Any, batch: Any, plan: PrefixPlan, temperature: float = 1.0,
                           *, with_entropy: bool = False):
    """``(logprobs [B, L], entropy [B, L] or None)``: see the module docstring."""
    device = batch.input_ids.device
    cache, last_U, prefix_mask_U = _run_prefixes(model, plan.prefixes, device)
    index = plan.row_prefix.to(device)
    cache.batch_select_indices(index)  # differentiable gather: gradients sum into each prefix
    suffix_ids, suffix_mask, cols = _suffixes(batch, plan)
    mask = torch.cat([prefix_mask_U[index], suffix_mask], 1)
    pos = plan.starts.unsqueeze(1).to(device) + torch.arange(suffix_ids.shape[1], device=device)
    out = model(input_ids=suffix_ids, attention_mask=mask, position_ids=pos,
                past_key_values=cache, use_cache=True)
    # Column j of [prefix's last logits, suffix logits] predicts suffix token j.
    logits = torch.cat([last_U[index].unsqueeze(1), out.logits], 1)
    targets = torch.cat([suffix_ids.new_zeros((suffix_ids.shape[0], 1)), suffix_ids], 1)
    lp, ent = logprobs_from_logits(logits, targets, None, temperature, with_entropy=with_entropy)
    return _scatter(lp[:, 1:], cols, suffix_mask, batch), (
        _scatter(ent[:, 1:], cols, suffix_mask, batch) if ent is not None else None)


def _scatter(values_BS: torch.Tensor, cols: torch.Tensor, real: torch.Tensor,
             batch: Any) -> torch.Tensor:
    """Suffix values back into the batch's [B, L] layout (padding lands past column L)."""
    B, L = batch.input_ids.shape
    S = values_BS.shape[1]
    out = values_BS.new_zeros((B, L + S))
    where = torch.where(real.bool(), cols, L + torch.arange(S, device=cols.device))
    out = out.scatter(1, where, values_BS * real)
    out = out[:, :L]
    return torch.where(batch.attention_mask.bool(), out, torch.zeros_like(out))


def policy_logprobs(model: Any, batch: Any, temperature: float = 1.0, *, share: bool = True,
                    with_entropy: bool = True):
    """The trainer's ``(logprobs, entropy)`` of a policy batch, prompts shared when it pays.

    Falls back to the plain forward when ``share`` is off, the model checkpoints gradients
    (no cache then), or :func:`plan_shared_prefix` finds too little to share.
    """
    plan = None
    if share and not _checkpointing(model):
        plan = plan_shared_prefix(batch)
    if plan is None:
        lp, ent = token_logprobs_and_entropy(model, batch, temperature)
        return lp, (ent if with_entropy else None)
    return shared_prefix_logprobs(model, batch, plan, temperature, with_entropy=with_entropy)


@torch.no_grad()
def frozen_policy_logprobs(model: Any, batch: Any, temperature: float = 1.0, *,
                           share: bool = True) -> torch.Tensor:
    """:func:`policy_logprobs` without gradient (the reference or the pre-step policy)."""
    return policy_logprobs(model, batch, temperature, share=share, with_entropy=False)[0].detach()


def _checkpointing(model: Any) -> bool:
    # transformers 5 renamed the flag; the old name warns on access.
    name = "is_activation_checkpointing"
    return bool(getattr(model, name if hasattr(type(model), name) else "is_gradient_checkpointing",
                        False))
