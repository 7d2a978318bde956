"""The built-in tiny Llama-style causal LM (about 1.8M parameters with the default shape).

What it is: ``transformers.LlamaForCausalLM`` built from a ``LlamaConfig`` whose shape comes
from :class:`posttrain.core.config.TinyModelConfig` (hidden 192, 4 layers, 4 heads,
intermediate 512, 256 positions) and whose vocabulary is the character tokenizer of
:mod:`posttrain.models.tokenizer` (105 ids). It is an ordinary Hugging Face model: it saves
and loads with ``save_pretrained``/``from_pretrained`` (see :mod:`posttrain.models.loading`)
and every backend or trainer that takes an HF causal LM takes it unchanged.

Guarantees:
- ``build_tiny_model(cfg, seed)`` is deterministic: the same config and seed give
  bit-identical weights, and building does not disturb the caller's global torch RNG;
- the model is in float32 and in eval mode when returned, with pad/bos/eos ids set in both
  its config and its generation config to the tokenizer's ids.

What it does not do: pretraining (the weights are a random init; the quickstart teaches it
with SFT before RL), or any architecture beyond what ``LlamaConfig`` offers.
"""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from posttrain.core.config import TinyModelConfig

from .tokenizer import VOCAB_SIZE, build_char_tokenizer


def tiny_llama_config(cfg: TinyModelConfig, tokenizer: PreTrainedTokenizerFast) -> LlamaConfig:
    """The ``LlamaConfig`` of the tiny model for a given shape and tokenizer."""
    if cfg.hidden_size % cfg.num_heads:
        from posttrain.core.errors import ConfigError

        raise ConfigError(
            f"model.tiny.hidden_size={cfg.hidden_size} must be a multiple of "
            f"model.tiny.num_heads={cfg.num_heads}"
        )
    return LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_heads,
        max_position_embeddings=cfg.max_position_embeddings,
        rms_norm_eps=1e-5,
        initializer_range=0.02,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        use_cache=True,
    )


def build_tiny_model(cfg: TinyModelConfig | None = None, seed: int = 0,
                     ) -> tuple[LlamaForCausalLM, PreTrainedTokenizerFast]:
    """A freshly initialised tiny model and its tokenizer, deterministic in ``seed``."""
    cfg = cfg or TinyModelConfig()
    tokenizer = build_char_tokenizer()
    config = tiny_llama_config(cfg, tokenizer)
    # "sdpa" is the default; eager is as fast at this size but sdpa is what larger models use,
    # so the tiny model exercises the same attention path.
    config._attn_implementation = "sdpa"
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.to(torch.float32).eval()
    gen = model.generation_config
    gen.pad_token_id, gen.bos_token_id, gen.eos_token_id = (
        tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id)
    return model, tokenizer


def count_parameters(model: torch.nn.Module) -> int:
    """Number of distinct parameters (tied weights counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
