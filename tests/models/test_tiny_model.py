"""The tiny Llama-style model: size, deterministic init, save/load, and load errors."""

from __future__ import annotations

import pytest
import torch

from posttrain.core.config import TinyModelConfig
from posttrain.core.errors import ConfigError
from posttrain.models.loading import load_model, save_model
from posttrain.models.tiny import build_tiny_model, count_parameters

torch.set_num_threads(1)


def _equal_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_default_shape_is_about_1_8m_parameters():
    model, tok = build_tiny_model(seed=0)
    assert 1.7e6 < count_parameters(model) < 1.9e6
    cfg = model.config
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads) == (192, 4, 4)
    assert (cfg.intermediate_size, cfg.max_position_embeddings, cfg.vocab_size) == (512, 256, len(tok))
    assert model.generation_config.eos_token_id == tok.eos_token_id
    assert not model.training


def test_init_is_deterministic_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a, _ = build_tiny_model(seed=7)
    assert torch.equal(torch.rand(3), expected)
    b, _ = build_tiny_model(seed=7)
    c, _ = build_tiny_model(seed=8)
    assert _equal_weights(a, b) and not _equal_weights(a, c)


def test_custom_shape_and_bad_shape():
    small, _ = build_tiny_model(TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                                intermediate_size=64), seed=0)
    assert count_parameters(small) < 30_000
    with pytest.raises(ConfigError, match="num_heads"):
        build_tiny_model(TinyModelConfig(hidden_size=30, num_heads=4), seed=0)


def test_save_load_round_trip_gives_identical_logits(tmp_path):
    model, tok = build_tiny_model(seed=3)
    save_model(model, tok, tmp_path / "m")
    loaded, tok2 = load_model(tmp_path / "m")
    ids = torch.tensor([tok.encode("<|user|>12+34=<|assistant|>46")])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, loaded(ids).logits)
    assert _equal_weights(model, loaded) and not loaded.training
    assert tok2.encode("a+b") == tok.encode("a+b")


def test_load_in_bfloat16(tmp_path):
    model, tok = build_tiny_model(seed=0)
    save_model(model, tok, tmp_path)
    loaded, _ = load_model(tmp_path, dtype="bfloat16")
    assert loaded.lm_head.weight.dtype == torch.bfloat16


def test_load_errors_name_the_folder(tmp_path):
    with pytest.raises(ConfigError, match="not a folder"):
        load_model(tmp_path / "missing")
    with pytest.raises(ConfigError, match="no config.json") as info:
        load_model(tmp_path)
    assert str(tmp_path) in str(info.value)
    model, tok = build_tiny_model(seed=0)
    model.save_pretrained(tmp_path / "weights_only")
    with pytest.raises(ConfigError, match="no tokenizer files"):
        load_model(tmp_path / "weights_only")
    with pytest.raises(ConfigError, match="dtype"):
        load_model(tmp_path / "weights_only", dtype="float8")
