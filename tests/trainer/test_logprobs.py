"""token_logprobs: alignment with sampling, temperature, padding, chunking, entropy."""

import torch
from trainer_helpers import group, tiny_llama, traj

from posttrain.trainer.batch import build_policy_batch
from posttrain.trainer.logprobs import (logprobs_from_logits, token_logprobs,
                                        token_logprobs_and_entropy)

PAD = 0


def _sample(model, prompt, n_new, temperature, gen):
    """Ancestral sampling the way an inference backend does it, recording behaviour logprobs."""
    ids, lps = list(prompt), []
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1] / temperature
            logp = torch.log_softmax(logits, -1)
            tok = int(torch.multinomial(logp.exp(), 1, generator=gen))
            ids.append(tok)
            lps.append(float(logp[tok]))
    return ids[len(prompt):], lps


def test_trainer_logprobs_match_behaviour_logprobs_of_the_sampler():
    model = tiny_llama(0)
    gen = torch.Generator().manual_seed(0)
    T = 0.7
    trajs = []
    for prompt in ([3, 4, 5], [6, 7], [8, 9, 10, 11]):
        toks, lps = _sample(model, prompt, 5, T, gen)
        trajs.append(traj(prompt, toks, 1.0, logprobs=lps))
    batch = build_policy_batch([group(*trajs)], [[0.0, 0.0, 0.0]], PAD)
    lp = token_logprobs(model, batch, temperature=T)
    m = batch.action_mask
    assert torch.allclose(lp[m], batch.behaviour_logprobs[m], atol=1e-5)
    # the wrong temperature is visibly wrong: the convention matters
    lp1 = token_logprobs(model, batch, temperature=1.0)
    assert (lp1[m] - batch.behaviour_logprobs[m]).abs().max() > 1e-2


def test_matches_naive_log_softmax_and_entropy_with_padding_and_chunks():
    model = tiny_llama(1)
    torch.manual_seed(0)
    ids = torch.randint(1, 32, (3, 7))
    attn = torch.ones_like(ids)
    attn[1, 5:] = 0
    ids[1, 5:] = PAD
    logits = model(input_ids=ids, attention_mask=attn).logits
    T = 1.3
    naive = torch.log_softmax(logits[:, :-1] / T, -1)
    want_lp = naive.gather(-1, ids[:, 1:, None]).squeeze(-1)
    want_ent = -(naive.exp() * naive).sum(-1)
    for chunk in (1 << 24, 7 * 32):  # one chunk, and one row per chunk
        lp, ent = logprobs_from_logits(logits, ids, attn, T, with_entropy=True, chunk_elems=chunk)
        assert torch.allclose(lp[:, 1:][attn[:, 1:].bool()], want_lp[attn[:, 1:].bool()], atol=1e-6)
        assert torch.allclose(ent[:, 1:][attn[:, 1:].bool()], want_ent[attn[:, 1:].bool()], atol=1e-5)
        assert (lp[:, 0] == 0).all() and (lp[1, 5:] == 0).all() and (ent[1, 5:] == 0).all()


def test_right_padding_does_not_change_a_rows_logprobs():
    model = tiny_llama(2)
    short = traj([3, 4], [5, 6], 1.0)
    long = traj([3, 4, 5, 6, 7, 8], [9, 10, 11], 1.0)
    alone = build_policy_batch([group(short)], [[0.0]], PAD)
    padded = build_policy_batch([group(short, long)], [[0.0, 0.0]], PAD)
    a = token_logprobs(model, alone)[0, :4]
    b = token_logprobs(model, padded)[0, :4]
    assert torch.allclose(a, b, atol=1e-5)


def test_gradients_flow_to_logprobs_and_not_to_entropy():
    model = tiny_llama(3)
    batch = build_policy_batch([group(traj([3, 4], [5, 6], 1.0))], [[1.0]], PAD)
    lp, ent = token_logprobs_and_entropy(model, batch)
    assert lp.requires_grad and not ent.requires_grad
    (lp * batch.action_mask).sum().backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)
