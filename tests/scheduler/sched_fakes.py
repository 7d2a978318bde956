"""Small real records for scheduler tests (no model, no domain library)."""

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, TrajectoryGroup, Turn


def task(domain="math.t-v1", seed=0, difficulty=1):
    return Task(domain=domain, seed=seed, difficulty=difficulty,
                prompt=({"role": "user", "content": f"q{seed}"},))


def traj(t, reward, tokens=(1, 2), *, finish="stop", stop="done", error=None, score_error=False):
    comp = Completion(text="a", token_ids_T=tuple(tokens), logprobs_T=tuple(-0.1 for _ in tokens),
                      finish_reason=finish)
    turn = Turn(observation=Observation(messages=t.prompt), action=comp)
    score = Score.failure(RuntimeError("verifier crashed")) if score_error else Score(reward)
    return Trajectory(task=t, turns=(turn,), score=score, stop_reason=stop,
                      error=ErrorInfo(*error) if error else None)


def group(t, rewards, tokens=None):
    tokens = tokens or [(i + 1, 7) for i in range(len(rewards))]
    return TrajectoryGroup(task=t, trajectories=tuple(traj(t, r, tk) for r, tk in zip(rewards, tokens)))
