"""The self-contained HTML report of a training run (``<run>/report.html``).

``render_run_report(run_dir)`` reads what a run writes and shows:
- ``summary.json``: held-out accuracy before and after, overall and per domain, with the
  change; wall seconds per phase;
- ``metrics.jsonl`` (``{"step": ..., "reward/<domain>": ...}`` lines, see
  :class:`posttrain.eval.tracking.MetricsWriter`): reward curves per domain, and loss curves;
- ``curriculum.json`` (optional): the curriculum heatmap, samples spent and pass rate per
  (domain, difficulty) cell. Accepted shapes: ``{"cells": [{"domain", "difficulty",
  "samples" or "count", "pass_rate"}, ...]}`` (what ``posttrain.scheduler`` writes) or ``{"domains": [...], "difficulties": [...],
  "samples": [[...]], "pass_rate": [[...]]}``;
- ``eval/results.json`` (optional, ``posttrain eval run --out <run>/eval``): every section of
  the evaluation report; ``audit.json`` (optional): the audit queue;
- the run's domains as the catalogue describes them (``docs/catalogue.md``, from the committed
  ``posttrain/domains/calibration.json``): skill, kind, tier, and the measured pass rates per
  level of the reference solver and of the catalogue's model, beside this run's figures.

Like the evaluation report it needs no network, and each number in a table points at its
place in the embedded JSON (``data-path``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from posttrain.core.errors import ConfigError

from . import html as H
from .plots import heatmap, metric_curves
from .report import eval_sections

_MAX_EMBEDDED_ROWS = 4000


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # a run killed mid-write leaves a torn last line
                continue
    return rows


def _heldout(summary: Mapping[str, Any], key: str) -> tuple[dict[str, tuple[float, str]], Any]:
    """Per-domain ``(value, json path)`` and the overall value of ``summary[key]``."""
    v = summary.get(key)
    if isinstance(v, (int, float)):
        return {}, (v, f"summary/{key}")
    if not isinstance(v, Mapping):
        return {}, None
    nested = next((k for k in ("per_domain", "domains") if isinstance(v.get(k), Mapping)), None)
    if nested is not None:
        per = {d: (x, f"summary/{key}/{nested}/{d}") for d, x in v[nested].items()
               if isinstance(x, (int, float))}
    else:
        per = {d: (x, f"summary/{key}/{d}") for d, x in v.items()
               if d not in ("overall", "n", "errors") and isinstance(x, (int, float))}
    overall = (v["overall"], f"summary/{key}/overall") if "overall" in v else None
    return per, overall


def heldout_table(summary: Mapping[str, Any]) -> str:
    """Before/after per domain; with ``heldout_gain`` (the same tasks scored both times) also
    the paired standard error of the change and its z, so noise is told from a gain."""
    before, ob = _heldout(summary, "heldout_before")
    after, oa = _heldout(summary, "heldout_after")
    gain = summary.get("heldout_gain") if isinstance(summary.get("heldout_gain"), Mapping) else {}
    per_gain = {**(gain.get("per_domain") or {}), "overall": gain.get("overall") or {}}
    rows = []
    names = sorted(set(before) | set(after))
    pairs = [(d, before.get(d), after.get(d)) for d in names] + [("overall", ob, oa)]
    for name, b, a in pairs:
        if b is None and a is None:
            continue
        delta = a[0] - b[0] if a is not None and b is not None else None
        cls = "" if delta is None else ("good" if delta > 0 else "bad" if delta < 0 else "")
        row = [H.text(name, "l flag" if name == "overall" else "l"),
               H.num(b[0], b[1]) if b else H.text("—", ""),
               H.num(a[0], a[1]) if a else H.text("—", ""),
               f'<td class="{cls}">{H.fmt(delta)}</td>']
        if gain:
            g = per_gain.get(name) or {}
            where = f"summary/heldout_gain/{'overall' if name == 'overall' else 'per_domain/' + name}"
            row += [H.num(g["se"], f"{where}/se") if "se" in g else H.text("—", ""),
                    H.num(g["z"], f"{where}/z", 1) if "z" in g else H.text("—", "")]
        rows.append(row)
    if not rows:
        return '<p class="muted">(summary.json has no held-out figures)</p>'
    head = ["domain", "held-out before", "held-out after", "change"]
    return H.table(head + (["SE of the change (paired)", "z"] if gain else []), rows)


def phase_table(summary: Mapping[str, Any]) -> str:
    wall = summary.get("wall_s")
    if isinstance(wall, (int, float)):
        rows = [[H.text("total"), H.num(wall, "summary/wall_s", 2)]]
    elif isinstance(wall, Mapping) and wall:
        rows = [[H.text(k), H.num(v, f"summary/wall_s/{k}", 2)]
                for k, v in wall.items() if isinstance(v, (int, float))]
    else:
        return '<p class="muted">(no wall-time figures)</p>'
    return H.table(["phase", "wall s"], rows)


def _curriculum_grid(cur: Mapping[str, Any], field: str) -> tuple[list[str], list[Any], list[list[Any]]]:
    if "cells" in cur:
        cells = cur["cells"]
        if not any(c.get(field) is not None for c in cells):
            return [], [], []
        doms = sorted({c["domain"] for c in cells})
        diffs = sorted({c["difficulty"] for c in cells})
        grid = [[None] * len(diffs) for _ in doms]
        for c in cells:
            grid[doms.index(c["domain"])][diffs.index(c["difficulty"])] = c.get(field)
        return doms, diffs, grid
    if field in cur and "domains" in cur and "difficulties" in cur:
        return list(cur["domains"]), list(cur["difficulties"]), cur[field]
    return [], [], []


def curriculum_section(cur: Mapping[str, Any] | None) -> str:
    if not cur:
        return '<p class="muted">(no curriculum.json: this run did not record its curriculum)</p>'
    out = []
    for field, title, label in (("samples", "Samples spent per cell", "samples"),
                                ("count", "Samples seen per cell", "samples"),
                                ("pass_rate", "Pass rate per cell", "pass rate")):
        rows, cols, grid = _curriculum_grid(cur, field)
        if rows:
            out.append(H.figure(heatmap(rows, cols, grid, title, label), title))
    note = ('<p class="muted">Rows are domains, columns difficulties. Compute should go where the '
            "pass rate is strictly between 0 and 1; a cell near 1 should have been promoted.</p>")
    return "".join(out) + note if out else '<p class="muted">(curriculum.json has no cells)</p>'


def _embedded_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(rows) <= _MAX_EMBEDDED_ROWS:
        return rows
    stride = -(-len(rows) // _MAX_EMBEDDED_ROWS)
    return rows[::stride] + [rows[-1]]


def _rates(cells: Mapping[str, Any] | None) -> str:
    if not isinstance(cells, Mapping) or not cells:
        return "-"
    out = []
    for d in sorted((k for k in cells if k.isdigit()), key=int):
        pr = cells[d].get("pass_rate") if isinstance(cells[d], Mapping) else None
        out.append("-" if pr is None else f"{pr:.2f}")
    return " / ".join(out) or "-"


def catalogue_section(domain_ids: list[str]) -> str:
    """The run's domains as the committed catalogue profiles them (nothing is measured here)."""
    from posttrain.domains import calibration

    known = calibration.load()["domains"]
    rows = []
    for i in domain_ids:
        entry = known.get(i)
        if entry is None:
            rows.append([H.text(i), H.text("(not in the catalogue: a plugin or a new domain)", "l muted"),
                         H.text(""), H.text(""), H.text(""), H.text("")])
            continue
        rec = entry.get("record", {})
        rows.append([H.text(i), H.text(rec.get("summary", "")), H.text(rec.get("env_kind", "")),
                     H.text(rec.get("tier", "")), H.text(_rates(entry.get("reference"))),
                     H.text(_rates(entry.get("model")))])
    if not rows:
        return '<p class="muted">(no domain figures in this run)</p>'
    note = ('<p class="muted">From <code>docs/catalogue.md</code> (<code>posttrain domains '
            'catalogue</code>): pass rates per level, easiest first, of the reference solver and '
            'of the catalogue\'s model; <code>-</code> = not measured.</p>')
    return note + H.table(["domain", "skill", "kind", "tier", "reference", "catalogue model"], rows)


