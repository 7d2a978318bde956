"""Prompt sharing in the update: each distinct prefix runs once, and nothing else changes.

The reference is the plain forward (``token_logprobs_and_entropy``): logprobs, entropies and
the gradients of a loss must match it on single-turn groups (shared prompts) and on a
multi-turn row (observation tokens inside the suffix). Dropping inert rows must leave the
loss gradient unchanged too.
"""

import copy

import torch
from trainer_helpers import group, multi_turn_traj, tiny_llama, traj

from posttrain.core.config import RLConfig
from posttrain.trainer.batch import build_policy_batch, without_zero_advantage_rows
from posttrain.trainer.logprobs import token_logprobs_and_entropy
from posttrain.trainer.losses import LOSSES, LossConfig
from posttrain.trainer.reference_loop import policy_update
from posttrain.trainer import shared_prefix
from posttrain.trainer.shared_prefix import packed_logprobs, plan_packing, policy_logprobs

PAD = 0


def _batch(advantages=None):
    g = torch.Generator().manual_seed(0)
    rand = lambda n: [int(x) for x in torch.randint(3, 32, (n,), generator=g)]  # noqa: E731
    groups, advs = [], []
    for gi, plen in enumerate((3, 6, 9)):
        prompt = rand(plen)
        trajs = [traj(prompt, rand(1 + (j * 3 + gi) % 5), float(j % 2)) for j in range(4)]
        groups.append(group(*trajs))
        advs.append([0.5, -0.5, 1.0, -1.0])
    p = rand(4)
    a1, obs, a2 = rand(3), rand(2), rand(2)
    mt = multi_turn_traj([(p, a1, [-1.0] * 3, 0), (p + a1 + obs, a2, [-1.0] * 2, 0)], 1.0)
    groups.append(group(mt, traj(p, rand(2), 0.0)))
    advs.append([0.7, -0.7])
    return build_policy_batch(groups, advantages or advs, PAD)


def test_plan_packs_each_prompt_once_and_no_padding():
    batch = _batch()
    plan = plan_packing(batch)
    assert plan is not None and plan.input_ids.shape[0] == 4  # one row per group
    starts = batch.action_mask.int().argmax(1)
    suffixes = batch.attention_mask.sum(1) - starts
    assert len(plan.targets) == int(suffixes.sum()) and plan.cost < plan.full_cost
    # row 0: group 0's prompt once, then its four samples' completions, then padding
    row0 = batch.input_ids[0, :3].tolist() + sum(
        (batch.input_ids[b, 3:3 + int(suffixes[b])].tolist() for b in range(4)), [])
    assert plan.input_ids[0, :len(row0)].tolist() == row0
    assert not plan.allowed[0, len(row0):, :len(row0)].any()  # padding sees no real token
    # a suffix token sees its own prompt, never another group's or another sample's tokens
    allowed = plan.allowed[0]
    first = len(_batch().input_ids[0].nonzero())  # the end of group 0's first sample
    assert allowed[3, :4].all() and not allowed[3, 4:].any()  # its first suffix token
    assert allowed[first, :3].all()  # the second sample sees the shared prompt...
    assert not allowed[first, 3:first].any()  # ...and nothing of the first sample


def test_rows_are_capped_and_prompts_restated():
    batch = _batch()
    plan = plan_packing(batch, max_tokens=12)
    assert plan is not None and plan.input_ids.shape[0] > 1
    assert plan.input_ids.shape[1] <= 12 + 9  # a prompt of 9 plus a suffix may exceed the cap


def test_no_plan_when_nothing_is_gained():
    single = build_policy_batch([group(traj([3, 4, 5, 6, 7, 8], [9, 10], 1.0)),
                                 group(traj([11, 12, 13, 14, 15, 16], [17, 18], 0.0))],
                                [[1.0], [1.0]], PAD)
    assert plan_packing(single) is None  # equal lengths, nothing shared: no positions saved


