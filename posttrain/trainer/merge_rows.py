"""Identical rows of a policy batch computed once: one row, its sample weight the sum (exact).

Why: a trained policy's samples of one prompt mostly agree (the 8 samples of an addition
prompt are often 2-3 distinct answers), and two identical rows — same tokens, same
behaviour logprobs, same advantage — have the same loss term and the same gradient. Every
loss aggregation in :mod:`posttrain.trainer.losses` sums ``sample_weight * row term`` over
rows and divides by the batch's token or sample count, so keeping one of ``k`` identical
rows with weight ``k`` times its own, and the original batch's counts as the normalisers
(``global_num_tokens``/``global_num_samples``, as micro-batches do), gives the same loss and
the same gradient at a fraction of the forward and backward.

Guarantees: rows merge only when every per-row and per-token tensor of the batch is equal
between them (bit for bit: ids, masks, positions, behaviour/old/reference logprobs,
advantages, group, policy version, images) and each is its trajectory's only row (a
multi-row trajectory's rows are normalised together, so they are never merged); the first
of each set of identical rows is kept, in order. A batch without duplicates is returned as
it is. Does not: merge rows that differ only in padding width (rows of one batch share it).
"""

from __future__ import annotations

import dataclasses

import torch

from posttrain.trainer.batch import PolicyBatch, select_rows


def merge_identical_rows(batch: PolicyBatch) -> PolicyBatch:
    """``batch`` with each set of identical single-row trajectories kept once, weighted."""
    n = batch.num_rows
    if n < 2:
        return batch
    rows_per_sample = torch.bincount(batch.sample_ids)
    single = (rows_per_sample[batch.sample_ids] == 1).tolist()
    columns = [getattr(batch, f.name) for f in dataclasses.fields(batch)
               if f.name != "sample_ids" and f.name != "sample_weights"
               and isinstance(getattr(batch, f.name), torch.Tensor)]
    # One byte string per row over every tensor field: equal keys are equal rows (float64
    # holds every id, mask and float32 value exactly).
    table = torch.cat([c.reshape(n, -1).to(torch.float64) for c in columns], 1).numpy()
    keys = [row.tobytes() for row in table]
    images = batch.images
    first: dict[tuple, int] = {}
    keep, weights = [], batch.sample_weights.clone()
    for r in range(n):
        key = (keys[r], images[r] if images is not None else None)
        if not single[r] or key not in first:
            if single[r]:
                first[key] = r
            keep.append(r)
            continue
        weights[first[key]] += weights[r]
    if len(keep) == n:
        return batch
    tokens = batch.global_num_tokens
    samples = batch.global_num_samples
    merged = select_rows(batch.replace(sample_weights=weights), torch.tensor(keep))
    return merged.replace(
        global_num_tokens=float(batch.action_mask.sum()) if tokens is None else tokens,
        global_num_samples=float(batch.num_samples) if samples is None else samples)
