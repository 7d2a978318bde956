"""Identical samples merged into one weighted row: every loss and its gradient are unchanged."""

import pytest
import torch
from trainer_helpers import group, multi_turn_traj, tiny_llama, traj

from posttrain.core.config import RLConfig
from posttrain.trainer.batch import build_policy_batch, without_zero_advantage_rows
from posttrain.trainer.logprobs import token_logprobs_and_entropy
from posttrain.trainer.losses import LOSSES, LossConfig
from posttrain.trainer.merge_rows import merge_identical_rows
from posttrain.trainer.shared_prefix import policy_logprobs

PAD = 0


def _batch():
    """Group 0: four samples, three identical; group 1: two identical samples whose behaviour
    logprobs differ (not mergeable); a multi-turn trajectory twice (never merged)."""
    p0, p1, p2 = [3, 4, 5], [6, 7, 8, 9], [10, 11]
    same = [12, 13, 2]
    g0 = group(traj(p0, same, 1.0, [-0.5, -0.25, -0.125]), traj(p0, [14, 2], 0.0, [-1.0, -2.0]),
               traj(p0, same, 1.0, [-0.5, -0.25, -0.125]), traj(p0, same, 1.0, [-0.5, -0.25, -0.125]))
    g1 = group(traj(p1, [15, 2], 1.0, [-0.5, -1.0]), traj(p1, [15, 2], 1.0, [-0.5, -1.5]),
               traj(p1, [16], 0.0))
    turns = [(p2, [17, 18], [-1.0, -1.0], 0), ([22, 23], [20], [-1.0], 0)]  # two rows
    g2 = group(multi_turn_traj(turns, 1.0), multi_turn_traj(turns, 1.0), traj(p2, [21], 0.0))
    advs = [[0.5, -1.5, 0.5, 0.5], [0.4, 0.4, -0.8], [0.3, 0.3, -0.6]]
    return build_policy_batch([g0, g1, g2], advs, PAD)


def test_only_identical_single_row_samples_merge():
    batch = _batch()
    merged = merge_identical_rows(batch)
    assert batch.num_rows == 4 + 3 + 5
    assert merged.num_rows == batch.num_rows - 2  # group 0's three copies -> one row
    assert merged.sample_weights.tolist().count(3.0) == 1
    assert merged.global_num_samples == batch.num_samples
    assert merged.global_num_tokens == float(batch.action_mask.sum())
    no_dup = merge_identical_rows(merged)
    assert no_dup is merged


@pytest.mark.parametrize("loss_name", LOSSES.ids())
def test_merged_batch_gives_the_same_loss_and_gradient(loss_name):
    model = tiny_llama(4)
    model.train()
    cfg = LossConfig.from_rl(RLConfig(algorithm="grpo"))
    batch = _batch()
    merged = merge_identical_rows(batch)
    assert merged.num_rows < batch.num_rows

    def grads(b, forward):
        model.zero_grad()
        lp, _ = forward(model, b)
        loss, _ = LOSSES.get(loss_name)(b, lp, cfg)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    loss_full, g_full = grads(batch, token_logprobs_and_entropy)
    for forward in (token_logprobs_and_entropy, policy_logprobs):  # plain and packed
        loss_m, g_m = grads(merged, forward)
        assert torch.allclose(loss_full, loss_m, atol=1e-6)
        for a, b in zip(g_full, g_m):
            assert torch.allclose(a, b, atol=1e-6)


def test_merging_after_dropping_inert_rows_keeps_the_whole_batch_counts():
    batch = _batch()
    sub = without_zero_advantage_rows(batch.replace(advantages=torch.tensor(
        [0.5, -1.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.3, 0.3, 0.3, 0.3, -0.6])))
    merged = merge_identical_rows(sub)
    assert merged.global_num_samples == batch.num_samples == sub.global_num_samples
    assert merged.global_num_tokens == sub.global_num_tokens
