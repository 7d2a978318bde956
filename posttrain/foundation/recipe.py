"""A foundation recipe: what ``posttrain foundation build`` pre-trains, validated before work starts.

What it is: a YAML file (``configs/foundation/*.yaml``) with four sections, each a pydantic
``_Strict`` model like the run config's (unknown keys, non-finite floats and booleans as
numbers are errors; a bad field names itself by its dotted path):

- ``corpus``: which domains (families, tiers, ids to add or drop), which levels, the training
  seed range ``[seed_start, seed_stop)``, whether multi-turn reference demonstrations are
  played, and how many MB of the Python standard library's sources join the text;
- ``tokenizer``: the byte-level BPE vocabulary size (:func:`posttrain.models.tokenizer.
  train_subword_tokenizer`);
- ``model``: the Llama shape, named as ``transformers.LlamaConfig`` fields (the vocabulary
  size is the tokenizer's);
- ``training``: tokens, sequence length, batch, the AdamW + warm-up/cosine schedule, seed,
  threads, validation split, checkpoint cadence.

Guarantees: held-out seeds are refused — any ``seed_stop > heldout_seed_offset`` (the run
config's ``eval.seed_offset``, 10,000,000 by default) is a validation error naming
``corpus.seed_stop``; ``recipe_hash`` is a stable sha256 of the validated recipe (field order
and YAML formatting do not matter; any value does); ``corpus_key`` hashes only what the
token file depends on (corpus, tokenizer, sequence length), so a new learning rate reuses the
cached corpus. Not checked here: that the domain selection is non-empty (the registry is
consulted when the corpus is built) and that the shape fits the machine.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from posttrain.core.config import EvalConfig, _Strict, load_config

HELDOUT_SEED_OFFSET = EvalConfig().seed_offset


class CorpusSpec(_Strict):
    """The documents: reference answers and demonstrations of training seeds, plus stdlib text."""

    families: list[str] | None = Field(None, description="None: every family; []: only include_domains")
    tiers: list[Literal["light", "real"]] = Field(default_factory=lambda: ["light"], min_length=1)
    include_domains: list[str] = Field(default_factory=list, description="ids added to the selection")
    exclude_domains: list[str] = Field(default_factory=list, description="ids dropped from it")
    adapters: bool = Field(False, description="include adapter and plugin domains (reasoning-gym...); "
                           "their tasks depend on PYTHONHASHSEED, so the corpus is then "
                           "reproducible only with it fixed")
    levels: list[int] | None = Field(None, min_length=1, description="None: every level of a domain")
    seed_start: int = Field(0, ge=0)
    seed_stop: int = Field(2, ge=1, description="exclusive; must stay <= heldout_seed_offset")
    heldout_seed_offset: int = Field(HELDOUT_SEED_OFFSET, ge=1,
                                     description="eval.seed_offset of the runs this foundation serves")
    demonstrations: bool = Field(True, description="play multi-turn references through the engine")
    max_turns: int = Field(16, ge=1, description="episode turn limit while playing demonstrations")
    env_workers: int = Field(4, ge=1)
    stdlib_mb: float = Field(0.0, ge=0, le=64)
    shuffle_seed: int = 0

    @model_validator(mode="after")
    def _training_seeds_only(self) -> "CorpusSpec":
        if self.seed_stop <= self.seed_start:
            raise ValueError(f"seed_stop={self.seed_stop} must be > seed_start={self.seed_start}")
        if self.seed_stop > self.heldout_seed_offset:
            raise ValueError(
                f"seed_stop={self.seed_stop} reaches held-out seeds (>= heldout_seed_offset="
                f"{self.heldout_seed_offset}); a foundation never trains on held-out seeds")
        return self


class TokenizerSpec(_Strict):
    vocab_size: int = Field(4096, ge=300, le=65536, description="byte-level BPE (264 ids are fixed)")
    min_frequency: int = Field(2, ge=1)


class ShapeSpec(_Strict):
    """``transformers.LlamaConfig`` fields of the foundation (``vocab_size`` is the tokenizer's)."""

    hidden_size: int = Field(128, ge=8, le=8192)
    intermediate_size: int = Field(352, ge=8)
    num_hidden_layers: int = Field(4, ge=1, le=128)
    num_attention_heads: int = Field(2, ge=1, le=128)
    num_key_value_heads: int = Field(2, ge=1, le=128)
    max_position_embeddings: int = Field(2048, ge=16)
    tie_word_embeddings: bool = True
    rms_norm_eps: float = Field(1e-5, gt=0)
    initializer_range: float = Field(0.02, gt=0)
    rope_theta: float = Field(10000.0, gt=0)

    @model_validator(mode="after")
    def _heads_divide(self) -> "ShapeSpec":
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size={self.hidden_size} must be a multiple of "
                             f"num_attention_heads={self.num_attention_heads}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"num_attention_heads={self.num_attention_heads} must be a multiple "
                             f"of num_key_value_heads={self.num_key_value_heads}")
        return self


