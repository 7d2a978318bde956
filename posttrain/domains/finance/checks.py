"""Finance domains that tie statements to each other and to the notes.

- ``finance.crosscheck-v1`` — one of three cross-statement checks has been broken on purpose
  (cash-flow ending cash vs balance-sheet cash; cash-flow net income vs income statement;
  retained-earnings roll-forward). The policy names the failed check and the signed
  discrepancy; at d3 it also computes free cash flow. The check name only counts when the
  discrepancy is right (a gate: guessing one of three names earns nothing). At d3 the planted
  error is a transposition of two adjacent digits (small, easy to overlook).
- ``finance.notes-v1`` — figures that need the notes: diluted earnings per share (net income /
  weighted-average diluted shares), a segment's share of revenue, total debt due within N
  years, a segment's growth.

Difficulty as in :mod:`.statements` (d1 short, d2 all statements, d3 three years, long, HTML).
What they train: reconciling documents, reading notes, per-share arithmetic. Not covered:
multiple simultaneous errors, restatement narratives, anti-dilution rules.

Probes (besides the shared ones): the right check name with a zero discrepancy, and the
discrepancy with its sign flipped (crosscheck); EPS computed with shares off by the scale
(notes).
"""

from __future__ import annotations

import json
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import make_company, unit_multiplier
from posttrain.domains.finance._render import render_filing

CHECKS = {
    "cash": "the cash-flow statement's cash at end of year equals the balance sheet's cash and cash equivalents",
    "net_income": "the cash-flow statement's net income equals the income statement's net income",
    "retained_earnings": "retained earnings at year end equal the prior year-end retained earnings plus net "
                         "income less dividends paid (as shown on the cash-flow statement)",
}


def _transpose(rng: random.Random, v: int) -> int:
    """``v`` with two adjacent, different digits swapped (a classic keying error)."""
    s = str(abs(v))
    spots = [i for i in range(len(s) - 1) if s[i] != s[i + 1] and not (i == 0 and s[1] == "0")]
    if not spots:
        return v + 9 * (1 if v >= 0 else -1)
    i = rng.choice(spots)
    t = s[:i] + s[i + 1] + s[i] + s[i + 2:]
    return int(t) * (1 if v >= 0 else -1)


def _plant(rng: random.Random, co: dict, check: str, year: int, difficulty: int) -> tuple[tuple, int]:
    """The override (statement, item, year) and its value; the reported figure differs."""
    target = {"cash": ("cashflow", "cash_end"), "net_income": ("cashflow", "net_income"),
              "retained_earnings": ("balance", "retained")}[check]
    true = co[target[0]][year][target[1]]
    if difficulty >= 3:
        wrong = _transpose(rng, true)
    else:
        wrong = true + rng.choice([-1, 1]) * rng.randint(2, 60) * 10 ** max(0, len(str(abs(true))) - 3)
    if wrong == true:
        wrong = true + 7
    return (target[0], target[1], year), wrong


ID_CROSSCHECK = "finance.crosscheck-v1"


def _draw_crosscheck(rng: random.Random, difficulty: int) -> Task:
    lay = _kit.layout(rng, difficulty, ("income", "balance", "cashflow"))
    co = make_company(rng, lay["years"])
    check = rng.choice(list(CHECKS))
    year = rng.choice(co["years"][1:])  # the roll-forward needs the prior year on the page
    where, wrong = _plant(rng, co, check, year, difficulty)
    true = co[where[0]][year][where[1]]
    doc = render_filing(co, rng, lay["style"], parts=lay["parts"], long=lay["long"], overrides={where: wrong})
    checks = "\n".join(f"  {k}: {v}" for k, v in CHECKS.items())
    extra = (f"Exactly one of these checks fails for fiscal {year} (every figure it uses is as printed):\n"
             f"{checks}\n")
    specs = [_kit.choice("failed_check"), _kit.amount("discrepancy", unit_multiplier(co), weight=2.0)]
    exp = {"failed_check": check, "discrepancy": wrong - true}
    qs = {"failed_check": f"which check fails: one of {', '.join(CHECKS)}",
          "discrepancy": f"the amount that makes the check fail, in {co['unit']}: the figure as printed minus "
                         "the figure the check implies from the other printed figures"}
    if difficulty >= 3:
        y = co["years"][-1]
        specs.append(_kit.amount(f"free_cash_flow_{y}", unit_multiplier(co)))
        cf = co["cashflow"][y]
        exp[f"free_cash_flow_{y}"] = cf["cfo"] + cf["capex"]
        qs[f"free_cash_flow_{y}"] = (f"free cash flow for fiscal {y}: net cash provided by operating activities "
                                     "plus capital expenditures (which are negative)")
    task = _kit.build_task(ID_CROSSCHECK, difficulty, doc, qs, specs, exp, scale=unit_multiplier(co),
                           gates={"failed_check": "discrepancy"}, extra=extra)
    return task


