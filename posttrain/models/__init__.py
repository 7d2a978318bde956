"""posttrain.models: the built-in tiny model and tokenizer, model loading, and the version registry.

``build_tiny_model`` makes the tiny Llama-style model and its character tokenizer offline;
``load_model``/``save_model`` go through ``from_pretrained``/``save_pretrained`` for any local
Hugging Face causal LM folder.
"""

from .loading import load_model, save_model
from .tiny import build_tiny_model, count_parameters
from .tokenizer import build_char_tokenizer

__all__ = ["build_char_tokenizer", "build_tiny_model", "count_parameters", "load_model", "save_model"]
