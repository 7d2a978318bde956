"""``posttrain domains catalogue``: the generated catalogue of the domain library.

What it is: one command over two committed files. ``posttrain/domains/calibration.json``
holds, per registered domain, its ``list`` record (family, skill in one line, env kind,
levels, tier, vision) and what was measured of it (verifier components, hidden keys, probe
names, the reference's and the built-in model's pass rate per level); ``docs/catalogue.md`` is
rendered from that file alone, so regenerating it is quick and deterministic.

- ``catalogue`` measures only the domains that are new or whose record changed (and drops
  the ones no longer registered), then writes both files; ``--remeasure ID`` (repeatable,
  or ``all``) measures again on purpose. The model's figures are measured only with
  ``--model PATH`` (a local Hugging Face folder); without it a new domain shows "-" there.
- ``catalogue --check`` measures nothing: it exits 1, naming the domains, when the committed
  files are not current (a domain added, removed or changed; the Markdown not the rendering
  of the data). The default test run calls it.

Guarantees: figures are never invented — an unmeasured cell prints "-", a skipped one says
why; the rendering is a pure function of the data file (sorted, no timestamps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer

from posttrain.domains.calibration import PATH as DATA_PATH
from posttrain.domains.calibration import difficulty_flags

DOC_PATH = Path("docs/catalogue.md")
RECORD_KEYS = ("family", "summary", "env_kind", "difficulties", "tier", "vision", "native")
MODEL_NOTE = ("the quickstart's tiny model (posttrain.models.tiny: 1.81M parameters, character "
              "tokenizer, 256 positions) after `posttrain quickstart` (seed 0: SFT cold start, then "
              "RL on math.add, math.compare, text_data.reverse and algorithms.sort at level 1; "
              "held-out 0.309 -> 0.460; this build, 2026-12-03). The built-in foundation of issue "
              "12 does not exist yet; its figures replace these when it does (`posttrain domains "
              "catalogue --model DIR --remeasure all`). Most prompts do not fit this model's 256 "
              "positions (`ctx`), and it reads no images (visual domains: `-`, counted as errors), "
              "so outside the domains it was trained on its figures are mostly 0: they show where a "
              "small model starts, not how hard the levels are for a capable one.")


def records() -> dict[str, dict[str, Any]]:
    """The catalogue-relevant part of every registered domain's ``list`` record."""
    from posttrain.cli.domains_cmd import describe
    from posttrain.domains import DOMAINS, load_builtin_domains

    load_builtin_domains()
    return {i: {k: describe(DOMAINS.get(i))[k] for k in RECORD_KEYS} for i in DOMAINS.ids()}


def stale(doc: dict[str, Any], current: dict[str, dict[str, Any]]) -> dict[str, str]:
    """``{id: why}`` for every domain whose committed entry does not match the registry."""
    have = doc.get("domains", {})
    out = {i: "new domain" for i in current if i not in have}
    out.update({i: "no longer registered" for i in have if i not in current})
    for i, rec in current.items():
        if i in have and have[i].get("record") != rec:
            changed = [k for k in RECORD_KEYS if have[i].get("record", {}).get(k) != rec[k]]
            out[i] = f"changed: {', '.join(changed)}"
    return out


# A record change in these keys only (the skill line) is no change of the domain: its measured
# figures hold, so rewording a docstring never drops the model's column or re-measures.
_WORDING = ("summary",)


def _same_domain(old: Any, new: dict[str, Any]) -> bool:
    return isinstance(old, dict) and all(old.get(k) == new[k] for k in RECORD_KEYS
                                         if k not in _WORDING)


