"""HFBackend on the real tiny model: logprobs, prompt sharing, prefix cache, stops, seeding."""

from __future__ import annotations

import pytest
import torch
from inference_helpers import SYSTEM, addition_prompts, max_logprob_error, recompute_logprobs, tiny

from posttrain.core.errors import InferenceError
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.inference.hf import HFBackend

PAIRS = [(1, 2), (12, 34), (123, 4567), (5, 66), (90, 1)]


@pytest.fixture(scope="module")
def model_tok():
    return tiny(0)


def _same(a, b) -> bool:
    return all(x.token_ids_T == y.token_ids_T and x.text == y.text
               for ga, gb in zip(a, b) for x, y in zip(ga, gb))


def _max_lp_diff(a, b) -> float:
    return max((torch.tensor(x.logprobs_T) - torch.tensor(y.logprobs_T)).abs().max().item()
               for ga, gb in zip(a, b) for x, y in zip(ga, gb) if x.logprobs_T)


def test_is_an_inference_backend(model_tok):
    assert isinstance(HFBackend(*model_tok), InferenceBackend)


@pytest.mark.parametrize("system", [False, True], ids=["left-padded", "shared-prefix"])
def test_logprobs_equal_full_forward_recomputation(model_tok, system):
    model, tok = model_tok
    backend = HFBackend(model, tok, min_prefix_tokens=4)
    params = SamplingParams(n=4, temperature=0.7, top_p=0.9, max_new_tokens=12, seed=3)
    groups = backend.generate(addition_prompts(PAIRS, system=system), params)
    assert [len(g) for g in groups] == [4] * len(PAIRS)
    assert backend.stats.prefix_misses == (1 if system else 0)
    assert max_logprob_error(model, groups, temperature=0.7) < 1e-4
    # Behaviour logprobs are of the tempered distribution, not temperature 1.
    c = groups[1][0]
    assert (recompute_logprobs(model, c, 1.0) - torch.tensor(c.logprobs_T)).abs().max() > 1e-3


def test_greedy_prefix_shared_equals_unshared(model_tok):
    model, tok = model_tok
    prompts = addition_prompts(PAIRS, system=True)
    params = SamplingParams(n=2, greedy=True, max_new_tokens=8)
    shared = HFBackend(model, tok, min_prefix_tokens=4)
    plain = HFBackend(model, tok, min_prefix_tokens=10**6)
    a, b = shared.generate(prompts, params), plain.generate(prompts, params)
    assert shared.stats.prefix_misses == 1 and plain.stats.prefix_misses == 0
    assert _same(a, b)
    assert _max_lp_diff(a, b) < 1e-4
    assert max_logprob_error(model, a) < 1e-4


def test_one_prefill_per_distinct_prompt(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok, min_prefix_tokens=10**6)
    prompts = addition_prompts([(1, 2), (3, 4), (1, 2)])
    groups = backend.generate(prompts, SamplingParams(n=4, greedy=True, max_new_tokens=5))
    assert backend.stats.prefill_rows == 2  # not 3 prompts, not 12 samples
    for g in groups:  # every sample decoded from the shared prefill
        assert len({c.token_ids_T for c in g}) == 1
    assert groups[0][0].token_ids_T == groups[2][0].token_ids_T
    assert groups[0][0].prompt_token_ids == groups[2][0].prompt_token_ids
    assert groups[0][0].prompt_token_ids != groups[1][0].prompt_token_ids


def test_prefix_cache_is_reused_across_calls(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok, min_prefix_tokens=4)
    plain = HFBackend(model, tok, min_prefix_tokens=10**6)
    params = SamplingParams(n=2, greedy=True, max_new_tokens=6)
    backend.generate(addition_prompts(PAIRS[:2], system=True), params)
    later = addition_prompts([(7, 8), (9, 10), (11, 12)], system=True)
    got = backend.generate(later, params)
    assert (backend.stats.prefix_misses, backend.stats.prefix_hits) == (1, 1)
    assert _same(got, plain.generate(later, params))
    # A single prompt may use a cached prefix too.
    single = [[SYSTEM, {"role": "user", "content": "4+4="}]]
    assert _same(backend.generate(single, params), plain.generate(single, params))
    assert backend.stats.prefix_hits == 2


def test_stale_prefix_cache_not_used_after_load_weights():
    model, tok = tiny(0)
    other, _ = tiny(1)
    prompts = addition_prompts(PAIRS, system=True)
    params = SamplingParams(n=2, greedy=True, max_new_tokens=6)
    backend = HFBackend(model, tok, min_prefix_tokens=4)
    before = backend.generate(prompts, params)
    backend.load_weights(1, other.state_dict())
    after = backend.generate(prompts, params)
    assert backend.policy_version == 1 and all(c.policy_version == 1 for g in after for c in g)
    assert backend.stats.prefix_misses == 2  # recomputed, not served from the old cache
    reference = HFBackend(other, tok, min_prefix_tokens=10**6).generate(prompts, params)
    assert _same(after, reference) and _max_lp_diff(after, reference) < 1e-4
    assert _max_lp_diff(before, after) > 1e-2  # the weights did change the answer


