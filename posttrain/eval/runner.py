"""The evaluation runner: a regression set × a backend → samples, results and a report.

``evaluate`` plays ``n`` episodes per item with the *same* episode engine, budgets and
verifiers as training (:func:`posttrain.scheduler.rollouts.play_scheduled` over each domain's
env: the one engine, with infrastructure retries resumed from episode checkpoints), classifies every sample
into layers, and writes to ``out_dir``:

- ``samples.jsonl``   one :class:`~posttrain.eval.samples.SampleRecord` per sample;
- ``images/``         each image a visual episode saw, once (``<sha256>.png``);
- ``regression_set.json``  the exact items (so a later ``compare`` can pair them);
- ``results.json``    meta (model, weights id, sampling, ks) + per-domain and overall
  summaries (:mod:`posttrain.eval.aggregate`);
- ``report.html``     the self-contained report (:mod:`posttrain.eval.report`).

Reuse: ``reuse`` maps a task key to trajectories already generated (a training group's
samples); those items are not generated again. Guarantees: ``k > n`` fails before any
generation; an item's samples all come from one source; a failed rollout is recorded on its
samples (status ``error``), never aborting the evaluation.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.errors import ConfigError
from posttrain.core.images import ImageStore, internalize
from posttrain.core.serde import from_dict
from posttrain.core.types import Task, Trajectory, TrajectoryGroup
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.rollouts import play_scheduled

from .aggregate import summarize_all
from .regression import RegressionSet
from .samples import SampleRecord, record_from_trajectory, write_samples

RolloutFn = Callable[..., list[TrajectoryGroup]]
SCHEMA = "posttrain.eval/v1"


@dataclass(frozen=True)
class EvalSpec:
    """How to sample and score: n samples per item, the ks to report, the success threshold."""

    n: int = 8
    ks: tuple[int, ...] = (1, 4, 8)
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 16
    seed: int = 0
    threshold: float = 1.0
    batch_tasks: int = 32
    extra: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        if self.n < 1:
            raise ConfigError(f"n must be >= 1, got {self.n}")
        bad = [k for k in self.ks if k < 1 or k > self.n]
        if bad:
            raise ConfigError(f"k={bad} needs at least that many samples per item but n={self.n}; "
                              f"pass --n {max(bad)} or drop those ks (pass@k is undefined for n < k)")

    def params(self) -> SamplingParams:
        return SamplingParams(n=self.n, temperature=self.temperature, top_p=self.top_p,
                              max_new_tokens=self.max_new_tokens, seed=self.seed)


def is_long_horizon(domain: Any) -> bool:
    return domain.family == "long_horizon" or domain.env_kind != "single_turn"


def load_reusable_groups(path: str | Path, policy_version: int | None = None
                         ) -> dict[str, list[Trajectory]]:
    """Task key → trajectories from a JSONL of TrajectoryGroups (a training run's samples).

    With ``policy_version`` only groups sampled by that version are kept: samples of other
    weights must never stand in for the model under evaluation.
    """
    out: dict[str, list[Trajectory]] = {}
    images = ImageStore(Path(path).parent / "images")  # where a run stored the groups' images
    with Path(path).open() as f:
        for line in f:
            if not line.strip():
                continue
            g = from_dict(TrajectoryGroup, internalize(json.loads(line), images))
            if policy_version is not None and g.policy_version != policy_version:
                continue
            out.setdefault(g.task.key, []).extend(g.trajectories)
    return out


def _generate(backend: InferenceBackend, tasks: list[Task], dom: Any, spec: EvalSpec,
              rollout: RolloutFn | None, limits: EpisodeLimits | None) -> list[list[Trajectory]]:
    from posttrain.envs.factory import make_env as factory

    def make_env(task: Task, _dom: Any = dom) -> Any:
        return factory(_dom, task)

    out: list[list[Trajectory]] = []
    params = spec.params()
    for i in range(0, len(tasks), spec.batch_tasks):
        chunk = tasks[i:i + spec.batch_tasks]
        p = replace(params, seed=spec.seed + i)
        groups = (rollout(backend, chunk, p, make_env=make_env) if rollout is not None
                  else play_scheduled(backend, chunk, p, make_env=make_env, limits=limits)[0])
        out.extend(list(g.trajectories) for g in groups)
    return out


def collect_records(backend: InferenceBackend, domains: Mapping[str, Any], rset: RegressionSet,
                    spec: EvalSpec, reuse: Mapping[str, list[Trajectory]] | None = None,
                    rollout: RolloutFn | None = None, limits: EpisodeLimits | None = None,
                    images: ImageStore | None = None) -> tuple[list[SampleRecord], dict]:
    """Generate (or reuse) ``spec.n`` samples per item and classify them."""
    spec.check()
    records: list[SampleRecord] = []
    stats = {"reused_items": 0, "generated_items": 0}
    for domain_id in rset.domains:
        dom = domains.get(domain_id)
        if dom is None or dom.id != domain_id:
            raise ConfigError(f"regression set needs domain {domain_id!r} (exact version); "
                              f"available: {', '.join(sorted(domains)) or 'none'}")
        tasks = rset.domain_tasks(dom)
        trajs: dict[str, list[Trajectory]] = {}
        for t in tasks:
            have = (reuse or {}).get(t.key, [])
            if len(have) >= spec.n:
                trajs[t.key] = list(have[:spec.n])
        todo = [t for t in tasks if t.key not in trajs]
        stats["reused_items"] += len(trajs)
        stats["generated_items"] += len(todo)
        if todo:
            for t, ts in zip(todo, _generate(backend, todo, dom, spec, rollout, limits)):
                trajs[t.key] = ts
        lh = is_long_horizon(dom)
        for t in tasks:
            records.extend(record_from_trajectory(tr, i, spec.threshold, lh, images)
                           for i, tr in enumerate(trajs[t.key]))
    return records, stats


def evaluate(backend: InferenceBackend, domains: Mapping[str, Any], rset: RegressionSet,
             spec: EvalSpec, out_dir: str | Path, meta: Mapping[str, Any] | None = None,
             reuse: Mapping[str, list[Trajectory]] | None = None,
             rollout: RolloutFn | None = None, report: bool = True,
             limits: EpisodeLimits | None = None) -> dict:
    """Run the evaluation and write samples, results and (by default) the HTML report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    records, stats = collect_records(backend, domains, rset, spec, reuse, rollout, limits,
                                     images=ImageStore(out / "images"))
    write_samples(out / "samples.jsonl", records)
    rset.save(out / "regression_set.json")
    results = {"schema": SCHEMA,
               "meta": {**dict(meta or {}), "spec": {**asdict(spec), "ks": list(spec.ks)},
                        "regression_set": {"name": rset.name, "hashes": rset.hashes()},
                        "created_at": time.time(), "wall_s": time.perf_counter() - t0,
                        "policy_version": int(getattr(backend, "policy_version", 0)),
                        **stats, **_cache_stats(backend)},
               **summarize_all(records, spec.ks, seed=spec.seed)}
    (out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    if report:
        from .report import render_eval_report

        render_eval_report(out)
    return results


def _cache_stats(backend: Any) -> dict:
    if hasattr(backend, "hits"):
        return {"cache": {"hits": backend.hits, "misses": backend.misses,
                          "weights_id": getattr(backend, "weights_id", None)}}
    return {}


def load_results(eval_dir: str | Path) -> dict:
    p = Path(eval_dir) / "results.json"
    if not p.is_file():
        raise ConfigError(f"{str(eval_dir)!r} is not an evaluation folder (no results.json)")
    return json.loads(p.read_text())


def ks_from_text(text: str | Sequence[int]) -> tuple[int, ...]:
    if not isinstance(text, str):
        return tuple(sorted({int(k) for k in text}))
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise ConfigError(f"--k must be comma-separated integers like 1,4,8; got {text!r}") from None
    if not ks or ks[0] < 1:
        raise ConfigError(f"--k needs integers >= 1; got {text!r}")
    return tuple(ks)
