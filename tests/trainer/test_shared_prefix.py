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
from posttrain.trainer.shared_prefix import plan_shared_prefix, policy_logprobs, shared_prefix_logprobs

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


def test_plan_shares_the_prompt_of_each_group():
    batch = _batch()
    plan = plan_shared_prefix(batch)
    assert plan is not None and len(plan.prefixes) == 4  # three groups + the multi-turn group
    assert plan.cost < plan.full_cost
    assert plan.starts.tolist()[:4] == [3, 3, 3, 3]


def test_no_plan_when_nothing_is_shared():
    single = build_policy_batch([group(traj([3, 4, 5, 6, 7, 8], [9, 10], 1.0)),
                                 group(traj([11, 12, 13], [14], 0.0))], [[1.0], [1.0]], PAD)
    assert plan_shared_prefix(single) is None


def test_logprobs_entropy_and_gradients_match_the_full_forward():
    model = tiny_llama(0)
    model.train()
    batch = _batch()
    plan = plan_shared_prefix(batch)
    T = 0.8
    full_lp, full_ent = token_logprobs_and_entropy(model, batch, T)
    lp, ent = shared_prefix_logprobs(model, batch, plan, T, with_entropy=True)
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
    got = grads(shared_prefix_logprobs(model, batch, plan, T)[0])
    for w, g in zip(want, got):
        assert torch.allclose(w, g, atol=1e-5, rtol=1e-4)
    # A wrong position id for the suffix is visible: the check above can fail.
    shifted = plan.__class__(plan.prefixes, plan.row_prefix, plan.starts + 1, plan.lengths + 1,
                             plan.cost, plan.full_cost)
    bad, _ = shared_prefix_logprobs(model, batch.replace(
        attention_mask=torch.cat([batch.attention_mask, batch.attention_mask[:, -1:]], 1),
        input_ids=torch.cat([batch.input_ids, batch.input_ids[:, -1:]], 1)), shifted, T)
    assert not torch.allclose(bad[:, :lp.shape[1]][m], lp[m], atol=1e-3)


def test_policy_logprobs_falls_back_under_gradient_checkpointing():
    model = tiny_llama(1)
    batch = _batch()
    getattr(model, "activation_checkpointing_enable", model.gradient_checkpointing_enable)()
    model.train()
    lp, _ = policy_logprobs(model, batch)
    full, _ = token_logprobs_and_entropy(model, batch)
    assert torch.equal(lp, full)  # the same computation, not just close


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