def measure(ids: List[str], current: dict[str, dict[str, Any]], doc: dict[str, Any],
            model: Optional[Path], log: Any, save: Any = None, again: frozenset = frozenset()) -> None:
    """Measure ``ids`` into ``doc`` in place (the reference always; the model with ``model``);
    ``save()`` runs every 10 domains so a long measurement that stops keeps what it measured.
    A current entry keeps its reference figures unless its id is in ``again``."""
    from posttrain.cli._calibrate import calibrate, profile
    from posttrain.domains import get_domain

    backend = _backend(model) if model else None
    params = doc.setdefault("params", {"reference": {"n_tasks": 4, "n_tasks_real": 1,
                                                     "seed": 1_000_000},
                                       "model": {"n_tasks": 8, "max_new_tokens": 16,
                                                 "seed": 1_000_000, "temperature": 0.0}})
    for k, did in enumerate(ids, 1):
        dom = get_domain(did)
        old = doc["domains"].get(did, {})
        same = _same_domain(old.get("record"), current[did])
        if same and "reference" in old and did not in again:
            entry = {**old, "record": current[did]}  # current: only the model's column is wanted
        else:
            ref = params["reference"]  # the real tier drives real tools (a minute a task): fewer
            n_ref = ref["n_tasks_real"] if current[did]["tier"] == "real" else ref["n_tasks"]
            entry = {"record": current[did], **profile(dom, n_tasks=n_ref, seed=ref["seed"])}
        if backend is not None:
            res = calibrate(backend, [did], **params["model"])
            entry["model"] = res["domains"][did]
        elif same and "model" in old:
            entry["model"] = old["model"]  # still the same domain: its model figures hold
        doc["domains"][did] = entry
        log(f"[{k}/{len(ids)}] {did}")
        if save is not None and k % 10 == 0:
            save()


def _import_figures(doc: dict[str, Any], result: dict[str, Any]) -> None:
    """Copy a ``domains calibrate`` result's cells into ``doc`` (for the domains it has)."""
    for did, cells in result.get("domains", {}).items():
        if did in doc["domains"]:
            doc["domains"][did]["model"] = cells
    doc.setdefault("params", {})["model"] = dict(result.get("params", {}))


def _backend(model: Path) -> Any:
    from posttrain.models.loading import load_model, policy_backend

    return policy_backend(*load_model(model), device="cpu")


