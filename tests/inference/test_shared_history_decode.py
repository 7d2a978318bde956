"""Rows with the same history share one cache row in the HF decode loop, and each row still
draws exactly what an independent sampler over the full transformers forward would draw."""

from __future__ import annotations

import pytest
import torch
from inference_helpers import addition_prompts, tiny

from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.inference.sampling import generators

PAIRS = [(12, 34), (5, 66), (90, 1)]


def _naive(model, backend, prompts, params):
    """Each row alone: a full forward over prompt + tokens so far per token, its own generator."""
    gens = generators(params, len(prompts) * params.n, torch.device("cpu"))
    out = []
    for p, prompt in enumerate(prompts):
        ids = backend.render(prompt)
        for j in range(params.n):
            seq, toks, lps = list(ids), [], []
            for _ in range(params.max_new_tokens):
                with torch.no_grad():
                    logits = model(torch.tensor([seq])).logits[0, -1].float()
                logp = torch.log_softmax(logits / params.temperature, -1)
                tok = int(torch.multinomial(logp.exp()[None], 1, generator=gens[p * params.n + j]))
                toks.append(tok)
                lps.append(float(logp[tok]))
                seq.append(tok)
                if tok in backend.eos_ids:
                    break
            out.append((toks, lps))
    return out


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "transformers"])
def test_each_row_draws_what_an_independent_sampler_draws(fast):
    model, tok = tiny(seed=1)
    model.eval()
    backend = HFBackend(model, tok, fast=fast)
    prompts = addition_prompts(PAIRS)
    # At this temperature the random model's rows of one prompt agree for a few tokens and
    # then split (12 distinct completions of 18 rows): shared cache rows, then copies.
    params = SamplingParams(n=6, temperature=0.05, max_new_tokens=6, prompt_seeds=[3, 4, 5])
    got = [c for g in backend.generate(prompts, params) for c in g]
    want = _naive(model, backend, prompts, params)
    for c, (toks, lps) in zip(got, want):
        assert list(c.token_ids_T) == toks
        assert max(abs(a - b) for a, b in zip(c.logprobs_T, lps)) < 1e-4
    rows, steps = backend.stats.decode_rows, backend.stats.decode_steps
    distinct_histories = {(c.prompt_token_ids, tuple(c.token_ids_T)) for c in got}
    assert len(distinct_histories) > len(PAIRS)  # some rows split apart ...
    assert rows < steps * len(got)  # ... and shared rows were computed once


def test_greedy_samples_of_a_prompt_are_one_cache_row():
    model, tok = tiny(seed=0)
    backend = HFBackend(model.eval(), tok)
    prompts = addition_prompts(PAIRS)
    one = backend.generate(prompts, SamplingParams(n=1, greedy=True, max_new_tokens=5))
    backend.stats.decode_rows = backend.stats.decode_steps = 0
    many = backend.generate(prompts, SamplingParams(n=4, greedy=True, max_new_tokens=5))
    for single, group in zip(one, many):
        for c in group:
            assert c.token_ids_T == single[0].token_ids_T
            assert max((abs(a - b) for a, b in zip(c.logprobs_T, single[0].logprobs_T)), default=0) < 1e-5
    # one cache row per prompt while its rows agree (all of them, greedily)
    assert backend.stats.decode_rows <= backend.stats.decode_steps * len(PAIRS)
