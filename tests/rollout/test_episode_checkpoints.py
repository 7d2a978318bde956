"""Episode checkpoints: a replayed group and a resumed job go on from the saved round.

Real sandboxes and a real long-horizon domain whose verifier reads the final files: a resumed
episode scores 1.0 only if its sandbox's /work came back exactly. The determinism test runs
the tiny model (sampling at temperature 1): a call cancelled after a checkpoint and resumed
from the SQLite work store gives token for token the trajectories of an uninterrupted call.
"""

from __future__ import annotations

import torch

from posttrain.core.config import TinyModelConfig
from posttrain.core.errors import SandboxError
from posttrain.domains import get_domain, sample_task
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.models.tiny import build_tiny_model
from posttrain.rollout import EpisodeLimits, play_groups
from posttrain.rollout.checkpoints import MemoryCheckpoints, call_key
from posttrain.scheduler.store import WorkStoreCheckpoints
from posttrain.rollout.context import ContextConfig
from posttrain.rollout.scripted import ScriptedPolicy
from posttrain.scheduler.rollouts import play_scheduled

torch.set_num_threads(1)
PIPELINE = get_domain("long_horizon.data_pipeline-v1")


class CountingPolicy(ScriptedPolicy):
    """The reference policy, noting the turn index of every prompt it is asked."""

    def __init__(self, tasks):
        super().__init__(tasks, lambda t: get_domain(t.domain).reference_actions(t))
        self.asked: list[int] = []

    def generate(self, prompts, params):
        self.asked += [sum(m["role"] == "assistant" for m in p) for p in prompts]
        return super().generate(prompts, params)


def breaking_envs(fail_at_step: int):
    """Envs of the task's domain; the first one's sandbox 'breaks' on its ``fail_at_step``-th step."""
    made = []

    def make_env(task):
        env = get_domain(task.domain).make_env(task)
        made.append(env)
        if len(made) == 1:
            step, calls = env.step, []

            def failing(action):
                calls.append(1)
                if len(calls) == fail_at_step:
                    raise SandboxError("supervisor died")
                return step(action)
            env.step = failing
        return env
    return make_env, made


def _replay(every: int):
    task = sample_task(PIPELINE, 0, max(PIPELINE.difficulties))
    n_turns = len(PIPELINE.reference_actions(task))
    policy = CountingPolicy([task])
    make_env, made = breaking_envs(fail_at_step=5)
    limits = EpisodeLimits(checkpoint_every=every, retry_backoff_s=0.0, max_turns=20)
    groups, _, stats = play_scheduled(policy, [task], SamplingParams(n=1, max_new_tokens=1 << 20),
                                      limits=limits, make_env=make_env)
    return n_turns, groups[0].trajectories[0], stats, policy.asked, made


def test_a_group_whose_sandbox_broke_resumes_from_its_checkpoint():
    n_turns, tr, stats, asked, made = _replay(every=2)
    assert n_turns == 7
    assert stats["rollout/retried_groups"] == 1 and stats["rollout/resumed_episodes"] == 1
    assert tr.error is None and tr.score.value == 1.0  # the verifier read the restored files
    assert len(tr.turns) == n_turns and tr.turns[4].info["resumed_from_turn"] == 4
    assert all("resumed_from_turn" not in t.info for i, t in enumerate(tr.turns) if i != 4)
    # Turns 0-4 asked once by the broken attempt; the retry asks only from turn 4 (the
    # checkpoint after round 4), not from the first turn.
    assert asked == [0, 1, 2, 3, 4] + [4, 5, 6]
    assert all(env._sandbox is None for env in made)  # every sandbox lease given back


def test_without_checkpoints_the_replay_starts_over():
    n_turns, tr, stats, asked, _ = _replay(every=0)
    assert tr.score.value == 1.0 and stats["rollout/resumed_episodes"] == 0
    assert asked == [0, 1, 2, 3, 4] + list(range(n_turns))


