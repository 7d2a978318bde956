"""Sliding-window attention masks by token position, for a cache that keeps every key.

Why: a transformers forward builds a sliding-window mask by *cache index* (a key is seen when
``k_idx > q_idx - window``) and its sliding cache layers drop keys older than the window. Both
are right for one unpadded sequence, and both go wrong when the keys of a row are not one run
of that row's tokens: a prefix computed once, then left-padded suffixes (pads in the middle
count towards the window), or a shared prefix's KV sliced from a cache that already dropped
part of it. The sampler and the trainer then score different distributions.

What it does: :func:`layer_windows` reads, per decoder layer, its window from the config
(``layer_types`` where the architecture has them — Qwen2/3, Gemma 2/3 — else
``sliding_window`` on every layer — Mistral, Phi-3); :func:`window_masks` turns a boolean
"may attend" tensor (causal and padding, decided by the caller) into the additive 4-D masks
the model takes, adding each window as ``q_pos - k_pos < window`` on *positions*. With a
cache that keeps every key (a plain ``DynamicCache()``), the mask then describes exactly
the keys the cache holds, whatever the padding or prefix sharing.

Guarantees: the same rule as transformers' own sliding mask on an unpadded sequence (a query
sees itself and the ``window - 1`` tokens before it), so the HF backend, the trainer's plain
forward and its packed forward agree (tests/inference/test_architectures.py); an entry a
caller allowed for a query to itself is never removed (no fully masked row). Works on
transformers 5.19 and 5.23 (a 4-D mask, or a dict of them by layer type, is used as given).

Does not: bound memory by the window (the cache keeps every key: exactness first; the
backend serves short RL completions), or handle chunked or other attention kinds
(:func:`layer_windows` returns None for them and callers keep the transformers mask).
"""

from __future__ import annotations

from typing import Any

import torch

FULL, SLIDING = "full_attention", "sliding_attention"


def layer_windows(config: Any) -> tuple[int | None, ...] | None:
    """Each decoder layer's window (None: full attention); None for unknown layer kinds."""
    cfg = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    n = int(getattr(cfg, "num_hidden_layers", 0))
    window = getattr(cfg, "sliding_window", None)
    types = getattr(cfg, "layer_types", None)
    if types is None:
        return (window,) * n
    if any(t not in (FULL, SLIDING) for t in types):
        return None
    if SLIDING in types and window is None:
        return None
    return tuple(int(window) if t == SLIDING else None for t in types)


def has_window(windows: tuple[int | None, ...] | None) -> bool:
    return windows is not None and any(w is not None for w in windows)


def window_masks(allowed: torch.Tensor, query_pos: torch.Tensor, key_pos: torch.Tensor,
                 windows: tuple[int | None, ...] | None, dtype: torch.dtype):
    """Additive masks ``[B, 1, T, K]`` (0 or the dtype's min) for ``model(attention_mask=...)``.

    ``allowed [B, T, K]``: what the caller lets each query see (causal, padding, itself);
    ``query_pos [B, T]`` and ``key_pos [B, K]``: the tokens' position ids; ``windows`` as
    :func:`layer_windows` gives them (empty or None: full attention). One tensor when
    every layer has the same window, else ``{"full_attention": ..., "sliding_attention": ...}``
    (the architectures with mixed layers take a dict keyed by layer type)."""
    lag = query_pos[:, :, None] - key_pos[:, None, :]
    by_window = {}
    for w in dict.fromkeys(windows or (None,)):
        keep = allowed if w is None else allowed & (lag < w)  # a query's own entry: lag 0
        mask = torch.zeros(keep.shape, dtype=dtype, device=keep.device)
        by_window[w] = mask.masked_fill(~keep, torch.finfo(dtype).min).unsqueeze(1)
    if len(by_window) == 1:
        return next(iter(by_window.values()))
    sliding = [w for w in by_window if w is not None]
    if len(sliding) != 1:
        raise ValueError(f"several sliding windows {sliding}: one mask per layer type cannot hold them")
    return {FULL: by_window[None], SLIDING: by_window[sliding[0]]}
