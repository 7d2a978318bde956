"""A lean forward of Llama-family decoders over the HF module's own weights (the sampler's fast path).

Why: in the decode loop of a small model (the built-in tiny one, or any model at small batch
on a CPU) the transformers forward spends about as long in Python — mask construction, the
cache object, module dispatch, output wrappers — as in arithmetic: measured here on the tiny
model, one decode step of 64 rows took 12.9 ms through ``model(...)`` and 8.6 ms through this
module, the same matrix products. :class:`FastDecoder` runs the same computation directly:
embedding, HF's own rotary module (so every rope scaling variant is exactly HF's), RMSNorm,
attention through ``scaled_dot_product_attention`` (grouped-query heads included), the gated
MLP, the final norm and the LM head of the last position only.

Guarantees:
- it reads the model's parameters in place (nothing is copied), so ``load_weights`` and
  optimizer steps on a shared module are seen at once;
- :meth:`FastDecoder.maybe` returns a decoder only for a supported architecture
  (``LlamaForCausalLM``, ``Qwen2ForCausalLM``, ``MistralForCausalLM``; SiLU MLP, no
  sliding window, no tensor-parallel split) *and* after checking that it reproduces the
  transformers forward's logits on a probe (a left-padded prefill and a decode step, to
  1e-4); anything else gets None and the caller keeps the transformers forward;
- :class:`KVCache` has what the HF backend uses of a transformers cache
  (``layers[i].keys/.values`` of shape ``[B, H_kv, T, D]``, ``batch_select_indices``), so
  prefix-cache entries are interchangeable.

Does not: train (no autograd concerns are handled: the backend calls it under
``inference_mode``), sliding-window or cross attention, or architectures outside the list.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)

SUPPORTED = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM")
PROBE_TOL = 1e-4


class LayerKV:
    """One layer's keys and values ``[B, H_kv, T, D]``: views of the first ``T`` positions of
    buffers with spare room, so a decode step writes its new position in place instead of
    copying the whole cache (growth by concatenation cost O(T) per step: at 28 rows it was
    80 % of a decode step's CPU time). Buffers grow by doubling when full."""

    def __init__(self, keys: torch.Tensor | None, values: torch.Tensor | None):
        self._k, self._v = keys, values
        self.n = 0 if keys is None else int(keys.shape[2])

    @property
    def keys(self) -> torch.Tensor | None:
        return None if self._k is None else self._k[:, :, :self.n]

    @property
    def values(self) -> torch.Tensor | None:
        return None if self._v is None else self._v[:, :, :self.n]

    def select(self, index: torch.Tensor) -> None:
        if self._k is not None:
            self._k, self._v = self._k[index], self._v[index]

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self._k is None or self.n == 0:
            self._k, self._v, self.n = k, v, int(k.shape[2])
            return k, v
        B, T, need = k.shape[0], k.shape[2], self.n + k.shape[2]
        # A shared prefix (expanded to the batch, or a prefix-cache entry) is never written
        # to: the first append copies it into buffers of this cache's own.
        if self._k.shape[0] != B or need > self._k.shape[2] or not self._owned:
            cap = max(need, 2 * self.n, 16)
            self._k, self._v = self._grown(self._k, B, cap), self._grown(self._v, B, cap)
            self._owned = True
        self._k[:, :, self.n:need] = k
        self._v[:, :, self.n:need] = v
        self.n = need
        return self.keys, self.values

    _owned = False

    def _grown(self, old: torch.Tensor, B: int, cap: int) -> torch.Tensor:
        new = old.new_empty((B, old.shape[1], cap, old.shape[3]))
        new[:, :, :self.n] = old[:, :, :self.n]
        return new


class KVCache:
    """Per-layer keys and values (:class:`LayerKV`), appended in place."""

    def __init__(self, layers: list[LayerKV]):
        self.layers = layers

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[torch.Tensor, torch.Tensor]] | None,
                   num_layers: int) -> "KVCache":
        if pairs is None:
            return cls([LayerKV(None, None) for _ in range(num_layers)])
        return cls([LayerKV(k, v) for k, v in pairs])

    @property
    def length(self) -> int:
        return self.layers[0].n

    def batch_select_indices(self, index: torch.Tensor) -> None:
        for layer in self.layers:
            layer.select(index)

    def append(self, i: int, k: torch.Tensor, v: torch.Tensor):
        return self.layers[i].append(k, v)


