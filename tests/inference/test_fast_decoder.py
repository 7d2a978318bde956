"""The fast decode path: same samples and logprobs as the transformers forward, or not used at all."""

from __future__ import annotations

import pytest
import torch
from inference_helpers import addition_prompts, max_logprob_error, tiny

from posttrain.inference import fast_decoder
from posttrain.inference.base import SamplingParams
from posttrain.inference.fast_decoder import FastDecoder
from posttrain.inference.hf import HFBackend

PAIRS = [(1, 2), (12, 34), (123, 4567), (5, 66), (90, 1)]


def _variant(kind: str, vocab: int):
    """A small random model of another supported (or unsupported) shape."""
    import transformers as tf

    shape = dict(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, max_position_embeddings=128)
    torch.manual_seed(0)
    if kind == "llama-gqa":
        return tf.LlamaForCausalLM(tf.LlamaConfig(**shape, num_key_value_heads=2)).eval()
    if kind == "qwen2-bias":
        return tf.Qwen2ForCausalLM(tf.Qwen2Config(**shape, num_key_value_heads=2)).eval()
    if kind == "llama-gelu":
        return tf.LlamaForCausalLM(tf.LlamaConfig(**shape, hidden_act="gelu")).eval()
    if kind == "mistral-window":
        return tf.MistralForCausalLM(tf.MistralConfig(**shape, sliding_window=4)).eval()
    if kind == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=vocab, n_embd=64, n_layer=2, n_head=4,
                                                n_positions=128)).eval()
    raise ValueError(kind)


def _both(model, tok, **kw):
    fast, slow = HFBackend(model, tok, fast=True, **kw), HFBackend(model, tok, fast=False, **kw)
    assert fast.fast is not None and slow.fast is None
    return fast, slow


@pytest.mark.parametrize("system", [False, True], ids=["left-padded", "shared-prefix"])
def test_fast_path_samples_what_the_transformers_forward_samples(system):
    model, tok = tiny(1)
    fast, slow = _both(model, tok, min_prefix_tokens=4)
    prompts = addition_prompts(PAIRS, system=system)
    params = SamplingParams(n=4, temperature=0.8, max_new_tokens=10, seed=5)
    a, b = fast.generate(prompts, params), slow.generate(prompts, params)
    assert [[c.token_ids_T for c in g] for g in a] == [[c.token_ids_T for c in g] for g in b]
    assert max_logprob_error(model, a, temperature=0.8) < 1e-4
    assert fast.stats.prefix_misses == slow.stats.prefix_misses == (1 if system else 0)
    again = fast.generate(prompts, params)  # the prefix cache entry of the fast path is reused
    assert [[c.token_ids_T for c in g] for g in again] == [[c.token_ids_T for c in g] for g in a]


@pytest.mark.parametrize("kind", ["llama-gqa", "qwen2-bias"])
def test_other_supported_shapes_pass_the_probe_and_match(kind):
    _, tok = tiny(0)
    model = _variant(kind, len(tok))
    fast, slow = _both(model, tok)
    prompts = addition_prompts(PAIRS)
    params = SamplingParams(n=3, temperature=1.0, max_new_tokens=6, seed=1)
    a, b = fast.generate(prompts, params), slow.generate(prompts, params)
    assert [[c.token_ids_T for c in g] for g in a] == [[c.token_ids_T for c in g] for g in b]
    assert max_logprob_error(model, a) < 1e-4


@pytest.mark.parametrize("kind", ["llama-gelu", "mistral-window", "gpt2"])
def test_unsupported_models_keep_the_transformers_forward(kind):
    _, tok = tiny(0)
    model = _variant(kind, len(tok))
    assert FastDecoder.maybe(model) is None
    backend = HFBackend(model, tok)
    assert backend.fast is None
    if kind == "mistral-window":  # the backend's own limit: the window must cover the context
        return
    groups = backend.generate(addition_prompts(PAIRS[:2]), SamplingParams(n=2, max_new_tokens=4, seed=0))
    assert all(len(c.token_ids_T) == len(c.logprobs_T) for g in groups for c in g)


def test_a_wrong_fast_forward_is_caught_by_the_probe(monkeypatch):
    model, _ = tiny(2)
    assert FastDecoder.maybe(model) is not None
    real = fast_decoder._rope
    monkeypatch.setattr(fast_decoder, "_rope", lambda x, cos, sin: real(x, sin, cos))
    assert FastDecoder.maybe(model) is None


def test_weights_are_read_in_place():
    model, tok = tiny(3)
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:2])
    params = SamplingParams(n=1, greedy=True, max_new_tokens=6)
    before = backend.generate(prompts, params)
    other, _ = tiny(4)
    backend.load_weights(1, other.state_dict())
    after = backend.generate(prompts, params)
    assert max_logprob_error(other, after) < 1e-4  # sampled with the new weights
    assert [c.token_ids_T for g in after for c in g] != [c.token_ids_T for g in before for c in g]


def test_kv_cache_appends_in_place_like_concatenation_and_never_writes_a_shared_prefix():
    """The cache's buffers grow in place: every step's keys equal concatenation's; a prefix
    handed in (a prefix-cache entry, or one expanded to the batch) is copied, never written."""
    from posttrain.inference.fast_decoder import KVCache

    gen = torch.Generator().manual_seed(0)
    prefix_k, prefix_v = torch.randn(1, 2, 5, 4, generator=gen), torch.randn(1, 2, 5, 4, generator=gen)
    kept_k, kept_v = prefix_k.clone(), prefix_v.clone()
    cache = KVCache.from_pairs([(prefix_k.expand(3, -1, -1, -1), prefix_v.expand(3, -1, -1, -1))], 1)
    want_k, want_v = prefix_k.expand(3, -1, -1, -1), prefix_v.expand(3, -1, -1, -1)
    views, rows = [], 3
    for step in range(40):
        k, v = torch.randn(rows, 2, 1, 4, generator=gen), torch.randn(rows, 2, 1, 4, generator=gen)
        got_k, got_v = cache.append(0, k, v)
        want_k, want_v = torch.cat([want_k, k], 2), torch.cat([want_v, v], 2)
        assert torch.equal(got_k, want_k) and torch.equal(got_v, want_v) and cache.length == 6 + step
        views.append((got_k.clone(), got_k))
        if step == 20:
            cache.batch_select_indices(torch.tensor([2, 0]))
            want_k, want_v, rows = want_k[[2, 0]], want_v[[2, 0]], 2
    assert torch.equal(prefix_k, kept_k) and torch.equal(prefix_v, kept_v)
    assert all(torch.equal(copy, view) for copy, view in views)  # later steps never rewrite earlier views
