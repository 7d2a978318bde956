"""One episode's life inside the engine: reset, one step per policy turn, verify, close.

What it is: :class:`Episode` owns one env from ``reset`` through every ``step`` to
``verify`` on that same live env, and to ``close`` — the only place in posttrain where an
env is driven. :mod:`posttrain.rollout.engine` batches the policy calls of many episodes;
everything an episode does between two policy calls is here.

Each turn: the episode's context (prompt + history, compacted by
:class:`~posttrain.rollout.context.EpisodeContext` when too long) is the next prompt; the
sampled Completion goes to ``env.step`` with the text of its tokens (:func:`action_text`),
which is also what the history keeps, so with a tokenizer that round-trips (the built-in one does) and no
compaction, turn k+1's prompt ids extend turn k's prompt + action ids and the trainer builds
one row per episode.

Guarantees:
- stop reasons: ``done`` (the env ended it), ``max_tokens`` (the env ended it on a turn cut
  by the token cap, or the episode's action tokens reached ``limits.max_total_tokens``),
  ``max_turns`` (``limits.max_turns`` or the env's own budget), ``timeout`` (episode wall
  time, checked between turns: the policy ran out of time, a task outcome), ``cancelled``
  (the caller asked the engine to stop; error kind ``cancelled``), ``error`` (a failure at
  a boundary, recorded as :class:`~posttrain.core.errors.ErrorInfo` classified by
  :func:`~posttrain.core.errors.classify`; an env call or a verification that outlived its
  stage timeout is kind ``timeout``, an infrastructure failure the scheduler retries);
- ``verify`` runs on the live env, exactly once, after the last step; ``close`` runs
  whatever happened (once, or a second time to kill a sandbox whose call hung) (a failing close is counted in ``timings["close_failed"]``, never
  raised); an episode that failed is not verified (its trajectory carries the error);
- ``turn.info`` has ``format_ok`` (default: the turn ended on its own and is non-empty; an
  env's own value wins), ``finish_reason`` and ``context_compacted``; the trajectory's
  ``timings`` hold ``generate_s``, ``env_s``, ``verify_s``, ``wall_s``.

What it does not do: call the policy (the engine does), retry (the scheduler does).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from posttrain.core.errors import ErrorInfo, VerifierError, classify
from posttrain.core.images import attach_images
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, Turn
from posttrain.envs.base import TaskEnv, call_maybe_async

from .context import ContextConfig, EpisodeContext


@dataclass(frozen=True)
class EpisodeLimits:
    """Per-episode budgets (the run config's ``episode`` section); the per-turn token cap is
    ``SamplingParams.max_new_tokens``."""

    max_turns: int = 8
    max_total_tokens: int = 4096
    timeout_s: float = 300.0
    context: ContextConfig = field(default_factory=ContextConfig)
    env_workers: int = 4  # threads stepping/verifying envs (sandbox calls wait on I/O)
    max_sandbox_episodes: int = 8  # live sandboxed episodes at once: at most half the pool
    infra_retries: int = 2  # replays of a group whose episode hit an infrastructure failure
    retry_backoff_s: float = 0.5  # base of the exponential backoff between those replays
    step_timeout_s: float = 120.0  # one env reset/step call; longer: abandoned, kind "timeout"
    verify_timeout_s: float = 300.0  # one verification (and close); longer: abandoned likewise
    checkpoint_every: int = 4  # rounds between checkpoints of a call's episodes; 0: never
    overlap_env_steps: bool = True  # step an episode once its action is out, while the call decodes others


class BrokenEnv:
    """Stands in for an env whose construction failed, so the failure lands on the trajectory."""

    def __init__(self, task: Task, exc: BaseException):
        self.task, self._exc = task, exc

    def reset(self) -> Observation:
        raise self._exc

    def step(self, action: Completion) -> Any:
        raise self._exc

    def verify(self, trajectory: Trajectory) -> Score:
        return Score.failure(self._exc)


class Episode:
    """One env played to its end (see the module docstring)."""

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
        self.trajectory: Trajectory | None = None
        self._sealed = threading.Lock()  # the first of finish() and abandon() sets trajectory
        self.abandoned = False  # a call timed out: what the hung call does later is ignored
        self.resumed_at: int | None = None  # turns restored from a checkpoint

    @property
    def live(self) -> bool:
        return self.stop is None

    def fail(self, exc: BaseException, boundary: str) -> None:
        self.stop, self.error = "error", classify(exc, boundary)

    def timed_out(self, stage: str, seconds: float) -> None:
        """An env call of this episode outlived its stage timeout: the episode fails with kind
        ``timeout`` (infrastructure: the scheduler plays the group again)."""
        self.abandoned = True
        self.stop = "error"
        self.error = ErrorInfo("timeout", f"{stage} took longer than {seconds:g} s (abandoned)")

    def cancel(self, why: str) -> None:
        """End a live (or never started) episode: not verified, its env closed by finish()."""
        if self.live:
            self.stop, self.error = "cancelled", ErrorInfo("cancelled", why)

    def abandon(self, seconds: float) -> Trajectory:
        """The record of an episode whose finish() hung: a verifier timeout, not a Score of 0.
        Closes the env again (killing a sandbox unblocks the hung call); a finish() that ends
        later changes nothing."""
        self.abandoned = True
        with self._sealed:
            if self.trajectory is None:
                err = ErrorInfo("timeout", f"verification took longer than {seconds:g} s (abandoned)")
                self.timings["wall_s"] = time.perf_counter() - self.t0
                self.trajectory = Trajectory(
                    task=self.task, turns=tuple(self.turns), stop_reason=self.stop or "error",
                    error=self.error, timings=dict(self.timings),
                    score=Score(0.0, reason="verifier timed out", error=err))
        self._close()
        return self.trajectory

    def reset(self) -> None:
        t0 = time.perf_counter()
        try:
            self.obs = call_maybe_async(self.env.reset)
            self.tools = tuple(self.obs.tools)
            # An observation's images become image parts of its newest message (core/images.py).
            self.ctx = EpisodeContext(attach_images(self.obs.messages, self.obs.images),
                                      self.limits.context)
        except Exception as exc:  # the env boundary: a broken env is this episode's error
            if not self.abandoned:
                self.fail(exc, "env")
        finally:
            self.timings["env_s"] += time.perf_counter() - t0

    def prompt(self) -> list[dict[str, Any]]:
        messages, self.compacted = self.ctx.view()
        return messages

    def tokens_left(self) -> int:
        return self.limits.max_total_tokens - self.tokens

    def step(self, c: Completion, text: str) -> None:
        """Give one sampled action to the env; set ``stop`` when the episode ends.

        ``text`` is :func:`action_text` of ``c``: what the env reads and the history keeps
        (a stop string the backend cut is restored, so a closing tag is not lost)."""
        t0 = time.perf_counter()
        c = replace(c, text=text) if text != c.text else c
        try:
            res = call_maybe_async(self.env.step, c)
        except Exception as exc:  # the env boundary (a sandbox error keeps its own kind)
            if not self.abandoned:
                self.turns.append(Turn(self.obs, c, 0.0, {"finish_reason": c.finish_reason}))
                self.fail(exc, "env")
            return
        finally:
            self.timings["env_s"] += time.perf_counter() - t0
        if self.abandoned:  # the engine gave up on this call and already ended the episode
            return
        info = {"format_ok": c.finish_reason == "stop" and bool(c.text.strip()), **dict(res.info),
                "finish_reason": c.finish_reason, "context_compacted": self.compacted}
        if self.resumed_at is not None and len(self.turns) == self.resumed_at:
            info["resumed_from_turn"] = self.resumed_at  # the first turn after a checkpoint
        self.turns.append(Turn(self.obs, c, float(res.reward), info))
        self.tokens += len(c.token_ids_T)
        replies = tuple(res.observation.messages) if res.observation is not None else ()
        images = tuple(res.observation.images) if res.observation is not None else ()
        self.ctx.add_turn(text, attach_images(replies, images) if images else replies)
        self.obs = Observation(messages=replies, images=images)
        self.stop = self._stop_reason(res.done, info, c)

    def _stop_reason(self, done: bool, info: dict, c: Completion) -> str | None:
        lim = self.limits
        if done:
            if info.get("max_turns"):
                return "max_turns"
            return "max_tokens" if c.finish_reason == "length" else "done"
        if len(self.turns) >= lim.max_turns:
            return "max_turns"
        if self.tokens >= lim.max_total_tokens:
            return "max_tokens"
        if time.perf_counter() - self.t0 > lim.timeout_s:
            return "timeout"
        return None

    def finish(self) -> Trajectory:
        """Verify on the live env (unless the episode failed), close it, and build the record."""
        traj = Trajectory(task=self.task, turns=tuple(self.turns), stop_reason=self.stop or "error",
                          error=self.error)
        t0 = time.perf_counter()
        score: Score | None = None
        try:
            if self.error is None:
                score = call_maybe_async(self.env.verify, traj)
                if not isinstance(score, Score):
                    raise VerifierError(f"verify returned {type(score).__name__}, not Score")
        except Exception as exc:  # the verifier boundary: env.verify must not raise
            score = Score(0.0, reason="verifier crashed", error=classify(exc, "verifier"))
        finally:
            self.timings["verify_s"] = time.perf_counter() - t0
            self._close()
        with self._sealed:
            if self.trajectory is None:  # else abandon() already recorded a timeout
                self.timings["wall_s"] = time.perf_counter() - self.t0
                self.trajectory = replace(traj, score=score, timings=dict(self.timings))
        return self.trajectory

    # ------------------------------------------------------------------ checkpoints
    @property
    def checkpointable(self) -> bool:
        """Whether :meth:`saved` can record this episode now."""
        if self.trajectory is not None or self.ctx is None:
            return True  # ended (its record) or not started (nothing to keep)
        return callable(getattr(self.env, "checkpoint_state", None))

    def saved(self) -> tuple:
        """This episode for a checkpoint (:mod:`posttrain.rollout.checkpoints`): ``("done",
        trajectory)``, ``("waiting",)`` before its reset, or ``("live", state)``."""
        if self.trajectory is not None:
            return ("done", self.trajectory)
        if self.ctx is None:
            return ("waiting",)
        return ("live", {"turns": list(self.turns), "tokens": self.tokens, "ctx": self.ctx,
                         "obs": self.obs, "tools": self.tools, "timings": dict(self.timings),
                         "elapsed_s": time.perf_counter() - self.t0,
                         "env": self.env.checkpoint_state()})

    def restore(self, entry: tuple) -> None:
        """Take up :meth:`saved` output on this (fresh) episode; raises when the env cannot."""
        if entry[0] == "done":
            self.trajectory, self.stop = entry[1], entry[1].stop_reason
            self._close()
        elif entry[0] == "live":
            d = entry[1]
            call_maybe_async(self.env.reset)  # the env's own start, then its saved state on top
            self.env.restore_state(d["env"])
            self.turns, self.tokens, self.ctx = list(d["turns"]), d["tokens"], d["ctx"]
            self.ctx.config = self.limits.context
            self.obs, self.tools = d["obs"], tuple(d["tools"])
            self.timings = {**d["timings"], "checkpoint_resumed": 1.0}
            self.t0 = time.perf_counter() - d["elapsed_s"]
            self.resumed_at = len(self.turns)

    def _close(self) -> None:
        close = getattr(self.env, "close", None)
        if not callable(close):
            return
        try:
            call_maybe_async(close)
        except Exception:  # a sandbox that fails to close must not lose the episode
            self.timings["close_failed"] = 1.0


def action_text(backend: Any, c: Completion, stops: Sequence[str]) -> str:
    """The text of the action's tokens, as the history must hold it for prompts to extend.

    With a tokenizer: the decoded ids with special tokens kept (a sampled role token
    re-tokenises to itself) and a final eos dropped (the chat template adds it back); this
    also restores a stop string the backend cut from ``c.text``. Without one (the fake
    backend's byte ids, a scripted policy): ``c.text`` plus the cut stop string when the
    bytes decode.
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