def test_in_place_weight_update_without_load_weights_invalidates_prefix():
    model, tok = tiny(0)
    backend = HFBackend(model, tok, min_prefix_tokens=4)
    prompts = addition_prompts(PAIRS, system=True)
    params = SamplingParams(n=2, greedy=True, max_new_tokens=6)
    backend.generate(prompts, params)
    with torch.no_grad():  # what an optimizer step on a shared module does
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    groups = backend.generate(prompts, params)
    assert backend.stats.prefix_misses == 2
    assert max_logprob_error(model, groups) < 1e-4


def test_load_weights_copies_and_rejects_incomplete_state():
    model, tok = tiny(0)
    other, _ = tiny(2)
    backend = HFBackend(model, tok)
    backend.load_weights(3, other)  # a module is accepted too
    assert torch.equal(model.lm_head.weight, other.lm_head.weight)
    assert model.lm_head.weight.data_ptr() != other.lm_head.weight.data_ptr()
    with pytest.raises(InferenceError, match="missing"):
        backend.load_weights(4, {"lm_head.weight": other.lm_head.weight})
    backend.load_weights(5, None)
    assert backend.policy_version == 5


def test_stop_strings_cut_text_and_keep_ids(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    stops = ("ab", "x", "7", "Q", "z", ":", "k", "(", "m")
    params = SamplingParams(n=8, temperature=1.5, max_new_tokens=40, stop=stops, seed=11)
    groups = backend.generate(addition_prompts(PAIRS), params)
    stopped = 0
    for g in groups:
        for c in g:
            assert len(c.token_ids_T) <= 40
            assert not any(s in c.text for s in stops)
            full = tok.decode(list(c.token_ids_T), skip_special_tokens=True)
            assert full.startswith(c.text)
            if c.finish_reason == "stop" and c.token_ids_T[-1] != tok.eos_token_id:
                stopped += 1
                # the last id completed the stop string; one id fewer did not
                assert any(full.endswith(s) for s in stops)
                head = tok.decode(list(c.token_ids_T[:-1]), skip_special_tokens=True)
                assert not any(s in head for s in stops)
            elif c.finish_reason == "length":
                assert len(c.token_ids_T) == 40
    assert stopped >= 10  # rows finished early, so the batch was compacted mid-decode
    assert max_logprob_error(model, groups, temperature=1.5) < 1e-4


def test_eos_finishes_with_stop_and_is_kept_in_ids(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    params = SamplingParams(n=16, temperature=4.0, max_new_tokens=30, seed=5)
    groups = backend.generate(addition_prompts(PAIRS), params)
    eos = [c for g in groups for c in g if c.token_ids_T and c.token_ids_T[-1] == tok.eos_token_id]
    assert eos, "a hot sample over 105 ids should hit <eos> somewhere"
    for c in eos:
        assert c.finish_reason == "stop"
        assert tok.eos_token_id not in c.token_ids_T[:-1]
        assert "<eos>" not in c.text
        assert c.text == tok.decode(list(c.token_ids_T[:-1]), skip_special_tokens=True)


def test_seed_makes_sampling_reproducible(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS)
    run = lambda seed: backend.generate(prompts, SamplingParams(n=4, max_new_tokens=8, seed=seed))
    a, b, c = run(1), run(1), run(2)
    assert _same(a, b) and _max_lp_diff(a, b) == 0.0
    assert not _same(a, c)
    assert len({x.token_ids_T for x in a[0]}) > 1  # samples of one prompt differ


def test_top_p_truncates_sampling_but_not_logprobs(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:2])
    nucleus = backend.generate(prompts, SamplingParams(n=3, temperature=0.8, top_p=1e-6,
                                                       max_new_tokens=6, seed=0))
    greedy = backend.generate(prompts, SamplingParams(n=3, greedy=True, max_new_tokens=6))
    assert _same(nucleus, greedy)  # only the top token survives the nucleus
    assert max_logprob_error(model, nucleus, temperature=0.8) < 1e-4
    assert max(lp for g in nucleus for c in g for lp in c.logprobs_T) < -0.1  # not log(1)=0


def test_length_budget_and_context_limit(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:1])
    zero = backend.generate(prompts, SamplingParams(max_new_tokens=0, seed=0))
    assert zero[0][0].token_ids_T == () and zero[0][0].finish_reason == "length"
    long_user = [{"role": "user", "content": "1" * 250}]  # 252 ids of 256 positions
    out = backend.generate([long_user], SamplingParams(greedy=True, max_new_tokens=50))
    assert len(out[0][0].token_ids_T) <= 4
    with pytest.raises(InferenceError, match="positions"):
        backend.generate([[{"role": "user", "content": "1" * 300}]], SamplingParams())


