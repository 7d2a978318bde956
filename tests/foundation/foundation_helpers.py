"""The tiny recipe of the foundation tests.

Small enough that the corpus (three single-turn domains and one multi-turn tool domain, played
through the engine) and the pre-training together take well under a minute on one thread, yet
big enough that the validation loss must fall far below the unigram baseline.
"""

from __future__ import annotations

from posttrain.foundation.recipe import FoundationRecipe

TINY = {
    "name": "tiny-test",
    "corpus": {"families": [], "include_domains": ["math.add-v1", "math.compare-v1",
                                                   "text_data.reverse-v1", "tools.single_call-v1"],
               "levels": [1], "seed_start": 0, "seed_stop": 24, "stdlib_mb": 0.0},
    "tokenizer": {"vocab_size": 384},
    "model": {"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
              "num_attention_heads": 2, "num_key_value_heads": 2, "max_position_embeddings": 512},
    "training": {"tokens": 64 * 8 * 128, "seq_len": 128, "batch_size": 8, "lr": 0.004,
                 "warmup_steps": 5, "min_lr_ratio": 0.1, "checkpoint_every": 0, "threads": 1,
                 "val_fraction": 0.1},
}


def tiny_recipe(**sections) -> FoundationRecipe:
    """TINY with sections updated one level deep: ``tiny_recipe(training={"tokens": 4096})``."""
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in TINY.items()}
    for key, value in sections.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return FoundationRecipe.model_validate(data)
