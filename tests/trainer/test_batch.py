"""build_policy_batch: alignment, multi-turn segments, exclusions, micro-batch splitting."""

import pytest
import torch
from trainer_helpers import group, multi_turn_traj, traj

from posttrain.trainer.batch import build_policy_batch, split_policy_batch

PAD = 0


def test_single_turn_rows_are_prompt_plus_completion_right_padded():
    g = group(traj([5, 6], [7, 8], 1.0, logprobs=[-1.0, -2.0], version=3),
              traj([5, 6], [9], 0.0, logprobs=[-0.5], version=3))
    b = build_policy_batch([g], [[0.5, -0.5]], PAD)
    assert b.input_ids.tolist() == [[5, 6, 7, 8], [5, 6, 9, PAD]]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    assert b.action_mask.tolist() == [[False, False, True, True], [False, False, True, False]]
    # behaviour logprob of token t sits at column t, like the trainer's token_logprobs
    assert b.behaviour_logprobs.tolist() == [[0, 0, -1.0, -2.0], [0, 0, -0.5, 0]]
    assert b.position_ids.tolist() == [[0, 1, 2, 3], [0, 1, 2, 0]]
    assert b.advantages.tolist() == [0.5, -0.5]
    assert b.sample_ids.tolist() == [0, 1]
    assert b.policy_versions.tolist() == [3, 3]
    assert b.stats["batch/action_tokens"] == 3


def test_unusable_trajectories_are_excluded_and_counted():
    g1 = group(traj([1], [2, 3], 1.0), traj([1], [4], 0.0, error=True))
    g2 = group(traj([1], [5], 0.0), traj([1], [6], 1.0))
    b = build_policy_batch([g1, g2], [[1.0, 99.0], [-1.0, 1.0]], PAD)
    assert b.num_rows == 3
    assert b.stats["batch/unusable"] == 1
    assert b.advantages.tolist() == [1.0, -1.0, 1.0]  # 99 (the unusable one) never enters
    assert b.group_ids.tolist() == [0, 1, 1]
    assert b.sample_ids.tolist() == [0, 1, 2]


def test_multi_turn_masks_observations_out_and_actions_in():
    # turn 2's prompt = turn 1's prompt + its action + observation tokens (10, 11)
    t = multi_turn_traj([([2, 3], [4, 5], [-0.1, -0.2], 1),
                         ([2, 3, 4, 5, 10, 11], [8], [-0.3], 2)], reward=1.0)
    b = build_policy_batch([group(t)], [[1.0]], PAD)
    assert b.input_ids.tolist() == [[2, 3, 4, 5, 10, 11, 8]]
    assert b.action_mask.long().tolist() == [[0, 0, 1, 1, 0, 0, 1]]
    assert b.behaviour_logprobs[0].tolist() == pytest.approx([0, 0, -0.1, -0.2, 0, 0, -0.3])
    assert b.policy_versions.tolist() == [1]  # the oldest version among the row's turns
    assert b.stats["batch/split_segments"] == 0


def test_multi_turn_whose_prompt_does_not_extend_history_becomes_a_second_row():
    # Turn 2's context was truncated: its prompt is not history + action, so the policy saw
    # exactly [2, 9] before producing 8 — that row must be trained with that context.
    t = multi_turn_traj([([2, 3], [4, 5], [-0.1, -0.2], 0), ([2, 9], [8], [-0.3], 0)], reward=1.0)
    b = build_policy_batch([group(t)], [[1.0]], PAD)
    assert b.input_ids.tolist() == [[2, 3, 4, 5], [2, 9, 8, PAD]]
    assert b.action_mask.long().tolist() == [[0, 0, 1, 1], [0, 0, 1, 0]]
    assert b.sample_ids.tolist() == [0, 0]  # one trajectory, two rows
    assert b.num_samples == 1
    assert b.stats["batch/split_segments"] == 1


def test_empty_prompt_drops_the_unpredictable_first_token():
    b = build_policy_batch([group(traj([], [4, 5, 6], 1.0))], [[1.0]], PAD)
    assert b.action_mask.long().tolist() == [[0, 1, 1]]
    assert b.stats["batch/dropped_first_tokens"] == 1


def test_misaligned_advantages_are_rejected():
    with pytest.raises(ValueError, match="aligned"):
        build_policy_batch([group(traj([1], [2], 1.0), traj([1], [2], 0.0))], [[1.0]], PAD)


def test_split_keeps_trajectories_whole_and_carries_global_counts():
    t_multi = multi_turn_traj([([2, 3], [4, 5], None, 0), ([2, 9], [8], None, 0)], reward=1.0)
    g = group(traj([1], [2, 3], 1.0), t_multi, traj([1], [4], 0.0))
    b = build_policy_batch([g], [[1.0, 0.5, -1.0]], PAD)
    parts = split_policy_batch(b, 2)
    assert sum(p.num_rows for p in parts) == b.num_rows
    for p in parts:
        assert p.global_num_tokens == float(b.action_mask.sum())
        assert p.global_num_samples == 3.0
    sample_sets = [set(p.sample_ids.tolist()) for p in parts]
    assert sample_sets[0].isdisjoint(sample_sets[1])
    assert torch.equal(torch.cat([p.sample_ids for p in parts]).sort().values, b.sample_ids.sort().values)
