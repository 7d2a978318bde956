"""The multi-turn agent loop: episodes of policy turns, tool calls and env replies, batched.

What it is: ``run_episode(backend, env, params, limits)`` plays one episode;
``run_groups_multi(backend, tasks, params, make_env, limits)`` plays ``params.n`` episodes per
task and batches the policy calls of *all* live episodes into one ``backend.generate`` per
turn (one call per distinct tool list, since the tools are part of the rendered prompt).

Each turn: the episode's context (prompt + history, compacted by
:class:`~posttrain.rollout.context.EpisodeContext` when too long) → one Completion →
``env.step(completion)`` → StepResult (process reward, done, info with ``format_ok`` and
``tool_calls_valid``) → the env's reply messages join the history. At the end the env's
``verify`` gives the outcome Score and the env is closed.

Guarantees:
- stop reasons: ``done`` (the env ended it), ``max_turns`` (limit or the env's own budget),
  ``max_tokens`` (action tokens summed over turns reached ``limits.max_total_tokens``,
  checked after each turn), ``timeout`` (episode wall time, checked between turns),
  ``error`` (inference or env failure, recorded as ``ErrorInfo``; the rest of the batch goes
  on: a failed batched generate is retried prompt by prompt to isolate the bad one);
- each Turn keeps the Completion as sampled (``prompt_token_ids``, ``token_ids_T``,
  ``logprobs_T``, ``policy_version``) with ``text`` set to the decoding of its tokens
  (special tokens kept, stop strings restored, see :func:`_action_text`), and that text is the
  assistant message in the history — so, without compaction and with a tokenizer that
  round-trips (the built-in one does), turn k+1's prompt ids extend turn k's prompt + action
  ids and the trainer builds one row per episode;
- process rewards stay on the turns (``Turn.reward``), the outcome Score on the trajectory;
- the trajectory's ``timings`` hold ``generate_s``, ``env_s``, ``verify_s``, ``wall_s``;
  ``turn.info`` adds ``finish_reason`` and ``context_compacted``.

What it does not do: stream tokens, run episodes of one task in lock-step with one another
(live episodes of all tasks share each generate call instead), or retry failed tasks (the
scheduler does).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from posttrain.core.errors import ErrorInfo, InferenceError
from posttrain.core.types import (
    Completion, Observation, Score, Task, Trajectory, TrajectoryGroup, Turn,
)
from posttrain.envs.base import TaskEnv, call_maybe_async
from posttrain.inference.base import InferenceBackend, SamplingParams

from .context import ContextConfig, EpisodeContext

EnvFactory = Callable[[Task], TaskEnv]


@dataclass(frozen=True)
class EpisodeLimits:
    """Per-episode budgets; the per-turn token cap is ``SamplingParams.max_new_tokens``."""

    max_turns: int = 8
    max_total_tokens: int = 4096
    timeout_s: float = 300.0
    context: ContextConfig = field(default_factory=ContextConfig)
    env_workers: int = 4  # threads stepping/verifying envs (sandbox calls wait on I/O)


class _Episode:
    def __init__(self, task: Task, env: TaskEnv, limits: EpisodeLimits):
        self.task, self.env, self.limits = task, env, limits
        self.t0 = time.perf_counter()
        self.turns: list[Turn] = []
        self.tokens = 0
        self.stop: str | None = None
        self.error: ErrorInfo | None = None
        self.timings = {"generate_s": 0.0, "env_s": 0.0, "verify_s": 0.0}
        self.obs: Observation | None = None
        self.ctx: EpisodeContext | None = None
        self.compacted = False
        self.tools: tuple = ()  # the tool specs of reset(), offered on every turn
        try:
            self.obs = call_maybe_async(env.reset)
            self.tools = tuple(self.obs.tools)
            self.ctx = EpisodeContext(self.obs.messages, limits.context)
        except Exception as exc:  # a broken env is this episode's error, not the batch's
            self.fail(exc)

    def fail(self, exc: BaseException) -> None:
        self.stop, self.error = "error", ErrorInfo.from_exception(exc)

    def prompt(self) -> list[dict[str, Any]]:
        messages, self.compacted = self.ctx.view()
        return messages


def _action_text(backend: Any, c: Completion, stops: Sequence[str]) -> str:
    """The text of the action's tokens, as the history must hold it for prompts to extend.

    With a tokenizer: the decoded ids with special tokens kept (a sampled role token
    re-tokenises to itself) and a final eos dropped (the chat template adds it back); this
    also restores a stop string the backend cut from ``c.text``. Without one (the fake
    backend's byte ids): ``c.text`` plus the cut stop string when the bytes decode.
    """
    ids = list(c.token_ids_T)
    tok = getattr(backend, "tokenizer", None)
    if tok is not None and ids:
        try:
            if ids[-1] == getattr(tok, "eos_token_id", None):
                ids = ids[:-1]
            return tok.decode(ids, skip_special_tokens=False)
        except Exception:  # an exotic tokenizer: keep the backend's text
            return c.text
    if not stops or c.finish_reason != "stop" or not ids:
        return c.text
    try:
        full = bytes(ids).decode("utf-8")
    except (ValueError, TypeError):
        return c.text
    return full if full.startswith(c.text) else c.text


def _generate(backend: InferenceBackend, eps: list[_Episode], params: SamplingParams
              ) -> list[Completion | BaseException]:
    """One completion per episode: one call per tool list; failures isolated per prompt."""
    out: list[Completion | BaseException] = [InferenceError("not generated")] * len(eps)
    by_tools: dict[str, list[int]] = {}
    for i, ep in enumerate(eps):
        by_tools.setdefault(json.dumps(ep.tools, sort_keys=True, default=str), []).append(i)
    for idx in by_tools.values():
        left = min(params.max_new_tokens,
                   max(eps[i].limits.max_total_tokens - eps[i].tokens for i in idx))
        p = replace(params, n=1, tools=eps[idx[0]].tools, max_new_tokens=max(1, left))
        prompts = [eps[i].prompt() for i in idx]
        try:
            got = backend.generate(prompts, p)
            if len(got) != len(idx) or any(len(g) != 1 for g in got):
                raise InferenceError(f"backend returned {len(got)} groups for {len(idx)} prompts")
            for i, g in zip(idx, got):
                out[i] = g[0]
        except Exception as exc:
            if len(idx) == 1:
                out[idx[0]] = exc
                continue
            for i, prompt in zip(idx, prompts):  # isolate the prompt that broke the batch
                try:
                    out[i] = backend.generate([prompt], p)[0][0]
                except Exception as one:
                    out[i] = one
    return out


def _step(ep: _Episode, c: Completion, text: str) -> None:
    t0 = time.perf_counter()
    action = replace(c, text=text) if text != c.text else c
    try:
        res = call_maybe_async(ep.env.step, action)
    except Exception as exc:
        ep.turns.append(Turn(ep.obs, action, 0.0, {"finish_reason": c.finish_reason}))
        ep.fail(exc)
        return
    finally:
        ep.timings["env_s"] += time.perf_counter() - t0
    info = {**dict(res.info), "finish_reason": c.finish_reason, "context_compacted": ep.compacted}
    ep.turns.append(Turn(ep.obs, action, float(res.reward), info))
    ep.tokens += len(c.token_ids_T)
    replies = tuple(res.observation.messages) if res.observation is not None else ()
    ep.ctx.add_turn(text, replies)
    ep.obs = Observation(messages=replies)
    lim = ep.limits
    if res.done:
        ep.stop = "max_turns" if info.get("max_turns") else "done"
    elif len(ep.turns) >= lim.max_turns:
        ep.stop = "max_turns"
    elif ep.tokens >= lim.max_total_tokens:
        ep.stop = "max_tokens"
    elif time.perf_counter() - ep.t0 > lim.timeout_s:
        ep.stop = "timeout"


def _finish(ep: _Episode) -> Trajectory:
    traj = Trajectory(task=ep.task, turns=tuple(ep.turns), stop_reason=ep.stop or "error",
                      error=ep.error)
    t0 = time.perf_counter()
    score: Score | None = None
    try:
        if ep.error is None:
            score = call_maybe_async(ep.env.verify, traj)
            if not isinstance(score, Score):
                raise TypeError(f"verify returned {type(score).__name__}, not Score")
    except Exception as exc:  # env.verify must not raise; if it does, it is the verifier's error
        score = Score.failure(exc)
    finally:
        close = getattr(ep.env, "close", None)
        if callable(close):
            try:
                call_maybe_async(close)
            except Exception:  # a sandbox that fails to close must not lose the episode
                pass
    ep.timings["verify_s"] = time.perf_counter() - t0
    timings = {**ep.timings, "wall_s": time.perf_counter() - ep.t0}
    return replace(traj, score=score, timings=timings)


def _play(backend: InferenceBackend, eps: list[_Episode], params: SamplingParams,
          workers: int) -> list[Trajectory]:
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while True:
            live = [ep for ep in eps if ep.stop is None]
            if not live:
                break
            t0 = time.perf_counter()
            outs = _generate(backend, live, params)
            gen_s = (time.perf_counter() - t0) / len(live)
            jobs = []
            for ep, c in zip(live, outs):
                ep.timings["generate_s"] += gen_s
                if isinstance(c, BaseException):
                    ep.fail(c)
                    continue
                jobs.append(pool.submit(_step, ep, c, _action_text(backend, c, params.stop)))
            for j in jobs:
                j.result()
        return list(pool.map(_finish, eps))


def run_episode(backend: InferenceBackend, env: TaskEnv, params: SamplingParams,
                limits: EpisodeLimits | None = None) -> Trajectory:
    """Play one episode of ``env`` (``params.n`` is ignored: one sample) and verify it."""
    limits = limits or EpisodeLimits()
    ep = _Episode(env.task, env, limits)
    return _play(backend, [ep], params, 1)[0]


def run_groups_multi(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams,
                     make_env: EnvFactory | None = None,
                     limits: EpisodeLimits | None = None) -> list[TrajectoryGroup]:
    """``params.n`` episodes per task, all played together; one group per task, in order."""
    from .single_turn import default_env_factory

    make_env = make_env or default_env_factory
    limits = limits or EpisodeLimits()
    version = int(getattr(backend, "policy_version", 0))
    eps: list[_Episode] = []
    for task in tasks:
        for _ in range(params.n):
            try:
                env = make_env(task)
            except Exception as exc:
                env = _BrokenEnv(task, exc)
            eps.append(_Episode(task, env, limits))
    trajs = _play(backend, eps, params, limits.env_workers)
    n = params.n
    return [TrajectoryGroup(task=t, trajectories=tuple(trajs[i * n:(i + 1) * n]),
                            policy_version=version) for i, t in enumerate(tasks)]


class _BrokenEnv:
    """Stands in for an env whose construction failed, so the failure lands on the trajectory."""

    def __init__(self, task: Task, exc: BaseException):
        self.task, self._exc = task, exc

    def reset(self) -> Observation:
        raise self._exc

    def step(self, action: Completion) -> Any:
        raise self._exc

    def verify(self, trajectory: Trajectory) -> Score:
        return Score.failure(self._exc)


# The name the evaluation runner imports for multi-turn domains.
run_groups = run_groups_multi
