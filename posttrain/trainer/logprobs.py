"""Per-token logprobs (and entropy) of a causal LM on a padded batch.

Convention (shared with :mod:`posttrain.trainer.batch` and the inference backends): the
value at ``[b, t]`` is ``log softmax(logits[b, t-1] / temperature)[input_ids[b, t]]`` — the
logprob of token ``t`` under the distribution the sampler drew it from, temperature
included. Column 0 and padded positions are 0. Entropy at ``[b, t]`` is the entropy of that
same distribution (the one token ``t`` was drawn from).

Memory: the model's logits ``[B, L, V]`` are unavoidable. Temperature scaling, the upcast
and the log-sum-exp run over row chunks of at most ``chunk_elems`` logits, so temporaries
stay chunk-sized. At temperature 1 with float32 logits nothing ``[B, L, V]``-sized is kept
for the backward pass beyond the logits themselves; with temperature != 1 (or bf16 logits)
autograd keeps the scaled float32 chunks, one extra copy in total — the price of exact
gradients without a custom kernel.

Works on any batch object with ``input_ids``, ``attention_mask`` and ``position_ids``
(a :class:`PolicyBatch`, an SFT batch) and any HF-style causal LM returning ``.logits``.
Does not: shift for left padding (batches are right-padded), or apply top-p (a top-p
sampler's logprobs are of the truncated distribution; compare them at top_p = 1).
"""

from __future__ import annotations

from typing import Any

import torch

DEFAULT_CHUNK_ELEMS = 1 << 24  # 16M logits (64 MiB in float32) per chunk


def forward_logits(model: Any, batch: Any) -> torch.Tensor:
    """The model's next-token logits ``[B, L, V]`` for a right-padded batch.

    A batch with ``images`` (rows of a vision-language prompt) gets the pixel inputs the
    sampler saw (:func:`posttrain.inference.vlm.vision_forward_kwargs`) and no explicit
    positions: a VLM derives them itself (multimodal RoPE), right padding keeps them equal.
    A vision-language model's image placeholder tokens are suppressed, as its sampler does."""
    from posttrain.models.loading import processor_of

    images = getattr(batch, "images", None)
    if processor_of(model) is None and not (images and any(images)):
        return model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                     position_ids=batch.position_ids, use_cache=False).logits
    from posttrain.inference.vlm import placeholder_ids, suppress_placeholders, vision_forward_kwargs

    if images is not None and any(images):
        out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                    use_cache=False, **vision_forward_kwargs(model, images))
    else:
        out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                    position_ids=batch.position_ids, use_cache=False)
    # the sampler never draws a placeholder token: the same distribution here
    return suppress_placeholders(out.logits, placeholder_ids(model))


def logprobs_from_logits(logits: torch.Tensor, input_ids: torch.Tensor,
                         attention_mask: torch.Tensor | None = None, temperature: float = 1.0,
                         *, with_entropy: bool = False,
                         chunk_elems: int = DEFAULT_CHUNK_ELEMS):
    """``(logprobs [B, L], entropy [B, L] or None)`` from logits, aligned as in the docstring.

    Gradients flow into the logprobs; the entropy is computed without gradient (it is a
    metric; an entropy bonus would need the graph and is deliberately not offered here).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    B, L, V = logits.shape
    targets = input_ids[:, 1:]
    rows = max(1, chunk_elems // max(1, (L - 1) * V))
    lp_chunks, ent_chunks = [], []
    for start in range(0, B, rows):
        x = logits[start:start + rows, :-1].float()
        if temperature != 1.0:
            x = x / temperature
        lse = torch.logsumexp(x, dim=-1)
        picked = x.gather(-1, targets[start:start + rows].unsqueeze(-1)).squeeze(-1)
        lp_chunks.append(picked - lse)
        if with_entropy:
            with torch.no_grad():
                p = torch.exp(x.detach() - lse.detach().unsqueeze(-1))
                ent_chunks.append(lse.detach() - (p * x.detach()).sum(-1))
    if L > 1 and B > 0:
        zeros = logits.new_zeros((B, 1), dtype=torch.float32)
        logprobs = torch.cat([zeros, torch.cat(lp_chunks, dim=0)], dim=1)
        entropy = torch.cat([zeros, torch.cat(ent_chunks, dim=0)], dim=1) if with_entropy else None
    else:  # nothing to predict: no token has a predecessor
        logprobs = logits.new_zeros((B, L), dtype=torch.float32)
        entropy = logits.new_zeros((B, L), dtype=torch.float32) if with_entropy else None
    if attention_mask is not None:
        real = attention_mask.bool()
        logprobs = torch.where(real, logprobs, torch.zeros_like(logprobs))
        if entropy is not None:
            entropy = torch.where(real, entropy, torch.zeros_like(entropy))
    return logprobs, entropy


def token_logprobs(model: Any, batch: Any, temperature: float = 1.0) -> torch.Tensor:
    """Trainer logprobs ``[B, L]`` of every token of ``batch`` (gradients flow)."""
    logits = forward_logits(model, batch)
    lp, _ = logprobs_from_logits(logits, batch.input_ids, batch.attention_mask, temperature)
    return lp


def token_logprobs_and_entropy(model: Any, batch: Any, temperature: float = 1.0):
    """``(logprobs [B, L], entropy [B, L])`` from one forward; entropy carries no gradient."""
    logits = forward_logits(model, batch)
    return logprobs_from_logits(logits, batch.input_ids, batch.attention_mask, temperature,
                                with_entropy=True)


@torch.no_grad()
def frozen_logprobs(model: Any, batch: Any, temperature: float = 1.0) -> torch.Tensor:
    """Logprobs without gradient: for a reference model or the pre-step ("old") policy."""
    return token_logprobs(model, batch, temperature).detach()
