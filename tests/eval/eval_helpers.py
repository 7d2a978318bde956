"""Test doubles for the evaluation layer: an arithmetic 'oracle' backend and trajectory builders.

The oracle reads prompts like ``12+34=`` and answers them, except on a planted fraction of
prompts (chosen by a hash, so both sides of a comparison agree on which) where it answers
wrong. It implements the InferenceBackend protocol; the rollout and verifiers used with it are
the real ones.
"""

from __future__ import annotations

import hashlib
import re

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, Turn

_EXPR = re.compile(r"^\s*(-?\d+)\s*([+\-*])\s*(-?\d+)\s*=\s*$")


def _h(text: str, salt: str) -> float:
    return int(hashlib.sha256((salt + text).encode()).hexdigest()[:8], 16) / 2 ** 32


class OracleBackend:
    """Answers arithmetic prompts; wrong on prompts whose hash falls under ``wrong_rate``."""

    def __init__(self, wrong_rate: float = 0.0, sample_noise: float = 0.0, salt: str = "x"):
        self.wrong_rate = wrong_rate
        self.sample_noise = sample_noise
        self.salt = salt
        self.policy_version = 0
        self.calls = 0
        self.prompts_seen = 0

    def _answer(self, text: str, i: int) -> str:
        m = _EXPR.match(text)
        if not m:
            return "?"
        a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
        value = {"+": a + b, "-": a - b, "*": a * b}[op]
        wrong = _h(text, self.salt) < self.wrong_rate or _h(f"{text}#{i}", "noise") < self.sample_noise
        return str(value + 1 if wrong else value)

    def generate(self, prompts, params):
        self.calls += 1
        self.prompts_seen += len(prompts)
        out = []
        for p in prompts:
            text = p[-1]["content"]
            out.append([Completion(text=self._answer(text, i), token_ids_T=(1, 2), logprobs_T=(-0.1, -0.2))
                        for i in range(params.n)])
        return out

    def load_weights(self, version, weights):
        self.policy_version = version


def traj(domain="math.add-v1", seed=0, reward=1.0, *, difficulty=1, format_ok=None,
         tool_ok=None, error=None, score_error=None, stop="done", text="42", turns=1,
         components=None, wall=0.5, tokens=3):
    task = Task(domain=domain, seed=seed, difficulty=difficulty,
                prompt=({"role": "user", "content": "q"},))
    info = {}
    if format_ok is not None:
        info["format_ok"] = format_ok
    if tool_ok is not None:
        info["tool_calls_valid"] = tool_ok
    t = tuple(Turn(observation=Observation(messages=task.prompt),
                   action=Completion(text=text, token_ids_T=tuple(range(tokens)),
                                     logprobs_T=(0.0,) * tokens), info=info)
              for _ in range(turns))
    score = None
    if error is None or score_error is not None:
        score = Score(reward, components=components or {}, reason="r",
                      error=ErrorInfo("verifier", score_error) if score_error else None)
    err = ErrorInfo(*error) if error else None
    return Trajectory(task=task, turns=t, score=score, stop_reason=stop, error=err,
                      timings={"generate_s": wall / 2, "verify_s": wall / 2})