def _rates(cells: Any, levels: list[int], env_kind: str = "single_turn") -> str:
    if not isinstance(cells, dict):
        return "-" if env_kind == "single_turn" else "n/a (multi-turn)"
    if "skipped" in cells:
        return "n/a (multi-turn)"
    out = []
    for d in levels:
        c = cells.get(str(d), {})
        v = c.get("pass_rate")
        out.append(f"{v:.2f}" if v is not None else "ctx" if c.get("too_long") else "-")
    return " / ".join(out)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(doc: dict[str, Any]) -> str:
    """The Markdown catalogue of ``doc`` (a pure function: same data, same text)."""
    doms = doc.get("domains", {})
    p = doc.get("params", {})
    flagged = {i: difficulty_flags(e["model"]) for i, e in doms.items()
               if isinstance(e.get("model"), dict) and "skipped" not in e["model"]}
    flagged = {i: f for i, f in flagged.items() if f}
    n_model = sum(isinstance(e.get("model"), dict) and "skipped" not in e["model"] for e in doms.values())
    lines = [
        "# Domain catalogue", "",
        "<!-- generated by `posttrain domains catalogue` from posttrain/domains/calibration.json;"
        " do not edit by hand -->", "",
        f"{len(doms)} domains in {len({e['record']['family'] for e in doms.values()})} families. "
        "Pass rates are per level, easiest first (`d1 / d2 / ...`); `-` = not measured.", "",
        f"- **reference**: the domain's own reference solver played through its env (the "
        f"conformance check's episode), {p.get('reference', {}).get('n_tasks', '?')} tasks per "
        f"level ({p.get('reference', {}).get('n_tasks_real', '?')} in the real tier) from seed "
        f"{p.get('reference', {}).get('seed', '?')}.",
        f"- **model** ({n_model} domains measured): {doc.get('model_note', MODEL_NOTE)} Greedy, "
        f"{p.get('model', {}).get('n_tasks', '?')} tasks per level, at most "
        f"{p.get('model', {}).get('max_new_tokens', '?')} new tokens (a turn's, in multi-turn "
        "episodes under the default budgets); `ctx` = no prompt of that level fits the model's "
        "context; `n/a (multi-turn)` = not measured (the real tier, or figures from before "
        "`domains calibrate` ran multi-turn domains).",
        "- **flags**: a harder level passed more often than an easier one (beyond two standard "
        "errors), or level 1 passed at least 90 % of the time (`posttrain domains calibrate` "
        "shows the same flags for any model); `reference below 1.0`: the domain's own solver "
        "failed some of the measured tasks (a bug in that domain).", "",
        f"Flagged domains for this model: {len(flagged)}.", "",
    ]
    for fam in sorted({e["record"]["family"] for e in doms.values()}):
        ids = sorted(i for i, e in doms.items() if e["record"]["family"] == fam)
        lines += [f"## {fam} ({len(ids)})", "",
                  "| id | skill | kind | levels | tier | verifier components | hidden | probes "
                  "| reference | model | flags |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for i in ids:
            e, r = doms[i], doms[i]["record"]
            levels = list(r["difficulties"])
            kind = r["env_kind"] + (", vision" if r.get("vision") else "")
            tier = r["tier"] + ("" if r.get("native", True) else " (adapter)")
            comps = ", ".join(e.get("verifier_components", [])) or "-"
            bad_ref = [d for d, c in (e.get("reference") or {}).items()
                       if isinstance(c, dict) and c.get("pass_rate") is not None and c["pass_rate"] < 1.0]
            notes = flagged.get(i, []) + ([f"reference below 1.0 at d{', d'.join(bad_ref)}"]
                                          if bad_ref else [])
            note = f"error: {e['error']}" if e.get("error") else "; ".join(notes)
            lines.append("| " + " | ".join(_cell(x) for x in (
                f"`{i}`", r["summary"], kind, ",".join(map(str, levels)), tier, comps,
                ", ".join(e.get("hidden", [])) or "-", ", ".join(e.get("probes", [])) or "-",
                _rates(e.get("reference"), levels), _rates(e.get("model"), levels, r["env_kind"]), note)) + " |")
        lines.append("")
    return "\n".join(lines)


def dumps(doc: dict[str, Any]) -> str:
    """The data file's text: one line per domain, so a changed domain is a one-line diff."""
    head = {k: v for k, v in sorted(doc.items()) if k != "domains"}
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "domains": {']
    items = sorted(doc.get("domains", {}).items())
    lines += [f" {json.dumps(i)}: {json.dumps(e, sort_keys=True)}" + ("," if k < len(items) - 1 else "")
              for k, (i, e) in enumerate(items)]
    return "\n".join(lines) + "\n}}\n"


def load_doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.is_file() else {"domains": {}}


def catalogue_cmd(
    check: bool = typer.Option(False, "--check", help="Exit 1 when the committed catalogue is not current."),
    model: Optional[Path] = typer.Option(None, "--model", help="Measure the model's pass rates with this local HF folder."),
    remeasure: Optional[List[str]] = typer.Option(None, "--remeasure", help="Domain ids to measure again ('all' for every one)."),
    out: Path = typer.Option(DOC_PATH, "--out", help="The Markdown catalogue."),
    data: Path = typer.Option(DATA_PATH, "--data", help="The calibration data file."),
    figures: Optional[Path] = typer.Option(None, "--model-figures", help="Take the model's pass rates from a `domains calibrate` calibration.json."),
) -> None:
    """Write docs/catalogue.md (and its data file) from the registry and measured pass rates."""
    err = typer.echo
    doc, current = load_doc(data), records()
    why = stale(doc, current)
    if check:
        text = out.read_text() if out.is_file() else None
        problems = [f"{i}: {w}" for i, w in sorted(why.items())]
        if not why and text != render(doc):
            problems.append(f"{out} is not the rendering of {data}")
        if problems:
            err("the catalogue is not current (run `posttrain domains catalogue`):\n  "
                + "\n  ".join(problems[:40]), err=True)
            raise typer.Exit(1)
        err(f"catalogue current: {len(current)} domains", err=True)
        return
    wanted = list(current) if remeasure and "all" in remeasure else list(remeasure or [])
    bad = [i for i in wanted if i not in current]
    if bad:
        err(f"error: --remeasure: unknown domain ids {bad}", err=True)
        raise typer.Exit(2)
    todo = {i for i, w in why.items() if i in current} | set(wanted)
    if model is not None:  # a model fills its column wherever it is still empty
        todo |= {i for i in current if "model" not in doc.get("domains", {}).get(i, {})}
    doc["domains"] = {i: e for i, e in doc.get("domains", {}).items() if i in current}
    save = lambda: data.write_text(dumps(doc))  # noqa: E731
    measure(sorted(todo), current, doc, model, lambda s: err(s, err=True), save, frozenset(wanted))
    if figures is not None:
        _import_figures(doc, json.loads(figures.read_text()))
    save()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(doc))
    err(f"measured {len(todo)} domains; wrote {data} and {out}", err=True)
