"""posttrain.eval: the evaluation that decides what ships (DESIGN.md §7).

Public entry points (importing this package is cheap; heavier modules load on use):

- :func:`pass_at_k`, :func:`pass_hat_k` — unbiased multi-attempt estimators;
- :mod:`posttrain.eval.runner` — ``evaluate(backend, domains, regression_set, spec, out_dir)``;
- :mod:`posttrain.eval.compare` — ``compare_evals(base_dir, new_dir)``, the regression gate;
- :mod:`posttrain.eval.report` / :mod:`posttrain.eval.run_report` — the HTML reports;
- :mod:`posttrain.eval.tracking` — ``MetricsWriter`` (metrics.jsonl, TensorBoard, W&B, MLflow);
- :mod:`posttrain.eval.audit` / :mod:`posttrain.eval.probes` — the audit channel.
"""

from .estimators import pass_at_k, pass_hat_k

__all__ = ["pass_at_k", "pass_hat_k"]