def test_memory_checkpoints_are_dropped_when_the_call_returns():
    task = sample_task(PIPELINE, 1, max(PIPELINE.difficulties))
    store = MemoryCheckpoints()
    play_groups(CountingPolicy([task]), [task], SamplingParams(n=1, max_new_tokens=1 << 20),
                limits=EpisodeLimits(checkpoint_every=1), checkpoints=store)
    assert len(store) == 0


def test_a_cancelled_call_resumes_to_the_same_trajectories(tmp_path):
    model, tok = build_tiny_model(TinyModelConfig(hidden_size=32, num_layers=1, num_heads=2,
                                                  intermediate_size=64, max_position_embeddings=4096),
                                  seed=0)
    tasks = [sample_task(get_domain("tools.ledger_ops"), 0, 2),
             sample_task(get_domain("terminal.organize"), 0, 1)]
    params = SamplingParams(n=2, max_new_tokens=8, seed=5)
    limits = EpisodeLimits(max_turns=5, max_total_tokens=200, checkpoint_every=2,
                           context=ContextConfig(max_context_chars=None))

    def strict(task):  # only <answer> ends an episode: the garbage turns keep it going
        env = get_domain(task.domain).make_env(task)
        env.require_answer = True
        return env

    want, _ = play_groups(HFBackend(model, tok), tasks, params, limits=limits, make_env=strict)
    assert max(len(t.turns) for g in want for t in g.trajectories) == 5

    store = WorkStoreCheckpoints(str(tmp_path / "work.sqlite"))
    rounds = []
    play_groups(HFBackend(model, tok), tasks, params, limits=limits, make_env=strict,
                checkpoints=store, cancelled=lambda: bool(rounds.append(1)) or len(rounds) > 3)
    assert store.load(call_key(tasks, params.seed, params.n)) is not None  # kept for the resume
    store.close()

    again = WorkStoreCheckpoints(str(tmp_path / "work.sqlite"))  # as a restarted process would
    got, _ = play_groups(HFBackend(model, tok), tasks, params, limits=limits, make_env=strict,
                         checkpoints=again)
    resumed = [t for g in got for t in g.trajectories if t.timings.get("checkpoint_resumed")]
    assert resumed, "nothing was resumed"
    for gw, gg in zip(want, got):
        for tw, tg in zip(gw.trajectories, gg.trajectories):
            assert [t.action.token_ids_T for t in tw.turns] == [t.action.token_ids_T for t in tg.turns]
            assert [t.observation.messages for t in tw.turns] == [t.observation.messages for t in tg.turns]
            assert tw.stop_reason == tg.stop_reason and tw.reward == tg.reward
    assert again.load(call_key(tasks, params.seed, params.n)) is None  # dropped once done


def test_the_l4_layer_reports_the_checkpoint_resume_success_rate():
    from posttrain.eval.aggregate import summarize
    from posttrain.eval.samples import record_from_trajectory

    _, resumed_ok, _, _, _ = _replay(every=2)
    _, from_scratch, _, _, _ = _replay(every=0)
    failed = _replay_wrong_after_resume()
    records = [record_from_trajectory(t, i, long_horizon=True)
               for i, t in enumerate([resumed_ok, from_scratch, failed])]
    assert [r.resumed for r in records] == [True, False, True]
    block = summarize(records, ks=(1,))["checkpoint_resume"]
    assert block["resumed"] == 2 and block["succeeded"] == 1
    assert block["rate"]["value"] == 0.5


def _replay_wrong_after_resume():
    """The broken episode resumes, then the policy gives up: resumed but not a success."""
    task = sample_task(PIPELINE, 2, max(PIPELINE.difficulties))
    ref = PIPELINE.reference_actions(task)
    policy = ScriptedPolicy([task], lambda t: ref[:5] + ["<answer>I give up</answer>"])
    make_env, _ = breaking_envs(fail_at_step=5)
    groups, _, stats = play_scheduled(policy, [task], SamplingParams(n=1, max_new_tokens=1 << 20),
                                      limits=EpisodeLimits(checkpoint_every=2, retry_backoff_s=0.0),
                                      make_env=make_env)
    assert stats["rollout/resumed_episodes"] == 1
    return groups[0].trajectories[0]