class TrainingSpec(_Strict):
    tokens: int = Field(1_000_000, ge=1, description="training tokens (steps = tokens / (batch * seq_len))")
    seq_len: int = Field(512, ge=8)
    batch_size: int = Field(8, ge=1, description="sequences per step")
    lr: float = Field(3e-3, gt=0)
    min_lr_ratio: float = Field(0.1, ge=0, le=1)
    warmup_steps: int = Field(20, ge=0)
    weight_decay: float = Field(0.1, ge=0)
    beta1: float = Field(0.9, ge=0, lt=1)
    beta2: float = Field(0.95, ge=0, lt=1)
    grad_clip: float = Field(1.0, gt=0)
    seed: int = 0
    threads: int = Field(1, ge=1)
    val_fraction: float = Field(0.05, gt=0, lt=0.5)
    val_max_sequences: int = Field(64, ge=1, description="cap on the sequences one validation pass reads")
    eval_every: int = Field(0, ge=0, description="validation every N steps; 0: at the end only")
    checkpoint_every: int = Field(50, ge=0, description="0: no periodic checkpoints")
    keep_checkpoints: int = Field(2, ge=1)

    def steps(self) -> int:
        return max(1, self.tokens // (self.batch_size * self.seq_len))


class FoundationRecipe(_Strict):
    name: str = Field("foundation", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+\-]{0,100}$",
                      description="registry id prefix of the built version")
    corpus: CorpusSpec = CorpusSpec()
    tokenizer: TokenizerSpec = TokenizerSpec()
    model: ShapeSpec = ShapeSpec()
    training: TrainingSpec = TrainingSpec()

    @model_validator(mode="after")
    def _positions_fit(self) -> "FoundationRecipe":
        if self.training.seq_len > self.model.max_position_embeddings:
            raise ValueError(f"training.seq_len={self.training.seq_len} exceeds "
                             f"model.max_position_embeddings={self.model.max_position_embeddings}")
        return self


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def recipe_hash(recipe: FoundationRecipe) -> str:
    """sha256 of the whole validated recipe (every value, defaults included)."""
    return _sha(recipe.model_dump(mode="json"))


def corpus_key(recipe: FoundationRecipe) -> str:
    """sha256 of what the token file depends on: the corpus, the tokenizer, the sequence length."""
    return _sha({"corpus": recipe.corpus.model_dump(mode="json"),
                 "tokenizer": recipe.tokenizer.model_dump(mode="json"),
                 "seq_len": recipe.training.seq_len, "format": 1})


def load_recipe(path: str | Path | None, overrides: list[str] | None = None) -> FoundationRecipe:
    """Read and validate a recipe; raises ``ConfigError`` naming every bad field."""
    return load_config(path, overrides, model=FoundationRecipe)