def _check_against_full(model, batch, plan, T):
    full_lp, full_ent = token_logprobs_and_entropy(model, batch, T)
    lp, ent = packed_logprobs(model, batch, plan, T, with_entropy=True)
    m = batch.action_mask
    assert torch.allclose(lp[m], full_lp[m], atol=1e-5)
    assert torch.allclose(ent[m], full_ent[m], atol=1e-5)
    assert (lp[~batch.attention_mask.bool()] == 0).all()

    def grads(logprobs):
        model.zero_grad()
        weights = torch.linspace(-1, 1, logprobs.numel()).view_as(logprobs)
        (logprobs * m * weights).sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    want = grads(token_logprobs_and_entropy(model, batch, T)[0])
    got = grads(packed_logprobs(model, batch, plan, T)[0])
    for w, g in zip(want, got):
        assert torch.allclose(w, g, atol=1e-5, rtol=1e-4)


def test_logprobs_entropy_and_gradients_match_the_full_forward():
    model = tiny_llama(0)
    model.train()
    batch = _batch()
    for cap in (1024, 12):  # one packed row; several, with prompts restated
        _check_against_full(model, batch, plan_packing(batch, max_tokens=cap), 0.8)


def test_a_leak_across_samples_would_be_caught():
    model = tiny_llama(4)
    batch = _batch()
    plan = plan_packing(batch)
    leaky = plan.__class__(**{**plan.__dict__, "allowed": plan.allowed | torch.ones_like(
        plan.allowed).tril()})  # causal attention over the whole packed row
    good, _ = packed_logprobs(model, batch, plan)
    bad, _ = packed_logprobs(model, batch, leaky)
    m = batch.action_mask
    assert (bad[m] - good[m]).abs().max() > 1e-3


def test_checkpointing_packs_and_mask_ignoring_attention_falls_back(monkeypatch):
    model = tiny_llama(1)
    batch = _batch()
    getattr(model, "activation_checkpointing_enable", model.gradient_checkpointing_enable)()
    model.train()
    lp, _ = policy_logprobs(model, batch)
    full, _ = token_logprobs_and_entropy(model, batch)
    m = batch.action_mask
    assert torch.allclose(lp[m], full[m], atol=1e-5)  # packing needs no cache: it still applies
    # an attention implementation outside MASKED_ATTENTION (flash kernels ignore 4-D masks)
    monkeypatch.setattr(shared_prefix, "MASKED_ATTENTION", ("eager",))
    assert model.config._attn_implementation == "sdpa" and plan_packing(batch) is not None
    lp, _ = policy_logprobs(model.eval(), batch)
    assert torch.equal(lp, token_logprobs_and_entropy(model, batch)[0])


def test_inert_rows_are_dropped_and_the_loss_gradient_is_unchanged():
    advs = [[0.0] * 4, [0.5, -0.5, 1.0, -1.0], [0.0] * 4, [0.7, -0.7]]
    batch = _batch(advs)
    sub = without_zero_advantage_rows(batch)
    assert sub.num_rows == 4 + 2  # group 1, and the multi-turn group's two trajectories
    assert sub.global_num_samples == batch.num_samples
    model = tiny_llama(2)
    model.train()
    cfg = LossConfig()

    def grads(b):
        model.zero_grad()
        lp, _ = token_logprobs_and_entropy(model, b)
        loss, _ = LOSSES.get("grpo")(b, lp, cfg)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    loss_full, g_full = grads(batch)
    loss_sub, g_sub = grads(sub)
    assert torch.allclose(loss_full, loss_sub, atol=1e-6)
    for a, b in zip(g_full, g_sub):
        assert torch.allclose(a, b, atol=1e-6)
    everything_inert = _batch([[0.0] * 4, [0.0] * 4, [0.0] * 4, [0.0, 0.0]])
    assert without_zero_advantage_rows(everything_inert) is everything_inert


def test_policy_update_with_and_without_sharing_gives_the_same_weights():
    base = tiny_llama(3)
    batch = _batch()
    results = []
    for share in (False, True):
        model = copy.deepcopy(base)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        rl = RLConfig(shared_prefix=share, ppo_epochs=2)
        policy_update(model, opt, batch, rl, "grpo")
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert torch.allclose(results[0], results[1], atol=1e-6)
    assert not torch.allclose(results[0], torch.cat([p.flatten() for p in base.parameters()]))
