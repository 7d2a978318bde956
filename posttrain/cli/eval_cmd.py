"""``posttrain eval``: evaluate a model, gate a release, audit a run.

- ``eval run --model PATH --domains SPEC --n N --k 1,4,8 --out DIR`` (also the bare
  ``posttrain eval --model ...``) → ``DIR/results.json``, ``samples.jsonl``,
  ``regression_set.json``, ``report.html``, ``metrics.jsonl`` + TensorBoard events;
- ``eval compare BASE NEW [--fail-on-regression]`` → ``NEW/compare.json``; exit 1 on a
  significant regression with the flag (for CI);
- ``eval regression-set --domains SPEC --per-domain N --out FILE`` → a stored regression set;
- ``eval report DIR`` → (re)render the HTML report of an evaluation or a training run;
- ``eval audit RUN --domain D [--marks FILE | --mark ID]`` → the audit queue in the report;
  marks become exploit probes; ``eval probes --domain D`` re-checks them (exit 1 on a leak).

With ``--json`` a command prints one JSON document on stdout. Errors print one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer

from posttrain.core.errors import ConfigError, PosttrainError

app = typer.Typer(no_args_is_help=False, add_completion=False, pretty_exceptions_enable=False,
                  invoke_without_command=True)


def _die(msg: str, code: int = 2) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _emit(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, default=str))


def _run(model: Optional[str], domains: Optional[str], n: int, k: str, out: Path, backend: str,
         base_url: Optional[str], served_model: Optional[str], model_version: Optional[str],
         per_domain: int, seed: int, regression_set: Optional[Path], temperature: float,
         top_p: float, max_new_tokens: int, threshold: float, cache: Optional[Path], no_cache: bool,
         reuse_groups: Optional[Path], reuse_version: Optional[int], fake_script: Optional[str],
         wandb: Optional[str], mlflow: Optional[str], as_json: bool, max_turns: int = 8) -> None:
    from posttrain.eval.cache import CachingBackend, GenerationCache
    from posttrain.eval.probes import default_probes_dir
    from posttrain.eval.regression import RegressionSet, build_regression_set
    from posttrain.eval.runner import EvalSpec, evaluate, ks_from_text, load_reusable_groups
    from posttrain.eval.select import SCRIPTED, build_backend, resolve_domains, scripted_backend
    from posttrain.eval.tracking import MetricsWriter, eval_metrics

    ks = ks_from_text(k)
    spec = EvalSpec(n=n, ks=ks, temperature=temperature, top_p=top_p,
                    max_new_tokens=max_new_tokens, seed=seed, threshold=threshold)
    spec.check()  # before loading a model
    if regression_set is not None:
        rset = RegressionSet.load(regression_set)
        doms = resolve_domains(",".join(rset.domains))
    elif domains:
        doms = resolve_domains(domains)
        rset = build_regression_set(doms.values(), per_domain=per_domain, seed=seed)
    else:
        raise PosttrainError("give --domains SPEC or --regression-set FILE")
    if backend in SCRIPTED:
        be, meta = scripted_backend(backend, doms, rset)
    else:
        be, meta = build_backend(backend, model, base_url, served_model, model_version, fake_script)
    if not no_cache and meta.get("weights_id"):
        store = cache or default_probes_dir().parent / "cache" / "generations.sqlite"
        be = CachingBackend(be, GenerationCache(store), meta["weights_id"])
    reuse = load_reusable_groups(reuse_groups, reuse_version) if reuse_groups else None
    from posttrain.rollout import EpisodeLimits

    if max_turns < 1:
        raise ConfigError(f"--max-turns: got {max_turns}; allowed: an integer >= 1")
    results = evaluate(be, doms, rset, spec, out, meta=meta, reuse=reuse,
                       limits=EpisodeLimits(max_turns=max_turns))
    tracking = {"wandb": {"project": wandb} if wandb else None,
                "mlflow": {"experiment": mlflow} if mlflow else None}
    with MetricsWriter(out, **tracking) as w:
        w.log(results["meta"]["policy_version"], eval_metrics(results))
    if as_json:
        _emit(results)
        return
    for d, s in list(results["domains"].items()) + [("overall", results["overall"])]:
        cells = "  ".join(f"pass@{kk}={s['pass@k'][str(kk)]['value']:.3f}" for kk in ks
                          if s["pass@k"][str(kk)] is not None)
        typer.echo(f"{d:32s} tasks={s['tasks']:<5d} errors={s['errors']:<4d} {cells}")
    typer.echo(f"report: {Path(out) / 'report.html'}")


_RUN_OPTS: dict[str, Any] = dict(
    model=typer.Option(None, "--model", help="local HF causal LM folder (or served model name)"),
    domains=typer.Option(None, "--domains", help="ids, families or 'all', comma-separated"),
    n=typer.Option(8, "--n", help="samples per item"),
    k=typer.Option("1,4,8", "--k", help="comma-separated ks for pass@k (each <= n)"),
    out=typer.Option(Path("runs/eval"), "--out", help="output folder"),
    backend=typer.Option("hf", "--backend", help="hf | openai | vllm | fake | reference | wrong "
                         "(reference/wrong: each domain's scripted reference episode, or a policy "
                         "that gives up)"),
    base_url=typer.Option(None, "--base-url", help="OpenAI-compatible server URL"),
    served_model=typer.Option(None, "--served-model", help="model name on the server"),
    model_version=typer.Option(None, "--model-version", help="weights identity of a served model (enables the cache)"),
    per_domain=typer.Option(50, "--per-domain", help="items per domain when no --regression-set"),
    seed=typer.Option(0, "--seed"),
    regression_set=typer.Option(None, "--regression-set", help="a stored regression set (JSON)"),
    temperature=typer.Option(1.0, "--temperature"),
    top_p=typer.Option(1.0, "--top-p"),
    max_new_tokens=typer.Option(16, "--max-new-tokens"),
    max_turns=typer.Option(8, "--max-turns", help="policy turns per episode (the episode: default)"),
    threshold=typer.Option(1.0, "--threshold", help="a sample succeeds when reward >= threshold"),
    cache=typer.Option(None, "--cache", help="generation cache file (default $POSTTRAIN_HOME/cache)"),
    no_cache=typer.Option(False, "--no-cache"),
    reuse_groups=typer.Option(None, "--reuse-groups", help="JSONL of TrajectoryGroups to reuse"),
    reuse_version=typer.Option(None, "--reuse-version", help="only reuse groups of this policy version"),
    fake_script=typer.Option(None, "--fake-script", help="JSON replies for --backend fake"),
    wandb=typer.Option(None, "--wandb", help="also log to this Weights & Biases project"),
    mlflow=typer.Option(None, "--mlflow", help="also log to this MLflow experiment"),
    as_json=typer.Option(False, "--json"),
)


_RUN_TYPES: dict[str, Any] = {
    "n": int, "k": str, "out": Path, "backend": str, "per_domain": int, "seed": int,
    "regression_set": Optional[Path], "temperature": float, "top_p": float,
    "max_new_tokens": int, "max_turns": int, "threshold": float, "cache": Optional[Path], "no_cache": bool,
    "reuse_groups": Optional[Path], "reuse_version": Optional[int], "as_json": bool,
}


def _guarded(fn: Any, **kw: Any) -> None:
    try:
        fn(**kw)
    except (PosttrainError, FileNotFoundError) as exc:
        _die(str(exc))


def _with_run_opts(fn: Any) -> Any:
    """Give ``fn`` the shared run options (typer reads them from the defaults)."""
    import inspect

    params = [p for p in inspect.signature(fn).parameters.values()
              if p.name not in _RUN_OPTS and p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt,
                                 annotation=_RUN_TYPES.get(name, Optional[str]))
               for name, opt in _RUN_OPTS.items()]
    fn.__signature__ = inspect.Signature(params)
    return fn


@app.callback()
@_with_run_opts
def main(ctx: typer.Context, **kw: Any) -> None:
    """Evaluate models: pass@k, layers, regression gate. `posttrain eval --model PATH ...` = `eval run`."""
    if ctx.invoked_subcommand is not None:
        return
    if kw["model"] is None and kw["domains"] is None and kw["regression_set"] is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    _guarded(_run, **kw)


@app.command("run")
@_with_run_opts
def run(**kw: Any) -> None:
    """Evaluate a model on a regression set; write results, samples and the HTML report."""
    _guarded(_run, **kw)


@app.command("compare")
def compare(base: Path = typer.Argument(..., help="evaluation folder of the base version"),
            new: Path = typer.Argument(..., help="evaluation folder of the candidate"),
            fail_on_regression: bool = typer.Option(False, "--fail-on-regression"),
            alpha: float = typer.Option(0.05, "--alpha"),
            margin: float = typer.Option(0.0, "--margin", help="ignore drops smaller than this"),
            metric: str = typer.Option("success", "--metric", help="success | reward"),
            as_json: bool = typer.Option(False, "--json")) -> None:
    """Paired comparison of two evaluations; exit 1 on a significant regression with the flag."""
    from posttrain.eval.compare import compare_evals, write_compare
    from posttrain.eval.report import render_eval_report

    try:
        res = compare_evals(base, new, alpha=alpha, margin=margin, metric=metric)
        write_compare(res, Path(new) / "compare.json")
        render_eval_report(new)
    except PosttrainError as exc:
        _die(str(exc))
    if as_json:
        _emit(res)
    else:
        for d, v in list(res["domains"].items()) + [("overall", res["overall"])]:
            tag = "REGRESSION" if v["regression"] else "ok"
            typer.echo(f"{d:32s} delta={v['delta']:+.3f} [{v['low']:+.3f}, {v['high']:+.3f}] "
                       f"p={v.get('p_adjusted', v['p_regression']):.4f} {tag}")
        typer.echo("gate: FAIL" if res["regression"] else "gate: pass")
    if res["regression"] and fail_on_regression:
        raise typer.Exit(1)


@app.command("regression-set")
def regression_set_cmd(domains: str = typer.Option(..., "--domains"),
                       per_domain: int = typer.Option(50, "--per-domain"),
                       seed: int = typer.Option(0, "--seed"),
                       version: int = typer.Option(1, "--version"),
                       name: str = typer.Option("regression", "--name"),
                       out: Path = typer.Option(..., "--out")) -> None:
    """Build and store a fixed, seeded, versioned regression set."""
    from posttrain.eval.regression import build_regression_set
    from posttrain.eval.select import resolve_domains

    try:
        rset = build_regression_set(resolve_domains(domains).values(), per_domain, seed,
                                    name=name, version=version)
    except PosttrainError as exc:
        _die(str(exc))
    typer.echo(str(rset.save(out)))


@app.command("report")
def report(folder: Path = typer.Argument(..., help="an evaluation or training-run folder")) -> None:
    """(Re)render the self-contained HTML report of an evaluation or a training run."""
    from posttrain.eval.report import render_eval_report
    from posttrain.eval.run_report import render_run_report

    try:
        path = render_eval_report(folder) if (folder / "results.json").is_file() \
            else render_run_report(folder)
    except PosttrainError as exc:
        _die(str(exc))
    typer.echo(str(path))


@app.command("audit")
def audit(run_dir: Path = typer.Argument(..., help="a run or evaluation folder"),
          domain: str = typer.Option(..., "--domain"),
          high_reward: int = typer.Option(20, "--high-reward", help="high-reward samples to queue"),
          threshold: float = typer.Option(1.0, "--threshold"),
          marks: Optional[Path] = typer.Option(None, "--marks", help="audit-marks.json exported from the report"),
          mark: List[str] = typer.Option([], "--mark", help="an audit item id to mark as reward hacking"),
          note: str = typer.Option("", "--note"),
          probes_dir: Optional[Path] = typer.Option(None, "--probes-dir"),
          as_json: bool = typer.Option(False, "--json")) -> None:
    """Queue trajectories for human review; marked ones become exploit probes of the domain."""
    from posttrain.eval.audit import build_audit, write_audit
    from posttrain.eval.probes import apply_marks

    try:
        if marks is None and not mark:
            write_audit(run_dir, build_audit(run_dir, domain, high_reward, threshold))
            out: Any = json.loads((run_dir / "audit.json").read_text())["domains"][domain]
        else:
            todo = json.loads(marks.read_text()) if marks else []
            todo += [{"id": m, "domain": domain, "note": note} for m in mark]
            out = {"new_probes": apply_marks(run_dir, domain, todo, probes_dir)}
        _rerender(run_dir)
    except PosttrainError as exc:
        _die(str(exc))
    if as_json:
        _emit(out)
    elif "items" in out:
        typer.echo(f"{len(out['items'])} trajectories queued for review in {run_dir / 'report.html'}")
    else:
        typer.echo(f"{len(out['new_probes'])} new exploit probes for {domain}")


def _rerender(folder: Path) -> None:
    from posttrain.eval.report import render_eval_report
    from posttrain.eval.run_report import render_run_report

    if (folder / "results.json").is_file():
        render_eval_report(folder)
    else:
        render_run_report(folder)


@app.command("probes")
def probes(domain: str = typer.Option(..., "--domain"),
           probes_dir: Optional[Path] = typer.Option(None, "--probes-dir"),
           as_json: bool = typer.Option(False, "--json")) -> None:
    """Re-score the domain's marked exploit probes; exit 1 when one still gets reward."""
    from posttrain.domains.base import get_domain
    from posttrain.eval.probes import check_probes

    try:
        res = check_probes(get_domain(domain), probes_dir)
    except PosttrainError as exc:
        _die(str(exc))
    if as_json:
        _emit(res)
    else:
        typer.echo(f"{res['domain']}: {res['probes']} probes, {len(res['failures'])} still rewarded")
    if res["failures"]:
        raise typer.Exit(1)
