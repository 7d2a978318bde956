"""DPO: loss on a hand example, pair mining from groups, batch layout, and a learning step."""

import copy
import math

import pytest
import torch
from trainer_helpers import group, multi_turn_traj, tiny_llama, traj

from posttrain.trainer.dpo import build_dpo_batch, dpo_loss, dpo_step, pairs_from_groups, sequence_logprobs
from posttrain.trainer.logprobs import token_logprobs
from posttrain.trainer.optim import build_optimizer


def test_dpo_loss_hand_example():
    # h = (-1 - -2) - (-3 - -2) = 2; beta h = 0.2; loss = -log sigmoid(0.2) = log(1 + e^-0.2)
    t = lambda *v: torch.tensor(v)  # noqa: E731
    loss, m = dpo_loss(t(-1.0), t(-3.0), t(-2.0), t(-2.0), beta=0.1)
    assert loss.item() == pytest.approx(math.log1p(math.exp(-0.2)), abs=1e-6)  # 0.598139
    assert m["dpo/margin"] == pytest.approx(0.2) and m["dpo/accuracy"] == 1.0
    assert m["dpo/chosen_reward"] == pytest.approx(0.1) and m["dpo/rejected_reward"] == pytest.approx(-0.1)


def test_pairs_from_groups_best_vs_worst_skipping_ties_and_errors():
    g0 = group(traj([1], [2], 0.2), traj([1], [3], 1.0), traj([1], [4], 0.5), traj([1], [5], 1.0))
    tie = group(traj([1], [2], 1.0), traj([1], [3], 1.0))
    g2 = group(traj([1], [2], 0.0), traj([1], [3], 1.0, error=True), traj([1], [4], 0.5))
    lonely = group(traj([1], [2], 1.0), traj([1], [3], 0.0, error=True))
    pairs = pairs_from_groups([g0, tie, g2, lonely])
    assert [(p.group_index, p.chosen, p.rejected) for p in pairs] == [
        (0, g0.trajectories[1], g0.trajectories[0]),  # first of the two 1.0s
        (2, g2.trajectories[2], g2.trajectories[0]),  # the errored 1.0 is not usable
    ]
    assert pairs_from_groups([g0], min_margin=0.9) == []


def test_sequence_logprobs_sum_every_turn_of_a_sample():
    chosen = multi_turn_traj([([1, 2], [3], [-1.0], 0), ([7], [4, 5], [-2.0, -3.0], 0)], 1.0)
    rejected = traj([1, 2], [6], 0.0, logprobs=[-0.5])
    pairs = pairs_from_groups([group(chosen, rejected)])
    batch = build_dpo_batch(pairs, pad_id=0)
    assert batch.sample_ids.tolist() == [0, 0, 1]  # chosen split in two rows, then rejected
    seq = sequence_logprobs(batch.behaviour_logprobs, batch, 2)
    assert seq.tolist() == [-6.0, -0.5]


def test_dpo_steps_raise_the_chosen_margin():
    model = tiny_llama(0)
    ref = copy.deepcopy(model)
    g = group(traj([3, 4], [5, 6, 7], 1.0), traj([3, 4], [8, 9, 10], 0.0))
    batch = build_dpo_batch(pairs_from_groups([g]), pad_id=0)
    opt = build_optimizer(model, lr=1e-2)
    first = dpo_step(model, opt, batch, beta=0.5, ref_model=ref)
    assert first["dpo/loss"] == pytest.approx(math.log(2), abs=1e-5)  # policy == reference
    for _ in range(10):
        last = dpo_step(model, opt, batch, beta=0.5, ref_model=ref)
    assert last["dpo/loss"] < 0.5 * first["dpo/loss"] and last["dpo/margin"] > 0
    lp = sequence_logprobs(token_logprobs(model, batch), batch, 2)
    lp_ref = sequence_logprobs(token_logprobs(ref, batch), batch, 2)
    assert (lp[0] - lp_ref[0]) > (lp[1] - lp_ref[1])
    with pytest.raises(ValueError, match="ref"):
        dpo_step(model, opt, batch, beta=0.5)