class FastDecoder:
    """See the module docstring. Build with :meth:`maybe`."""

    def __init__(self, model: Any):
        self.model = model
        cfg = model.config
        self.base = model.model
        self.num_layers = cfg.num_hidden_layers
        self.eps = cfg.rms_norm_eps
        attn = self.base.layers[0].self_attn
        self.head_dim = getattr(attn, "head_dim", cfg.hidden_size // cfg.num_attention_heads)
        self.heads, self.kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.scaling = getattr(attn, "scaling", self.head_dim ** -0.5)

    @classmethod
    def maybe(cls, model: Any) -> "FastDecoder | None":
        """A checked decoder for ``model``, or None (see the module docstring)."""
        reason = _unsupported(model)
        if reason is None:
            dec = cls(model)
            err = dec.probe_error()
            if err <= PROBE_TOL:
                return dec
            reason = f"probe logits differ from the transformers forward by {err:.2e}"
        log.info("fast decoder off for %s: %s", type(model).__name__, reason)
        return None

    def _rms(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * xf.to(x.dtype)

    def _mask(self, mask: torch.Tensor, past: int, T: int) -> torch.Tensor:
        """Boolean [B, 1, T, K]: causal and not padding; every query also sees itself (a left
        pad would otherwise see nothing, and a fully masked row is NaN in the softmax)."""
        keys = mask.bool()[:, None, None, :]
        if T == 1:
            return keys
        K = mask.shape[1]
        q = torch.arange(past, past + T, device=mask.device)[:, None]
        k = torch.arange(K, device=mask.device)[None, :]
        return (keys & (k <= q)) | (k == q)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, pos: torch.Tensor,
                cache: KVCache) -> torch.Tensor:
        """Logits ``[B, V]`` of the last position; the cache grows by ``ids.shape[1]``."""
        B, T = ids.shape
        h = F.embedding(ids, self.base.embed_tokens.weight)
        cos, sin = self.base.rotary_emb(h, pos)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        attn_mask = self._mask(mask, cache.length, T)
        gqa = self.kv_heads != self.heads
        for i, layer in enumerate(self.base.layers):
            a = layer.self_attn
            x = self._rms(h, layer.input_layernorm.weight)
            q = a.q_proj(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)
            k = a.k_proj(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
            v = a.v_proj(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
            q, k = _rope(q, cos, sin), _rope(k, cos, sin)
            keys, values = cache.append(i, k, v)
            o = F.scaled_dot_product_attention(q, keys, values, attn_mask=attn_mask,
                                               scale=self.scaling, enable_gqa=gqa)
            h = h + a.o_proj(o.transpose(1, 2).reshape(B, T, -1))
            m = layer.mlp
            x = self._rms(h, layer.post_attention_layernorm.weight)
            h = h + m.down_proj(F.silu(m.gate_proj(x)) * m.up_proj(x))
        return self.model.lm_head(self._rms(h[:, -1], self.base.norm.weight)).float()

    @torch.inference_mode()
    def probe_error(self) -> float:
        """Max |logit difference| to the transformers forward: left-padded prefill + one step."""
        from transformers import DynamicCache

        vocab = self.model.config.vocab_size
        gen = torch.Generator().manual_seed(0)
        device = next(self.model.parameters()).device
        ids = torch.randint(0, vocab, (2, 6), generator=gen).to(device)
        mask = torch.ones_like(ids)
        mask[1, :2] = 0
        pos = (mask.cumsum(1) - 1).clamp(min=0)
        nxt = torch.randint(0, vocab, (2, 1), generator=gen).to(device)
        mask2 = torch.cat([mask, torch.ones_like(nxt)], 1)
        pos2 = pos[:, -1:] + 1
        was_training = self.model.training
        self.model.eval()
        try:
            hf_cache = DynamicCache(config=self.model.config)
            want = [self.model(input_ids=x, attention_mask=m, position_ids=p, past_key_values=hf_cache,
                               use_cache=True).logits[:, -1].float()
                    for x, m, p in ((ids, mask, pos), (nxt, mask2, pos2))]
            cache = KVCache.from_pairs(None, self.num_layers)
            got = [self.forward(x, m, p, cache) for x, m, p in ((ids, mask, pos), (nxt, mask2, pos2))]
        finally:
            self.model.train(was_training)
        return max(float((w - g).abs().max()) for w, g in zip(want, got))


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def _unsupported(model: Any) -> str | None:
    cfg = getattr(model, "config", None)
    if type(model).__name__ not in SUPPORTED or cfg is None:
        return f"architecture {type(model).__name__} is not one of {', '.join(SUPPORTED)}"
    if getattr(cfg, "hidden_act", "silu") != "silu":
        return f"hidden_act {cfg.hidden_act!r} (only silu)"
    if getattr(cfg, "pretraining_tp", 1) != 1:
        return "pretraining_tp > 1"
    sliding = getattr(cfg, "sliding_window", None)
    if sliding is not None and getattr(cfg, "use_sliding_window", True):
        return "sliding-window attention"
    if not all(hasattr(model, "model") and hasattr(model.model, n)
               for n in ("embed_tokens", "layers", "norm", "rotary_emb")):
        return "unexpected module layout"
    return None
