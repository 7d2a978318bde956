"""The one episode engine on the fake backend: batching, stop reasons, errors, mixed kinds."""

import pytest

from posttrain.core.errors import InferenceError
from posttrain.domains import get_domain, sample_task
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import EpisodeLimits, play_episode, run_groups
from posttrain.tools.calls import format_call

LEDGER = get_domain("tools.ledger_ops")
CHAIN = get_domain("tools.lookup_chain")


def _turn_index(messages):
    return sum(m.get("role") == "assistant" for m in messages)


def reference_script(tasks):
    """Reply with the reference episode of whichever task the prompt belongs to."""
    by_prompt = {t.prompt[-1]["content"]: t for t in tasks}

    def script(messages, j):
        task = by_prompt[next(m["content"] for m in messages if m["role"] == "user")]
        return get_domain(task.domain).reference_actions(task)[_turn_index(messages)]
    return script


def test_reference_episodes_batched_and_scored():
    tasks = [sample_task(LEDGER, 0, 2), sample_task(CHAIN, 1, 3)]
    backend = FakeBackend(reference_script(tasks))
    groups = run_groups(backend, tasks, SamplingParams(n=2, max_new_tokens=4000))
    assert [g.task for g in groups] == tasks
    for g in groups:
        assert len(g.trajectories) == 2
        for tr in g.trajectories:
            assert tr.stop_reason == "done" and tr.error is None
            assert tr.score.value == pytest.approx(1.0)
            assert all(t.info["format_ok"] and t.info["tool_calls_valid"] for t in tr.turns)
            assert all(t.action.prompt_token_ids for t in tr.turns)
    longest = max(len(tr.turns) for g in groups for tr in g.trajectories)
    # one generate call per turn for every live episode of both tasks (same tool list per task)
    assert len(backend.calls) <= 2 * longest
    assert max(len(prompts) for prompts, _ in backend.calls) == 2  # per tool list
    assert all(p.tools for _, p in backend.calls)


def test_malformed_calls_are_observations_and_counted():
    task = sample_task(LEDGER, 3, 1)
    env = LEDGER.make_env(task)
    backend = FakeBackend(['<tool_call>{"name": "deposit", oops</tool_call>',
                           format_call("no_such_tool", {}), "<answer>done</answer>"])
    tr = play_episode(backend, env, SamplingParams(max_new_tokens=200))
    assert [t.info["malformed_calls"] for t in tr.turns] == [1, 0, 0]
    assert [t.info["invalid_calls"] for t in tr.turns] == [0, 1, 0]
    assert tr.turns[1].observation.messages[0]["role"] == "tool"
    assert "malformed" in tr.turns[1].observation.messages[0]["content"]
    assert "unknown tool" in tr.turns[2].observation.messages[0]["content"]
    assert tr.stop_reason == "done" and tr.score.value == 0.0


@pytest.mark.parametrize("limits,reason,turns", [
    (EpisodeLimits(max_turns=3), "max_turns", 3),
    (EpisodeLimits(max_total_tokens=150), "max_tokens", 2),
    (EpisodeLimits(timeout_s=0.0), "timeout", 1),
])
def test_limits_stop_the_episode(limits, reason, turns):
    task = sample_task(LEDGER, 0, 1)
    backend = FakeBackend(["<tool_call>" + "x" * 100])
    tr = play_episode(backend, LEDGER.make_env(task), SamplingParams(max_new_tokens=120), limits)
    assert tr.stop_reason == reason and len(tr.turns) == turns
    assert tr.score is not None and tr.score.value == 0.0  # still verified


def test_inference_failure_is_isolated_to_its_episode():
    tasks = [sample_task(LEDGER, 0, 1), sample_task(LEDGER, 1, 1)]
    ref = reference_script(tasks)

    def script(messages, j):
        if messages[-1]["content"] == tasks[1].prompt[-1]["content"]:
            raise InferenceError("boom")
        return ref(messages, j)

    groups = run_groups(FakeBackend(script), tasks, SamplingParams(max_new_tokens=4000))
    ok, bad = groups[0].trajectories[0], groups[1].trajectories[0]
    assert ok.score.value == pytest.approx(1.0) and ok.error is None
    assert bad.stop_reason == "error" and bad.error is not None and "boom" in bad.error.message
    assert not bad.usable


def test_env_failure_becomes_trajectory_error():
    task = sample_task(LEDGER, 0, 1)

    def broken(t):
        raise RuntimeError("cannot build env")

    groups = run_groups(FakeBackend(["x"]), [task], SamplingParams(n=2), make_env=broken)
    assert all(tr.stop_reason == "error" and "cannot build" in tr.error.message
               for tr in groups[0].trajectories)