def _crosscheck_probes(task: Task) -> dict[str, str]:
    out = {}
    ref = json.loads(_kit.solve(task))
    extra = {k: 0 for k in ref if k not in ("failed_check", "discrepancy")}
    out["name_only"] = json.dumps({**ref, "discrepancy": 0, **extra})
    out["sign_flipped"] = json.dumps({**ref, "discrepancy": -ref["discrepancy"], **extra})
    for other in CHECKS:
        if other != ref["failed_check"]:
            out[f"guess_{other}"] = json.dumps({**ref, "failed_check": other, "discrepancy": 0, **extra})
    return out


register_domain(_kit.field_domain(ID_CROSSCHECK, _draw_crosscheck, """\
Reconciling the statements: find which cross-statement check was broken and by how much.

One of three checks (cash-flow ending cash vs balance-sheet cash; cash-flow net income vs the
income statement; the retained-earnings roll-forward) is broken on purpose; the answer names it
and the signed discrepancy (the name counts only when the discrepancy is right). At d3 the
planted error is a transposition of two adjacent digits and free cash flow is asked too.
""", _crosscheck_probes))


ID_NOTES = "finance.notes-v1"


def _draw_notes(rng: random.Random, difficulty: int) -> Task:
    co, doc, _ = _kit.company_and_doc(rng, difficulty, ("income", "notes"))
    ys, mult = co["years"], unit_multiplier(co)
    y = rng.choice(ys)
    segs = list(co["segments"][y])
    seg = rng.choice(segs)
    n = rng.randint(2, 3)
    last = ys[-1]
    cands = {
        f"eps_{y}": (_kit.ratio(f"eps_{y}"), co["income"][y]["net_income"] / co["shares"][y],
                     f"diluted earnings per share for fiscal {y} (net income / weighted-average diluted shares), "
                     "in U.S. dollars per share"),
        f"{seg.lower()}_share_pct_{y}": (_kit.percent(f"{seg.lower()}_share_pct_{y}"),
                                         100 * co["segments"][y][seg] / co["income"][y]["revenue"],
                                         f"{seg} segment revenue as a percent of total revenue, fiscal {y}"),
        f"debt_due_within_{n}y": (_kit.amount(f"debt_due_within_{n}y", mult),
                                  sum(co["maturities"][last + k] for k in range(1, n + 1)),
                                  f"total debt principal due in fiscal {last + 1} through {last + n}, "
                                  f"in {co['unit']}"),
    }
    if len(ys) >= 2:
        a, b = co["segments"][ys[-2]][seg], co["segments"][ys[-1]][seg]
        cands[f"{seg.lower()}_growth_pct"] = (_kit.percent(f"{seg.lower()}_growth_pct"), 100 * (b - a) / a,
                                              f"growth of {seg} segment revenue from fiscal {ys[-2]} to "
                                              f"{ys[-1]}, in percent")
    names = [k for k, (spec, v, _) in cands.items() if abs(v) > 10 * max(spec.abs_tol, 1e-3)]
    names = rng.sample(names, min(len(names), difficulty + (difficulty == 3)))
    if not names:
        names = [f"debt_due_within_{n}y"]
    specs = [cands[k][0] for k in names]
    exp = {k: round(cands[k][1], 6) if cands[k][0].kind != "amount" else cands[k][1] for k in names}
    qs = {k: cands[k][2] for k in names}
    task = _kit.build_task(ID_NOTES, difficulty, doc, qs, specs, exp, scale=mult)
    task.hidden["shares_scaled"] = {k: exp[k] / 1000 for k in names if k.startswith("eps_")}
    return task


def _notes_probes(task: Task) -> dict[str, str]:
    out = {}
    ref = json.loads(_kit.solve(task))
    eps = task.hidden.get("shares_scaled") or {}
    if eps and len(ref) == len(eps):
        out["eps_wrong_share_scale"] = json.dumps({**ref, **eps})
    return out


register_domain(_kit.field_domain(ID_NOTES, _draw_notes, """\
Reading the notes to a filing: diluted EPS, segment shares, debt maturities, segment growth.

Diluted earnings per share (net income / weighted-average diluted shares), a segment's share of
revenue, total debt due within N years and a segment's growth, from the notes.
""", _notes_probes))
