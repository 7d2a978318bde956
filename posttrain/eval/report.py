"""The self-contained HTML evaluation report (``report.html`` next to ``results.json``).

``render_eval_report(eval_dir)`` reads ``results.json`` (and, when present, ``compare.json``
written by ``posttrain eval compare`` and ``audit.json`` written by ``posttrain eval audit``)
and writes ``eval_dir/report.html`` with:

1. per-domain results: single-attempt success (Wilson interval) beside pass@k for every k
   (bootstrap interval), pass^k and mean reward;
2. pass@k curves with intervals;
3. the layer matrix: pass rate of L1–L4 and where each failure was first attributed;
4. step efficiency: turns, tokens and wall time per domain;
5. regression deltas with significance (when compared against a base);
6. the audit queue (when audited).

The page needs no network: CSS inline, figures as base64 PNG, the data as inline JSON whose
numbers every table cell points at (``data-path``). The run report lives in
:mod:`posttrain.eval.run_report` and reuses these sections.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from . import html as H
from .layers import LAYER_NAMES, LAYERS
from .plots import pass_at_k_curves


def _ks(results: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in results["meta"]["spec"]["ks"]]


def _scopes(results: Mapping[str, Any]) -> list[tuple[str, str, dict]]:
    """(label, json path, summary) for each domain and overall."""
    out = [(d, f"results/domains/{d}", s) for d, s in results["domains"].items()]
    return out + [("overall", "results/overall", results["overall"])]


def results_table(results: Mapping[str, Any]) -> str:
    ks = _ks(results)
    headers = ["domain", "tasks", "samples", "errors", "success (1 attempt)"]
    headers += [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks if k != "1"] + ["mean reward"]
    rows = []
    for label, path, s in _scopes(results):
        cls = "l" if label != "overall" else "l total"
        row = [H.text(label, cls), H.num(s["tasks"], f"{path}/tasks"),
               H.num(s["samples"], f"{path}/samples"),
               H.num(s["errors"], f"{path}/errors", cls="warn" if s["errors"] else ""),
               H.interval_cell(s["success_rate"], f"{path}/success_rate")]
        row += [H.interval_cell(s["pass@k"][k], f"{path}/pass@k/{k}") for k in ks]
        row += [H.num(s["pass^k"][k], f"{path}/pass^k/{k}") for k in ks if k != "1"]
        row.append(H.interval_cell(s["mean_reward"], f"{path}/mean_reward"))
        rows.append(row)
    note = ('<p class="muted">Success (1 attempt) pools every sample (Wilson interval); pass@k is '
            "the unbiased estimator averaged over tasks (bootstrap over tasks); pass^k is the "
            "chance that all k attempts succeed. Errors are infrastructure or verifier failures, "
            "excluded from every rate.</p>")
    return H.table(headers, rows) + note


def layer_table(results: Mapping[str, Any]) -> str:
    headers = ["domain"] + [f"{k} {LAYER_NAMES[k]}" for k in LAYERS]
    headers += [f"first failure {k}" for k in LAYERS] + ["failed"]
    rows = []
    for label, path, s in _scopes(results):
        row = [H.text(label)]
        for k in LAYERS:
            rate = s["layers"][k]["rate"]
            cls = "" if rate is None else ("good" if rate >= 0.9 else "bad" if rate < 0.5 else "warn")
            row.append(H.num(rate, f"{path}/layers/{k}/rate", cls=cls))
        row += [H.num(s["first_failure"][k], f"{path}/first_failure/{k}") for k in LAYERS]
        row.append(H.num(s["failed"], f"{path}/failed"))
        rows.append(row)
    note = ('<p class="muted">Rates are over samples where the layer was measured (— = not '
            "measured or not applicable). Each failed sample is counted once, at the first "
            "layer that failed: fix format failures before blaming task skill.</p>")
    return H.table(headers, rows) + note


def efficiency_table(results: Mapping[str, Any]) -> str:
    headers = ["domain", "turns", "tokens", "tokens (successes)", "wall s (mean)", "wall s (median)"]
    rows = []
    for label, path, s in _scopes(results):
        e, p = s["efficiency"], f"{path}/efficiency"
        rows.append([H.text(label), H.num(e["turns"], f"{p}/turns", 2),
                     H.num(e["tokens"], f"{p}/tokens", 1),
                     H.num(e["tokens_success"], f"{p}/tokens_success", 1),
                     H.num(e["wall_s"], f"{p}/wall_s", 4),
                     H.num(e["wall_s_median"], f"{p}/wall_s_median", 4)])
    return H.table(headers, rows)


def compare_table(cmp: Mapping[str, Any]) -> str:
    headers = ["domain", "test", "items", "base", "new", "delta", "95% interval",
               "p (regression)", "p (Holm)", "verdict"]
    rows = []
    scopes = [(d, f"compare/domains/{d}", v) for d, v in cmp["domains"].items()]
    scopes.append(("overall", "compare/overall", cmp["overall"]))
    for label, path, v in scopes:
        verdict = ('<td class="l bad flag">REGRESSION</td>' if v["regression"] else
                   '<td class="l good okflag">improved</td>' if v["delta"] > 0 and v["p_improvement"] < cmp["alpha"]
                   else '<td class="l">no significant change</td>')
        p_adj = v.get("p_adjusted")
        rows.append([H.text(label), H.text(v["method"]), H.num(v["items"], f"{path}/items"),
                     H.num(v["base_mean"], f"{path}/base_mean"), H.num(v["new_mean"], f"{path}/new_mean"),
                     H.num(v["delta"], f"{path}/delta", cls="bad" if v["delta"] < 0 else ""),
                     "<td>[" + H.num(v["low"], f"{path}/low", tag="span") + ", "
                     + H.num(v["high"], f"{path}/high", tag="span") + "]</td>",
                     H.num(v["p_regression"], f"{path}/p_regression", 4),
                     H.num(p_adj, f"{path}/p_adjusted", 4) if p_adj is not None else H.text("—", ""),
                     verdict])
    head = (f'<p>Base <code>{H.esc(cmp["base"])}</code> → new <code>{H.esc(cmp["new"])}</code>; '
            f'metric {H.esc(cmp["metric"])}, α = {H.esc(cmp["alpha"])}, margin {H.esc(cmp["margin"])}. '
            + ('<span class="flag">Gate: FAIL (significant regression)</span>' if cmp["regression"]
               else '<span class="okflag">Gate: pass</span>') + "</p>")
    skipped = "".join(f"<li>{H.esc(d)}: {H.esc(why)}</li>" for d, why in cmp.get("skipped", {}).items())
    return head + H.table(headers, rows) + (f"<p>Not compared:</p><ul>{skipped}</ul>" if skipped else "")


def eval_sections(results: Mapping[str, Any], compare: Mapping[str, Any] | None = None) -> list[str]:
    """The evaluation sections, shared by the evaluation and the run report."""
    out = [H.section("Results per domain", results_table(results), "results"),
           H.section("pass@k curves", H.figure(pass_at_k_curves(results), "pass@k curves"), "passk"),
           H.section("Layer matrix", layer_table(results), "layers"),
           H.section("Step efficiency", efficiency_table(results), "efficiency")]
    if compare is not None:
        out.append(H.section("Regression gate", compare_table(compare), "regression"))
    return out


def _read(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def _subtitle(results: Mapping[str, Any]) -> str:
    m = results["meta"]
    spec = m["spec"]
    wid = (m.get("weights_id") or "")[:16]
    return (f"model {m.get('model', '?')} · weights {wid or 'unhashed'} · backend "
            f"{m.get('backend', '?')} · n={spec['n']} samples/item · temperature "
            f"{spec['temperature']} · success threshold {spec['threshold']} · "
            f"{m.get('generated_items', 0)} items generated, {m.get('reused_items', 0)} reused")


def render_eval_report(eval_dir: str | Path) -> Path:
    """Write ``eval_dir/report.html`` from the JSON files in ``eval_dir``; return its path."""
    from .audit import audit_section

    d = Path(eval_dir)
    results = _read(d / "results.json")
    if results is None:
        from posttrain.core.errors import ConfigError

        raise ConfigError(f"{str(d)!r} has no results.json; run `posttrain eval run` first")
    compare, audit = _read(d / "compare.json"), _read(d / "audit.json")
    sections = eval_sections(results, compare)
    if audit is not None:
        sections.append(H.section("Audit queue", audit_section(audit), "audit"))
    data = {"results": results, "compare": compare, "audit": audit}
    thumbs = _thumbnails(d)
    if thumbs is not None:  # visual episodes: what the policy saw
        sections.append(thumbs[1])
        data["thumbnails"] = thumbs[0]
    page = H.page(f"Evaluation: {results['meta'].get('model', d.name)}", _subtitle(results),
                  sections, H.clean(data))
    out = d / "report.html"
    out.write_text(page)
    return out


def _thumbnails(d: Path) -> tuple[list, str] | None:
    """``(thumbnails.json document, section)`` of an evaluation whose samples saw images."""
    from .samples import read_samples
    from .thumbnails import thumbnails_data, thumbnails_section

    if not (d / "samples.jsonl").is_file():
        return None
    data = thumbnails_data(read_samples(d / "samples.jsonl"))
    section = thumbnails_section(data, d / "images")
    if section is None:
        return None
    (d / "thumbnails.json").write_text(json.dumps(data, indent=1))
    return data, section


def render_run_report(run_dir: str | Path) -> Path:
    """The training-run report (see :mod:`posttrain.eval.run_report`); re-exported here."""
    from .run_report import render_run_report as render

    return render(run_dir)
