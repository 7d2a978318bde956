"""The episode engine: every caller that plays episodes goes through :func:`play_groups`.

The reference loop, the async producers (thread, process, Ray), DPO pair sampling, held-out
evaluation, ``posttrain eval run``, ``domains calibrate`` and the conformance checker (with a
scripted policy, :mod:`posttrain.rollout.scripted`) all call it; there is no second engine.
A single-turn task is an episode of one turn.

One call plays ``params.n`` episodes of each task, all together, in rounds:

1. **admit and reset** episodes: all of them at once, except that at most
   ``limits.max_sandbox_episodes`` sandboxed episodes are live (see :class:`~posttrain.rollout.env_calls.Admission`);
   resets run on the env pool (a sandbox env may do I/O);
2. **generate**: one backend call per (samples per prompt, turn index) for every live
   episode — and per tool list, unless the backend renders each prompt with its own tools
   (``per_prompt_tools``, the HF backend does; ``SamplingParams.prompt_tools``). On its first
   turn each task's episodes share one prompt with ``n`` samples (the backend shares the
   prefill); later turns send one prompt per episode. The seed of an episode's turn ``t`` is
   ``params.seed + 7919 * t``. A backend that seeds each prompt's rows on their own
   (``per_prompt_seeds``, the HF backend does; ``SamplingParams.prompt_seeds``) gets episodes
   of different turns in one call, each prompt with its turn's seed — so a round is one call
   per sample count even when admission staggers the episodes. A call whose prompts are all
   at one turn is sent with the plain ``seed``, exactly as before. Each prompt's token cap is
   its episode's ``tokens_left`` (``SamplingParams.prompt_max_new_tokens`` where the backend
   honours it, ``per_prompt_budgets``; else the call's largest, and an episode may overrun
   ``max_total_tokens`` by up to one action). So a batch of single-turn
   tasks is exactly one ``generate(prompts, params)`` call;
3. **step** every episode that got an action, on the env pool (sandbox latency overlaps).
   With a backend that ``streams_prompts`` (the HF backend does) and
   ``limits.overlap_env_steps`` (default), an episode's step starts on the pool as soon as
   its action is complete, while the call goes on decoding the longer actions of the round:
   sandbox work overlaps generation without splitting the batch. What each step gets is
   the same either way, so the trajectories are too;
4. an episode that ended is **verified on its live env and closed** at once, on the env pool,
   while the others go on to their next turn.

Guarantees: one group of exactly ``params.n`` trajectories per task, in task order, whatever
fails — a failure is classified at its boundary (:func:`~posttrain.core.errors.classify`) and
recorded on its trajectory, the rest of the batch goes on (a failed batched generate is
retried prompt by prompt to isolate the bad one); staged timeouts: an env reset or step that
has run ``limits.step_timeout_s``, or a verification that has run ``limits.verify_timeout_s``,
is abandoned and its episode fails with kind ``timeout`` (an infrastructure failure, which the
scheduler retries) — the engine never hangs on one env; ``cancelled`` stops every episode at
the next round; every env created is closed before the call returns; batch composition depends only on the tasks, the params and the episodes' own
outcomes, never on thread timing, so the same seed and weights give the same trajectories.
``between_turns`` (free-running partial rollouts) is called before every turn after the
first. Returned :class:`EngineTimes` are wall seconds per stage.

What it does not do: retry tasks (the scheduler does), stream tokens, or let one episode run
ahead of the others in a round (an episode that ends early frees its env at once). Not
covered: stopping a hung call's thread (Python cannot; closing its env kills a sandbox
command, which is what hangs in practice) — it keeps a worker of the env pool until it returns.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from posttrain.core.errors import InferenceError
from posttrain.core.types import Completion, Task, Trajectory, TrajectoryGroup
from posttrain.envs.base import TaskEnv
from posttrain.inference.base import InferenceBackend, PromptDone, SamplingParams
from posttrain.inference.vision import check_images

from .checkpoints import CallCheckpointer, CheckpointStore, RestoreFailed, call_key
from .env_calls import Admission, EnvCall, finished, run_all, submit_all, wait_all
from .episode import BrokenEnv, Episode, EpisodeLimits, action_text

EnvFactory = Callable[[Task], TaskEnv]
TURN_SEED_STRIDE = 7919


@dataclass
class EngineTimes:
    """Wall seconds of one call per stage (stages overlap: verification runs beside turns)."""

    sample_s: float = 0.0
    env_s: float = 0.0
    verify_s: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {"sample_s": self.sample_s, "env_s": self.env_s, "verify_s": self.verify_s}


def env_factory(tasks: Sequence[Task]) -> EnvFactory:
    """The env each task's domain declares; each domain is resolved once per call."""
    from posttrain.domains.base import get_domain
    from posttrain.envs.factory import make_env

    domains = {d: get_domain(d) for d in dict.fromkeys(t.domain for t in tasks)}
    return lambda task: make_env(domains[task.domain], task)