def test_single_and_multi_turn_tasks_in_one_call():
    add = sample_task(get_domain("math.add"), 0, 1)
    ledger = sample_task(LEDGER, 0, 1)
    ref = reference_script([ledger])

    def script(messages, j):
        if messages[-1]["content"] == add.prompt[-1]["content"]:
            return add.hidden["answer"]
        return ref(messages, j)

    groups = run_groups(FakeBackend(script), [ledger, add], SamplingParams(n=2, max_new_tokens=4000))
    assert [g.task.domain for g in groups] == [ledger.domain, add.domain]
    assert all(tr.reward == pytest.approx(1.0) for g in groups for tr in g.trajectories)
    assert len(groups[1].trajectories[0].turns) == 1


def test_process_rewards_and_stop_strings_kept():
    task = sample_task(LEDGER, 0, 1)
    call = LEDGER.reference_actions(task)[0]
    backend = FakeBackend([call + "trailing", "<answer>done</answer>"])
    tr = play_episode(backend, LEDGER.make_env(task),
                     SamplingParams(max_new_tokens=4000, stop=("</tool_call>",)))
    # the backend cut the stop string from .text; the loop restores it from the tokens
    assert tr.turns[0].action.text.endswith("</tool_call>")
    assert tr.turns[0].info["tool_calls"] >= 1


class _PerPromptSeeds(FakeBackend):
    per_prompt_tools = True
    per_prompt_seeds = True


@pytest.mark.parametrize("per_prompt_seeds", [True, False])
def test_episodes_at_different_turns_share_a_call_with_their_own_seeds(per_prompt_seeds):
    """Admission staggers sandboxed episodes (cap 2: the third starts when the first ends),
    so a round holds episodes at different turns. A backend that seeds each prompt gets them
    in one call, each prompt with its own turn's seed ``seed + 7919 * turn``; any other
    backend gets one call per turn with the plain seed. The trajectories score the same."""
    doms = [get_domain(d) for d in ("terminal.organize", "code.bug_repair_repl", "terminal.extract")]
    tasks = [sample_task(d, 0, 1) for d in doms]  # references of 2, 3 and 2 turns
    backend = (_PerPromptSeeds if per_prompt_seeds else FakeBackend)(reference_script(tasks))
    groups = run_groups(backend, tasks, SamplingParams(n=1, max_new_tokens=4000, seed=3),
                        limits=EpisodeLimits(max_sandbox_episodes=2))
    assert all(tr.reward == pytest.approx(1.0) for g in groups for tr in g.trajectories)
    mixed = 0
    for prompts, p in backend.calls:
        want = tuple(3 + 7919 * _turn_index(m) for m in prompts)
        if p.prompt_seeds is None:
            assert set(want) == {p.seed}
        else:
            assert p.prompt_seeds == want and len(set(want)) > 1
            mixed += 1
    assert (mixed >= 1) == per_prompt_seeds
    # 4 rounds: (organize 0, repl 0), (organize 1, repl 1), (repl 2, extract 0), (extract 1)
    assert len(backend.calls) == 4 if per_prompt_seeds else len(backend.calls) > 4


def test_a_failed_mixed_call_is_retried_prompt_by_prompt_with_each_prompts_tools_and_seed():
    """One bad prompt in a call of several domains and turns fails alone: the retry sends each
    prompt with its own tool list and seed (it used to resend every prompt's tool list with
    one prompt, which failed the good ones too and hid the real error)."""
    tasks = [sample_task(LEDGER, 0, 2), sample_task(CHAIN, 1, 3)]
    script = reference_script(tasks)

    class Picky(_PerPromptSeeds):
        def generate(self, prompts, params):
            if params.prompt_tools is not None:
                assert len(params.prompt_tools) == len(prompts)
            if params.prompt_seeds is not None:
                assert len(params.prompt_seeds) == len(prompts)
            if len(prompts) > 1:  # every batched call fails: only the retry can answer
                raise InferenceError("batch refused")
            return super().generate(prompts, params)

    backend = Picky(script)
    groups = run_groups(backend, tasks, SamplingParams(n=1, max_new_tokens=4000, seed=3))
    assert all(tr.reward == pytest.approx(1.0) for g in groups for tr in g.trajectories)
    singles = [p for prompts, p in backend.calls if len(prompts) == 1]
    assert any(p.prompt_tools is not None for p in singles)  # the mixed call's retries
    assert all(p.prompt_tools is None or len(p.prompt_tools) == 1 for p in singles)
