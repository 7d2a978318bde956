"""Where metrics go: ``metrics.jsonl`` always, TensorBoard by default, W&B or MLflow on request.

``MetricsWriter(run_dir).log(step, {"reward/math.add-v1": 0.7, ...})`` appends one JSON line
``{"step": ..., "time": ..., <key>: <value>}`` to ``run_dir/metrics.jsonl`` (the file the run
report is drawn from) and writes the same scalars as TensorBoard events under
``run_dir/tensorboard`` (``tensorboard --logdir run_dir/tensorboard``).

Weights & Biases and MLflow are optional: pass ``wandb={"project": ...}`` or
``mlflow={"experiment": ...}``; each is imported only then, and a missing package raises
:class:`~posttrain.core.errors.MissingExtraError` naming what to install.

Guarantees: keys must be namespaced (``group/name``, DESIGN.md §8) and values finite numbers,
otherwise :class:`ValueError` names the bad key; each line is flushed as written, so a crashed
run keeps every logged step. It does not aggregate or smooth anything.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Mapping

from posttrain.core.errors import MissingExtraError


def _check(metrics: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in metrics.items():
        if "/" not in key or key.startswith("/") or key.endswith("/"):
            raise ValueError(f"metric key {key!r} is not namespaced; use 'group/name' "
                             "(e.g. 'reward/math.add-v1', 'loss/policy')")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"metric {key!r} must be a finite number, got {value!r}")
        out[key] = float(value)
    return out


class MetricsWriter:
    """Append-only metric sink for a run or an evaluation folder."""

    def __init__(self, run_dir: str | Path, tensorboard: bool = True,
                 wandb: Mapping[str, Any] | None = None, mlflow: Mapping[str, Any] | None = None):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # Optional trackers first: a missing extra must fail before any file is opened.
        self._wandb = self._start_wandb(wandb) if wandb is not None else None
        self._mlflow = self._start_mlflow(mlflow) if mlflow is not None else None
        self._tb = None
        if tensorboard:
            from tensorboard.summary import Writer

            self._tb = Writer(str(self.run_dir / "tensorboard"))
        self._jsonl = (self.run_dir / "metrics.jsonl").open("a")

    @staticmethod
    def _start_wandb(opts: Mapping[str, Any]) -> Any:
        try:
            import wandb
        except ImportError as exc:
            raise MissingExtraError("wandb", "wandb") from exc
        wandb.init(**dict(opts))
        return wandb

    @staticmethod
    def _start_mlflow(opts: Mapping[str, Any]) -> Any:
        try:
            import mlflow
        except ImportError as exc:
            raise MissingExtraError("mlflow", "mlflow") from exc
        opts = dict(opts)
        if "tracking_uri" in opts:
            mlflow.set_tracking_uri(opts.pop("tracking_uri"))
        if "experiment" in opts:
            mlflow.set_experiment(opts.pop("experiment"))
        mlflow.start_run(**opts)
        return mlflow

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        values = _check(metrics)
        self._jsonl.write(json.dumps({"step": int(step), "time": time.time(), **values}) + "\n")
        self._jsonl.flush()
        if self._tb is not None:
            for key, v in values.items():
                self._tb.add_scalar(key, v, step=int(step))
            self._tb.flush()
        if self._wandb is not None:
            self._wandb.log(values, step=int(step))
        if self._mlflow is not None:
            # MLflow forbids some characters in keys ('@'); keep the namespace, swap the rest.
            self._mlflow.log_metrics({k.replace("@", "_at_"): v for k, v in values.items()},
                                     step=int(step))

    def close(self) -> None:
        self._jsonl.close()
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()
        if self._mlflow is not None:
            self._mlflow.end_run()

    def __enter__(self) -> "MetricsWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def eval_metrics(results: Mapping[str, Any]) -> dict[str, float]:
    """The namespaced scalars of an evaluation: ``eval/<domain>/pass@k`` and friends."""
    out: dict[str, float] = {}
    scopes = {**{d: s for d, s in results["domains"].items()}, "overall": results["overall"]}
    for name, s in scopes.items():
        for k, iv in s["pass@k"].items():
            if iv is not None:
                out[f"eval/{name}/pass@{k}"] = iv["value"]
        for k, v in s["pass^k"].items():
            if v is not None:
                out[f"eval/{name}/pass^{k}"] = v
        if s["mean_reward"] is not None:
            out[f"eval/{name}/mean_reward"] = s["mean_reward"]["value"]
        for layer, m in s["layers"].items():
            if m["rate"] is not None:
                out[f"eval/{name}/layer_{layer}"] = m["rate"]
    return out