def _new_episode(task: Task, make_env: EnvFactory, limits: EpisodeLimits) -> Episode:
    try:
        env = make_env(task)
    except Exception as exc:  # the env boundary: construction failed, recorded on the episode
        env = BrokenEnv(task, exc)
    return Episode(task, env, limits)


def _prompt_groups(live: list[Episode]) -> list[list[Episode]]:
    """Episodes that share one prompt: a task's episodes on their first turn, else one each."""
    by_task: dict[int, list[Episode]] = {}
    out: list[list[Episode]] = []
    for ep in live:
        if ep.turns:
            out.append([ep])
        elif id(ep.task) in by_task:
            by_task[id(ep.task)].append(ep)
        else:
            by_task[id(ep.task)] = group = [ep]
            out.append(group)
    return out


def _calls(live: list[Episode], per_prompt_tools: bool,
           per_prompt_seeds: bool = False) -> list[list[list[Episode]]]:
    """Prompt groups split into backend calls: one per (samples, episode turn), and per tool
    list unless the backend renders each prompt with its own (``per_prompt_tools``); turns
    share a call when the backend seeds each prompt on its own (``per_prompt_seeds``)."""
    calls: dict[tuple[str, int, int], list[list[Episode]]] = {}
    for group in _prompt_groups(live):
        tools = "" if per_prompt_tools else _tools_key(group[0].tools)
        key = (tools, len(group), -1 if per_prompt_seeds else len(group[0].turns))
        calls.setdefault(key, []).append(group)
    return list(calls.values())


def _call_params(params: SamplingParams, groups: list[list[Episode]],
                 per_prompt_tools: bool, per_prompt_budgets: bool = False) -> SamplingParams:
    caps = tuple(max(1, min(params.max_new_tokens, *(ep.tokens_left() for ep in g))) for g in groups)
    seeds = None if params.seed is None else tuple(
        params.seed + TURN_SEED_STRIDE * len(g[0].turns) for g in groups)
    one_turn = seeds is None or len(set(seeds)) == 1
    tools = tuple(g[0].tools for g in groups)
    mixed = per_prompt_tools and len(set(map(_tools_key, tools))) > 1
    return replace(params, n=len(groups[0]), tools=groups[0][0].tools,
                   seed=seeds[0] if seeds else None,
                   prompt_seeds=None if one_turn else seeds,
                   prompt_tools=tools if mixed else None,
                   prompt_max_new_tokens=caps if per_prompt_budgets and len(set(caps)) > 1 else None,
                   max_new_tokens=max(caps))


def _tools_key(tools: Any) -> str:
    return json.dumps(tools, sort_keys=True, default=str)


def _checked(got: Any, prompts: int, n: int) -> list[list[Completion]]:
    if len(got) != prompts or any(len(g) != n for g in got):
        raise InferenceError(f"backend returned {[len(g) for g in got]} completions for "
                             f"{prompts} prompts of {n} samples")
    return got


def _generate(backend: InferenceBackend, groups: list[list[Episode]], p: SamplingParams,
              on_prompt: PromptDone | None = None) -> list[list[Completion] | BaseException]:
    """One call for the groups; when it fails, one call per prompt isolates the bad one.

    ``on_prompt`` (a backend that ``streams_prompts``): each prompt's completions as soon as
    they are ready; a prompt handed out is never sampled again, even if the call fails later."""
    prompts = [g[0].prompt() for g in groups]
    delivered: dict[int, list[Completion]] = {}

    def hand_out(i: int, got: list[Completion]) -> None:
        if on_prompt is not None and i not in delivered and len(got) == p.n:
            delivered[i] = list(got)
            on_prompt(i, delivered[i])
    stream = {"on_prompt": hand_out} if on_prompt is not None else {}
    try:
        for g, prompt in zip(groups, prompts):  # a text-only model refuses image prompts
            check_images(backend, g[0].task.domain, prompt)
        got = list(_checked(backend.generate(prompts, p, **stream), len(prompts), p.n))
        return [delivered.get(i, g) for i, g in enumerate(got)]
    except Exception as exc:  # the inference boundary
        if len(prompts) == 1 and not delivered:
            return [exc]
    out: list[list[Completion] | BaseException] = []
    for i, prompt in enumerate(prompts):
        if i in delivered:
            out.append(delivered[i])
            continue
        try:
            check_images(backend, groups[i][0].task.domain, prompt)
            out.append(_checked(backend.generate([prompt], _one_prompt(p, i)), 1, p.n)[0])
        except Exception as one:  # the inference boundary, one prompt
            out.append(one)
    return out


