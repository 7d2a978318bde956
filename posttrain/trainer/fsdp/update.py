"""The sharded policy update: each rank trains on its slice of a PolicyBatch, in micro-batches.

What it is: :func:`sharded_policy_update` is :func:`posttrain.trainer.reference_loop.policy_update`
for ``N`` ranks and a token budget. Every rank holds the whole batch (rank 0 built it and
broadcast it, see :mod:`.run`); :func:`plan_micro_batches` cuts it the same way on every rank,
without a collective: whole trajectories (a sample's rows stay together) are dealt to ranks in
contiguous chunks balanced by tokens, then each rank's share is packed into micro-batches of
at most ``micro_batch_tokens`` real tokens (a single trajectory over the budget is a
micro-batch of its own). Every micro-batch carries the *global* batch's action-token and
sample counts (``global_num_tokens``/``global_num_samples``), so each registered aggregation
— sample mean of token means (grpo, gspo), token sum over samples x constant (dr_grpo),
token mean over the global batch (dapo, reinforce, cispo) — makes a micro-batch's loss its
exact share of the full-batch loss. FSDP averages the ranks' gradients (:mod:`.dist`), so
each rank back-propagates its share times the world size, and the average is the full-batch
gradient (exact scaling for a power-of-two world size). Averaging per-rank token means instead would be
wrong whenever ranks hold different token counts; the parity tests catch that.

Ranks with fewer micro-batches run zero-weighted copies of one row so that every rank makes
the same number of forward/backward passes (FSDP's collectives must match).

Guarantees: with one process and no budget it performs the reference loop's update (same
losses, same weights, to float rounding); on ``N`` ranks, or with micro-batches, the same
within float tolerance (sums in a different order); ``loss/total`` and ``loss/policy`` are
the global values (summed over ranks and micro-batches), ``loss/grad_norm`` is the global
norm, other ``loss/*`` and ``mismatch/*`` metrics are action-token-weighted means over all
micro-batches (``loss/ratio_max``: the max).

Not covered: pipelined micro-batches (they run one after the other), a KL reference that is
itself sharded differently from the policy (the reference runs the same micro-batches).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from posttrain.trainer.batch import PolicyBatch, select_rows, without_zero_advantage_rows
from posttrain.trainer.losses import LOSSES, LossConfig
from posttrain.trainer.shared_prefix import frozen_policy_logprobs, policy_logprobs

from .dist import current

SUMMED = ("loss/total", "loss/policy", "loss/action_tokens")
MAXED = ("loss/ratio_max",)


def _chunks(weights: list[float], parts: int) -> list[list[int]]:
    """Contiguous index chunks of ``weights`` balanced by their sums (some may be empty)."""
    total = sum(weights) or 1.0
    out: list[list[int]] = [[] for _ in range(parts)]
    before = 0.0
    for i, w in enumerate(weights):
        out[min(parts - 1, int(before * parts / total))].append(i)
        before += w
    return out


def _pack(samples: list[int], tokens: dict[int, float], budget: int) -> list[list[int]]:
    """Samples in order into micro-batches of at most ``budget`` tokens (0: one batch)."""
    if not budget:
        return [samples] if samples else []
    out: list[list[int]] = []
    used = 0.0
    for s in samples:
        if out and used + tokens[s] <= budget:
            out[-1].append(s)
            used += tokens[s]
        else:
            out.append([s])
            used = tokens[s]
    return out


def plan_micro_batches(batch: PolicyBatch, world_size: int,
                       micro_batch_tokens: int = 0) -> list[list[PolicyBatch]]:
    """``plan[rank][i]``: rank ``rank``'s ``i``-th micro-batch, normalised as the whole batch.

    Deterministic in the batch alone, so every rank computes the same plan. Lists may differ
    in length; :func:`sharded_policy_update` pads the short ones.
    """
    sample_ids = batch.sample_ids.tolist()
    row_tokens = batch.attention_mask.sum(1).tolist()
    order: list[int] = []
    tokens: dict[int, float] = {}
    for s, n in zip(sample_ids, row_tokens):
        if s not in tokens:
            order.append(s)
            tokens[s] = 0.0
        tokens[s] += float(n)
    g_tokens = batch.global_num_tokens or float(batch.action_mask.sum())
    g_samples = batch.global_num_samples or float(len(order))
    per_rank = _chunks([tokens[s] for s in order], world_size)
    plan = []
    for idx in per_rank:
        micro = []
        for group in _pack([order[i] for i in idx], tokens, micro_batch_tokens):
            rows = torch.isin(batch.sample_ids, torch.tensor(group)).nonzero(as_tuple=True)[0]
            micro.append(select_rows(batch, rows).replace(global_num_tokens=float(g_tokens),
                                                          global_num_samples=float(g_samples)))
        plan.append(micro)
    return plan


def to_device(batch: PolicyBatch, device: torch.device) -> PolicyBatch:
    """The batch's tensors on ``device`` (the plan is cut on the CPU, the model may be on CUDA)."""
    if device.type == "cpu":
        return batch
    return batch.replace(**{f.name: v.to(device) for f in dataclasses.fields(batch)
                            if isinstance(v := getattr(batch, f.name), torch.Tensor)})


