"""posttrain's OpenAI-compatible backend against a real ``posttrain serve``: what it records is exact.

The server runs the saved tiny model under uvicorn on a loopback port; the client is
:class:`~posttrain.inference.openai_compat.OpenAICompatBackend`. Its Completions must EQUAL an
in-process HFBackend over the same folder (ids, logprobs, text, finish reason, prompt ids),
greedy and sampled with the same seed, while its requests run concurrently; episodes played
through the episode engine over HTTP record exactly what the in-process backend samples.
"""

from __future__ import annotations

import pytest
from serve_helpers import serving

from posttrain.domains import get_domain, sample_task
from posttrain.envs.factory import make_env
from posttrain.inference.base import SamplingParams
from posttrain.inference.openai_compat import OpenAICompatBackend
from posttrain.rollout import EpisodeLimits, run_groups
from posttrain.serve import ServedModel, ServeSpec

PROMPTS = [[{"role": "user", "content": f"{a}+{b}="}] for a, b in
           ((1, 2), (12, 34), (5, 66), (70, 8), (9, 9), (40, 41))]


@pytest.fixture(scope="module")
def url(folders):
    with serving(ServeSpec(folders=[folders["v1"]])) as (base, _):
        yield base


def _fields(c):
    return c.text, c.token_ids_T, c.logprobs_T, c.finish_reason, c.prompt_token_ids


@pytest.mark.parametrize("params", [
    SamplingParams(greedy=True, max_new_tokens=12),
    SamplingParams(n=4, temperature=0.8, top_p=0.9, seed=7, max_new_tokens=12, stop=("7",)),
], ids=["greedy", "sampled-seed"])
def test_completions_equal_the_in_process_backend(url, local, params):
    client = OpenAICompatBackend(url, max_workers=len(PROMPTS))  # 6 requests in flight at once
    remote = client.generate(PROMPTS, params)
    # The server samples each request alone with its seed: the in-process twin is one call per prompt.
    direct = [local["v1"].generate([p], params)[0] for p in PROMPTS]
    assert [[_fields(c) for c in g] for g in remote] == [[_fields(c) for c in g] for g in direct]
    flat = [c for g in remote for c in g]
    assert all(c.token_ids_T and c.prompt_token_ids for c in flat)
    if not params.greedy:  # really sampled: the samples of one prompt differ
        assert len({c.token_ids_T for c in remote[0]}) > 1


def test_episode_over_http_records_exact_turns(url, local):
    """Single-turn and multi-turn (tool) episodes through the episode engine over HTTP: every
    turn's ids re-tokenize to its text, the first prompt is the backend's own rendering of the
    task, later prompts extend the previous prompt + action, and each turn's ids/logprobs are
    what the in-process backend samples from that prompt."""
    tasks = [sample_task(get_domain("math.add"), 0, 1), sample_task(get_domain("tools.single_call"), 0, 1)]
    params = SamplingParams(greedy=True, max_new_tokens=16)

    def strict_env(task):  # only <answer> ends a tool episode: the untrained model's turns go on
        env = make_env(get_domain(task.domain), task)
        if hasattr(env, "require_answer"):
            env.require_answer = True
        return env

    groups = run_groups(OpenAICompatBackend(url), tasks, params, make_env=strict_env,
                        limits=EpisodeLimits(max_turns=3, max_total_tokens=48))
    hf = local["v1"]
    in_process = ServedModel("in-process", hf)  # samples from prompt ids, no HTTP
    special = set(hf.tokenizer.all_special_ids)
    turns = 0
    for tr in (tr for g in groups for tr in g.trajectories):
        assert tr.error is None and tr.score is not None and tr.score.error is None
        first = tr.turns[0].observation
        assert list(tr.turns[0].action.prompt_token_ids) == hf.render(first.messages, first.tools)
        for k, t in enumerate(tr.turns):
            a, turns = t.action, turns + 1
            assert len(a.token_ids_T) == len(a.logprobs_T) > 0
            assert hf.tokenizer(a.text, add_special_tokens=False)["input_ids"] == [
                i for i in a.token_ids_T if i not in special]
            if k:  # a later turn's prompt extends the previous prompt and action (one trainer row)
                prev = tr.turns[k - 1].action
                head = list(prev.prompt_token_ids) + list(prev.token_ids_T)
                assert list(a.prompt_token_ids[:len(head)]) == head
            # The engine may cap a turn below 16 tokens (episode budget): compare that prefix.
            d = in_process.complete([a.prompt_token_ids], params)[0][0]
            assert d.token_ids_T[:len(a.token_ids_T)] == a.token_ids_T
            assert d.logprobs_T[:len(a.logprobs_T)] == a.logprobs_T
    assert turns > len(tasks)  # the tool episode really took several turns