def _one_prompt(p: SamplingParams, i: int) -> SamplingParams:
    """The params of prompt ``i`` of a call, sent alone: its own tool list and its own seed
    (so its samples are the ones the whole call would have drawn for it)."""
    pick = lambda per_prompt: None if per_prompt is None else (per_prompt[i],)  # noqa: E731
    cap = p.max_new_tokens if p.prompt_max_new_tokens is None else p.prompt_max_new_tokens[i]
    return replace(p, prompt_tools=pick(p.prompt_tools), prompt_seeds=pick(p.prompt_seeds),
                   prompt_max_new_tokens=None, max_new_tokens=cap)


def _turn(backend: InferenceBackend, live: list[Episode], params: SamplingParams,
          times: EngineTimes, start: Callable[[Episode, Completion], None] | None = None,
          ) -> list[tuple[Episode, Completion]]:
    """Sample one action for every live episode; failures end their episodes.

    ``start``: called with each episode and its action as soon as the backend hands the
    action out, while the call goes on; the actions returned are the ones not started."""
    actions: list[tuple[Episode, Completion]] = []
    mixed = bool(getattr(backend, "per_prompt_tools", False))
    budgets = bool(getattr(backend, "per_prompt_budgets", False))
    for groups in _calls(live, mixed, bool(getattr(backend, "per_prompt_seeds", False))):
        p = _call_params(params, groups, mixed, budgets)
        t0 = time.perf_counter()
        size = sum(len(g) for g in groups)
        started: set[int] = set()

        def early(i: int, got: list[Completion], groups=groups, t0=t0, size=size) -> None:
            share = (time.perf_counter() - t0) / size
            for ep, c in zip(groups[i], got):
                ep.timings["generate_s"] += share  # before the step's thread can read it
                started.add(id(ep))
                start(ep, c)  # type: ignore[misc]
        outs = _generate(backend, groups, p, early if start is not None else None)
        dt = time.perf_counter() - t0
        times.sample_s += dt
        for group, out in zip(groups, outs):
            for i, ep in enumerate(group):
                if id(ep) in started:
                    continue
                ep.timings["generate_s"] += dt / size
                if isinstance(out, BaseException):
                    ep.fail(out, "inference")
                else:
                    actions.append((ep, out[i]))
    return actions


def _play(backend: InferenceBackend, eps: list[Episode], params: SamplingParams, pool: Executor,
          times: EngineTimes, between_turns: Callable[[], None] | None, limits: EpisodeLimits,
          cancelled: Callable[[], bool] | None, ckpt: CallCheckpointer | None,
          start: tuple[int, list[Episode], list[Episode]] | None) -> None:
    gate = Admission(eps, limits.max_sandbox_episodes, limits.verify_timeout_s)
    live: list[Episode] = []
    finishing: list[EnvCall] = []
    rounds = 0
    stream = limits.overlap_env_steps and bool(getattr(backend, "streams_prompts", False))
    if start is not None:  # resumed from a checkpoint: the saved round's live and waiting
        rounds, live, gate.waiting = start
        gate.live_sandboxed = sum(map(gate.sandboxed, live))
    while live or gate.waiting:
        if cancelled is not None and cancelled():
            for ep in live + gate.waiting:
                ep.cancel("the engine was asked to stop")
            live, gate.waiting = live + gate.waiting, []
        else:
            new = gate.take(anything_live=bool(live))
            t0 = time.perf_counter()
            run_all(pool, [(ep, ep.reset) for ep in new], "reset", limits.step_timeout_s)
            times.env_s += time.perf_counter() - t0
            live += new
            if rounds and between_turns is not None:
                between_turns()
            stepping: list[EnvCall] = []
            step = _stepper(backend, params, pool, stepping)
            actions = _turn(backend, [ep for ep in live if ep.live], params, times,
                            step if stream else None)
            for ep, c in actions:  # the actions no early hand-out started
                step(ep, c)
            t0 = time.perf_counter()
            wait_all(stepping, "step", limits.step_timeout_s)
            times.env_s += time.perf_counter() - t0
        for ep in [ep for ep in live if not ep.live]:
            finishing.append(call := EnvCall(ep, ep.finish).submit(pool))
            gate.ended(call)
        live = [ep for ep in live if ep.live]
        rounds += 1
        if ckpt is not None and rounds % ckpt.every == 0 and live and not (cancelled and cancelled()):
            for call in finishing:  # every ended episode verified: its record is final
                finished(call, limits.verify_timeout_s)
            gate.verifying.clear()  # (all done; a resumed call starts with none either)
            ckpt.save(eps, rounds, pool)
    t0 = time.perf_counter()
    for call in finishing:
        finished(call, limits.verify_timeout_s)
    times.verify_s += time.perf_counter() - t0