def _padded(plan: list[PolicyBatch], n: int, filler: PolicyBatch) -> list[tuple[PolicyBatch, float]]:
    """``(micro-batch, weight)``: weight 0 on the fillers that keep collectives in step."""
    device = current().device
    return ([(to_device(m, device), 1.0) for m in plan]
            + [(to_device(filler, device), 0.0)] * (n - len(plan)))


def _with_frozen(micro, model, ref_model, rl, need_old: bool):
    """Each micro-batch with the reference's and the pre-step policy's logprobs attached."""
    T, share = rl.temperature, rl.shared_prefix
    out = []
    for m, w in micro:
        if ref_model is not None and rl.kl_coef > 0:
            m = m.replace(ref_logprobs=frozen_policy_logprobs(ref_model, m, T, share=share))
        if need_old:
            m = m.replace(old_logprobs=frozen_policy_logprobs(model, m, T, share=share))
        out.append((m, w))
    return out


def reduce_metrics(parts: list[tuple[dict[str, float], float, float]]) -> dict[str, float]:
    """Combine ``(metrics, action tokens, weight)`` of every micro-batch of every rank.

    Fillers (weight 0) are passed too: they give every rank the same keys, so the
    all-reduced vectors line up (see the module docstring for how each key combines).
    """
    import torch.distributed as dist

    keys = sorted({k for m, _, _ in parts for k in m})
    sums = torch.zeros(len(keys) + 1, dtype=torch.float64)
    maxes = torch.full((len(keys),), float("-inf"), dtype=torch.float64)
    for m, tokens, weight in parts:
        sums[-1] += tokens * weight
        for i, k in enumerate(keys):
            v = float(m.get(k, 0.0))
            sums[i] += v * weight if k in SUMMED else v * tokens * weight
            if weight:
                maxes[i] = max(float(maxes[i]), v)
    info = current()
    if info.backend is not None:  # on the rank's device: NCCL reduces CUDA tensors only
        sums, maxes = sums.to(info.device), maxes.to(info.device)
        dist.all_reduce(sums)
        dist.all_reduce(maxes, op=dist.ReduceOp.MAX)
        sums, maxes = sums.cpu(), maxes.cpu()
    total = max(float(sums[-1]), 1.0)
    return {k: float(maxes[i]) if k in MAXED else float(sums[i]) if k in SUMMED
            else float(sums[i]) / total for i, k in enumerate(keys)}


def _epoch(model, optimizer, micro, loss_fn, loss_cfg, rl) -> dict[str, float]:
    """One optimizer step over every micro-batch of this rank: accumulate, clip, step."""
    world = current().world_size  # undoes FSDP's mean over ranks: their gradients add up
    optimizer.zero_grad(set_to_none=True)
    parts = []
    for m, weight in micro:
        logprobs, entropy = policy_logprobs(model, m, rl.temperature, share=rl.shared_prefix)
        loss, metrics = loss_fn(m, logprobs, loss_cfg, entropy=entropy)
        (loss * (weight * world)).backward()  # a filler's 0 keeps collectives matched
        parts.append((metrics, float(m.action_mask.sum()), weight))
    out = reduce_metrics(parts)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), rl.grad_clip)
    out["loss/grad_norm"] = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
    optimizer.step()
    return out


def sharded_policy_update(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                          batch: PolicyBatch, rl: Any, loss_name: str, *,
                          micro_batch_tokens: int = 0, ref_model: torch.nn.Module | None = None,
                          lr_scheduler: Any = None, policy_version: int = 0) -> dict[str, float]:
    """``rl.ppo_epochs`` optimizer steps on this rank's share of ``batch`` (same on all ranks).

    Every rank passes the same ``batch``; the result is the same metrics dict on every rank.
    """
    info = current()
    loss_fn, loss_cfg = LOSSES.get(loss_name), LossConfig.from_rl(rl)
    rows = batch.num_rows
    if ref_model is None or rl.kl_coef == 0:  # without a KL term, zero-advantage rows are inert
        batch = without_zero_advantage_rows(batch)
    plan = plan_micro_batches(batch, info.world_size, micro_batch_tokens)
    n_micro = max(len(p) for p in plan)
    filler = select_rows(batch, torch.tensor([0]))
    micro = _padded(plan[info.rank], n_micro, filler)
    stale = batch.num_rows and int(batch.policy_versions.min()) < policy_version
    micro = _with_frozen(micro, model, ref_model, rl, rl.ppo_epochs > 1 or bool(stale))
    model.train()
    lr = float(optimizer.param_groups[0]["lr"])
    metrics: dict[str, float] = {}
    for _ in range(rl.ppo_epochs):
        metrics = _epoch(model, optimizer, micro, loss_fn, loss_cfg, rl)
    if lr_scheduler is not None:
        lr_scheduler.step()
    metrics.update({"batch/inert_rows_skipped": float(rows - batch.num_rows), "loss/lr": lr,
                    "batch/micro_batches": float(n_micro)})
    return metrics