def _run_domains(summary: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    names = set(_heldout(summary, "heldout_before")[0]) | set(_heldout(summary, "heldout_after")[0])
    for r in rows:
        names |= {k.split("/", 1)[1] for k in r if k.startswith("reward/") and "." in k}
    return sorted(names)


def render_run_report(run_dir: str | Path) -> Path:
    """Write ``run_dir/report.html`` from the run's files; return its path."""
    from .audit import audit_section

    d = Path(run_dir)
    if not d.is_dir():
        raise ConfigError(f"run folder {str(d)!r} does not exist")
    summary = json.loads((d / "summary.json").read_text()) if (d / "summary.json").is_file() else {}
    rows = _read_jsonl(d / "metrics.jsonl")
    cur = json.loads((d / "curriculum.json").read_text()) if (d / "curriculum.json").is_file() else None
    results = json.loads((d / "eval" / "results.json").read_text()) \
        if (d / "eval" / "results.json").is_file() else None
    compare = json.loads((d / "eval" / "compare.json").read_text()) \
        if (d / "eval" / "compare.json").is_file() else None
    audit = json.loads((d / "audit.json").read_text()) if (d / "audit.json").is_file() else None
    sections = [
        H.section("Held-out accuracy", heldout_table(summary), "heldout"),
        H.section("Reward curves", H.figure(metric_curves(rows, "reward/", "Mean reward per domain"),
                                            "reward curves"), "rewards"),
        H.section("Loss", H.figure(metric_curves(rows, "loss/", "Losses"), "loss curves"), "loss"),
        H.section("Curriculum", curriculum_section(cur), "curriculum"),
        H.section("Wall time", phase_table(summary), "wall"),
        H.section("Domains in the catalogue", catalogue_section(_run_domains(summary, rows)),
                  "catalogue"),
    ]
    if results is not None:
        sections += eval_sections(results, compare)
    if audit is not None:
        sections.append(H.section("Audit queue", audit_section(audit), "audit"))
    data = {"summary": summary, "metrics": _embedded_rows(rows), "curriculum": cur,
            "results": results, "compare": compare, "audit": audit}
    steps = rows[-1].get("step") if rows else None
    subtitle = f"run folder {d.name} · {len(rows)} logged steps (last step {steps})"
    out = d / "report.html"
    out.write_text(H.page(f"Training run: {summary.get('run_name', d.name)}", subtitle, sections,
                          H.clean(data)))
    return out
