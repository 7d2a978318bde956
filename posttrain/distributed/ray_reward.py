"""The reward service on Ray: verifier actors on CPU-only nodes.

:class:`VerifierActor` runs :func:`posttrain.rollout.reward_service.batch_evaluate` (domain
verifiers, learned reward models) with ``num_gpus=0`` and optional custom resources (e.g.
``{"cpu_node": 1}`` to pin it to CPU-only nodes). :class:`RayRewardService` splits a batch
into chunks spread round-robin over the actors and reassembles the Scores in order; it
satisfies :class:`posttrain.rollout.reward_service.RewardService` and pickles (actor handles
only), so rollout workers call it directly and verification never runs on the trainer.

Guarantees: one Score per trajectory, in order; an actor that dies fails only its chunk,
recorded as Scores with ``error`` (kind ``verifier``), never an exception in the caller.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import ray

from posttrain.core.types import Score, Trajectory
from posttrain.rollout.reward_service import RewardSource, batch_evaluate


@ray.remote(num_gpus=0)
class VerifierActor:
    def __init__(self, sources_factory: Callable[[], list[tuple[RewardSource, float]]] | None = None,
                 imports: tuple[str, ...] = ()):
        import importlib

        for mod in imports:
            importlib.import_module(mod)
        self.sources = sources_factory() if sources_factory is not None else None

    def batch_evaluate(self, trajectories: list[Trajectory]) -> list[Score]:
        return batch_evaluate(trajectories, self.sources)


def start_verifiers(n: int, *, num_cpus: float = 1.0, resources: dict[str, float] | None = None,
                    sources_factory: Any = None, imports: tuple[str, ...] = ()) -> list[Any]:
    return [VerifierActor.options(num_cpus=num_cpus, resources=resources or {}).remote(
        sources_factory, imports) for _ in range(n)]


class VerifierSources:
    """A picklable ``sources_factory``: the domain verifier through a given env factory."""

    def __init__(self, make_env: Any = None):
        self.make_env = make_env

    def __call__(self) -> list[tuple[RewardSource, float]]:
        from posttrain.rollout.reward_service import VerifierSource

        return [(VerifierSource(self.make_env), 1.0)]


class RayRewardService:
    def __init__(self, actors: Sequence[Any], chunk: int = 8):
        if not actors:
            raise ValueError("RayRewardService needs at least one verifier actor")
        self.actors, self.chunk = list(actors), max(1, chunk)

    def batch_evaluate(self, trajectories: Sequence[Trajectory]) -> list[Score]:
        trajs = list(trajectories)
        chunks = [trajs[i:i + self.chunk] for i in range(0, len(trajs), self.chunk)]
        refs = [self.actors[i % len(self.actors)].batch_evaluate.remote(c) for i, c in enumerate(chunks)]
        out: list[Score] = []
        for chunk, ref in zip(chunks, refs):
            try:
                out.extend(ray.get(ref))
            except ray.exceptions.RayError as exc:  # a lost verifier fails its chunk, recorded
                from posttrain.core.errors import VerifierError

                out.extend(Score.failure(VerifierError(f"verifier actor failed: {exc}"[:300]))
                           for _ in chunk)
        return out

    def close(self) -> None:
        """The actors belong to whoever started them (the pool kills them at its close)."""


class RayRewardFactory:
    """A picklable ``RolloutSettings.reward_factory`` that talks to running verifier actors."""

    def __init__(self, actors: Sequence[Any], chunk: int = 8):
        self.actors, self.chunk = list(actors), chunk

    def __call__(self) -> RayRewardService:
        return RayRewardService(self.actors, self.chunk)