def test_tools_are_rendered_into_the_prompt(model_tok):
    model, tok = model_tok
    backend = HFBackend(model, tok)
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    prompts = addition_prompts(PAIRS[:1])
    plain = backend.generate(prompts, SamplingParams(greedy=True, max_new_tokens=2))
    tooled = backend.generate(prompts, SamplingParams(greedy=True, max_new_tokens=2, tools=(tool,)))
    text = tok.decode(list(tooled[0][0].prompt_token_ids))
    assert '"name": "add"' in text and '"name": "add"' not in tok.decode(list(plain[0][0].prompt_token_ids))


def test_bad_params_and_roles_raise_inference_error(model_tok):
    backend = HFBackend(*model_tok)
    with pytest.raises(InferenceError, match="top_p"):
        backend.generate(addition_prompts(PAIRS[:1]), SamplingParams(top_p=0.0))
    with pytest.raises(InferenceError, match="chat template"):
        backend.generate([[{"role": "narrator", "content": "x"}]], SamplingParams())
    assert backend.generate([], SamplingParams()) == []


def test_shared_training_module_keeps_its_mode():
    model, tok = tiny(0)
    model.train()
    HFBackend(model, tok).generate(addition_prompts(PAIRS[:1]), SamplingParams(max_new_tokens=2))
    assert model.training


def test_prompt_seeds_give_each_prompt_its_own_stream(model_tok):
    """With ``prompt_seeds`` a prompt's samples depend on its own seed only: the same as when
    it is called alone, unchanged when another prompt's seed changes, different for its own."""
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:3])
    run = lambda ps, seeds: backend.generate(ps, SamplingParams(n=3, max_new_tokens=8, prompt_seeds=seeds))
    both = run(prompts, (11, 22, 33))
    assert _same(both, run(prompts, (11, 22, 33))) and _max_lp_diff(both, run(prompts, (11, 22, 33))) == 0.0
    alone = [run([p], (s,))[0] for p, s in zip(prompts, (11, 22, 33))]
    assert _same(both, alone)  # no draw depends on the other rows of the call
    other = run(prompts, (11, 99, 33))
    assert _same([both[0], both[2]], [other[0], other[2]]) and not _same([both[1]], [other[1]])
    assert len({c.token_ids_T for c in both[0]}) > 1  # a prompt's samples still differ
    assert max_logprob_error(model, both) < 1e-4  # the behaviour logprobs are the trainer's
    with pytest.raises(InferenceError, match="prompt seeds"):
        run(prompts, (1, 2))


def test_one_seed_path_draws_all_rows_from_one_generator(model_tok):
    """Without ``prompt_seeds`` the whole call draws from one generator seeded ``seed`` (the
    stream every published figure was sampled with): the first tokens of a P x n call are one
    multinomial over the P x n rows, rows prompt-major."""
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:2])
    got = backend.generate(prompts, SamplingParams(n=2, max_new_tokens=1, seed=5))
    with torch.no_grad():
        last = [model(torch.tensor([backend.render(p)])).logits[0, -1].float() for p in prompts]
    probs = torch.softmax(torch.stack([last[0], last[0], last[1], last[1]]), -1)
    want = torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(5)).squeeze(1)
    assert [c.token_ids_T[0] for g in got for c in g] == want.tolist()
    seeded = backend.generate(prompts, SamplingParams(n=2, max_new_tokens=1, prompt_seeds=(5, 5)))
    assert [c.token_ids_T for g in seeded for c in g] != [c.token_ids_T for g in got for c in g]


def test_prompt_caps_stop_each_prompts_rows_at_their_own_budget(model_tok):
    """``prompt_max_new_tokens``: a prompt's rows stop at its cap (finish ``length``), and with
    per-prompt seeds what they drew is exactly the first tokens of an uncapped call."""
    model, tok = model_tok
    backend = HFBackend(model, tok)
    prompts = addition_prompts(PAIRS[:3])
    free = backend.generate(prompts, SamplingParams(n=2, max_new_tokens=12, prompt_seeds=(1, 2, 3)))
    capped = backend.generate(prompts, SamplingParams(n=2, max_new_tokens=12, prompt_seeds=(1, 2, 3),
                                                      prompt_max_new_tokens=(3, 12, 0)))
    for a, b in zip(free[0], capped[0]):
        assert b.token_ids_T == a.token_ids_T[:3] and b.logprobs_T == a.logprobs_T[:3]
        assert b.finish_reason == ("length" if len(a.token_ids_T) > 3 else a.finish_reason)
    assert _same([free[1]], [capped[1]])
    assert all(c.token_ids_T == () and c.finish_reason == "length" for c in capped[2])
    with pytest.raises(InferenceError, match="token caps"):
        backend.generate(prompts, SamplingParams(n=2, max_new_tokens=12, prompt_max_new_tokens=(3,)))
    with pytest.raises(InferenceError, match="prompt_max_new_tokens"):
        backend.generate(prompts, SamplingParams(n=2, max_new_tokens=2, prompt_max_new_tokens=(3, 1, 1)))