def _stepper(backend: InferenceBackend, params: SamplingParams, pool: Executor,
             started: list[EnvCall]) -> Callable[[Episode, Completion], None]:
    """Start an episode's env step on the pool (noted in ``started``); the action's text is
    decoded here, on the calling thread (the tokenizer is not shared with the pool)."""
    def step(ep: Episode, c: Completion) -> None:
        text = action_text(backend, c, params.stop)
        started.extend(submit_all(pool, [(ep, lambda: ep.step(c, text))]))
    return step


def play_groups(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams, *,
                limits: EpisodeLimits | None = None, make_env: EnvFactory | None = None,
                env_pool: Executor | None = None,
                between_turns: Callable[[], None] | None = None,
                cancelled: Callable[[], bool] | None = None,
                checkpoints: CheckpointStore | None = None, keep_checkpoint: bool = False,
                ) -> tuple[list[TrajectoryGroup], EngineTimes]:
    """``params.n`` scored episodes per task and the wall time of each stage (see above).

    ``cancelled``: polled before every round; once true, every episode not yet ended stops
    (``stop_reason`` and error kind ``cancelled``, not verified, env closed) and the call
    returns without another policy call.

    ``checkpoints``: with ``limits.checkpoint_every > 0``, the call's episodes are saved there
    every that many rounds under :func:`~posttrain.rollout.checkpoints.call_key` of the tasks,
    and a saved state under that key is taken up instead of starting over; the key is dropped
    when the call returns (``keep_checkpoint``: the caller drops it — the scheduler keeps it
    to resume a failed group) or kept when it was cancelled."""
    limits = limits or EpisodeLimits()
    make_env = make_env or env_factory(tasks)
    version = int(getattr(backend, "policy_version", 0))
    times = EngineTimes()
    def fresh() -> list[Episode]:
        return [_new_episode(t, make_env, limits) for t in tasks for _ in range(params.n)]

    eps = fresh()
    ckpt = start = None
    if checkpoints is not None and limits.checkpoint_every > 0:
        ckpt = CallCheckpointer(checkpoints, call_key(tasks, params.seed, params.n),
                             limits.checkpoint_every)
        try:
            start = ckpt.resume(eps)
        except RestoreFailed:
            eps = fresh()
    pool = env_pool or ThreadPoolExecutor(max(1, limits.env_workers), thread_name_prefix="env")
    try:
        _play(backend, eps, params, pool, times, between_turns, limits, cancelled, ckpt, start)
    finally:
        if env_pool is None:  # a hung, abandoned call must not hang the caller too
            pool.shutdown(wait=not any(ep.abandoned for ep in eps))
        for ep in eps:  # an exception above (a bug, KeyboardInterrupt) must not leak envs
            if ep.trajectory is None:
                ep._close()
    if ckpt is not None and not keep_checkpoint and not (cancelled and cancelled()):
        checkpoints.drop(ckpt.key)
    n = params.n
    trajs: list[Trajectory] = [ep.trajectory for ep in eps]  # type: ignore[misc]
    return [TrajectoryGroup(task=t, trajectories=tuple(trajs[i * n:(i + 1) * n]),
                            policy_version=version) for i, t in enumerate(tasks)], times


def run_groups(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams,
               make_env: EnvFactory | None = None,
               limits: EpisodeLimits | None = None) -> list[TrajectoryGroup]:
    """:func:`play_groups` without the stage times: one group per task, in order."""
    return play_groups(backend, tasks, params, limits=limits, make_env=make_env)[0]


def play_episode(backend: InferenceBackend, env: TaskEnv, params: SamplingParams,
                 limits: EpisodeLimits | None = None) -> Trajectory:
    """One episode of an env the caller built (``params.n`` is ignored: one sample)."""
    groups, _ = play_groups(backend, [env.task], replace(params, n=1), limits=limits,
                            make_env=lambda _task: env)
    return groups[0].trajectories[0]
