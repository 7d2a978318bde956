"""Real-tier cross-document domains: two PDF filings per task.

- ``finance.pdf_restatement-v1`` — a company's annual report for fiscal N and the next one,
  which restates fiscal N (its comparative column says "as restated"). Asked: fiscal N's
  revenue as originally reported, as restated, and the change (checked: restated − original
  = change); from d2 net income too. The restatement note tabulates the effect at d1 only;
  above, the two filings must be compared.
- ``finance.pdf_two_companies-v1`` — two companies' annual reports (each in its own unit:
  one may be in thousands and the other in millions); revenue and operating income of each
  for its latest fiscal year, combined revenue (checked: the two add up) and which company
  has the higher operating margin (a choice, gated on the combined revenue so that guessing
  it earns nothing). Asked in millions (d1: both filings in millions, d2: any units), or in
  dollars (d3).

Probes: the shared ones of :mod:`.filings_tasks`, plus ``original_for_restated`` and
``wrong_year`` (restatement), ``swapped_companies`` and ``wrong_year`` (two companies).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance.filings_plans import Reader, annual_spec, asked_scale, doc_company
from posttrain.domains.finance.filings_tasks import DocDomain, DocField, DocPlan
from posttrain.verifiers.fields_checks import Check


def _restated_pair(rng: random.Random, difficulty: int):
    co = doc_company(rng, 3, restate=True)
    y0, y1, y2 = co["years"]
    old = annual_spec(co, rng, difficulty, years=[y1, y0], split="none" if difficulty == 1 else "repeat")
    new = annual_spec(co, rng, difficulty, years=[y2, y1], restated=y1, parts=["income", "balance"],
                      restatement_table=difficulty == 1, footnote=False)
    return co, {f"annual_{y1}.pdf": old, f"annual_{y2}.pdf": new}, (y0, y1, y2)


def restatement(rng: random.Random, difficulty: int) -> DocPlan:
    for _ in range(60):
        co, docs, (y0, y1, y2) = _restated_pair(rng, difficulty)
        before, after = co["income"][str(y1)], co["restated"]["income"]
        if after["net_income"] != before["net_income"] and co["income"][str(y0)]["revenue"] != before["revenue"]:
            break
    scale = asked_scale(co, rng, difficulty)
    (p_old, s_old), (p_new, s_new) = docs.items()
    old, new = Reader(p_old, s_old, scale), Reader(p_new, s_new, scale)
    keys = ["revenue"] + (["net_income"] if difficulty >= 2 else [])
    fields, checks, swapped = [], [], {}
    for k in keys:
        a = old.statement("income", k, y1, f"{k}_original",
                          question=f"Fiscal {y1} {k.replace('_', ' ')} as originally reported in {p_old}")
        b = new.statement("income", k, y1, f"{k}_restated",
                          question=f"Fiscal {y1} {k.replace('_', ' ')} as restated in {p_new}")
        change = DocField(_kit.amount(f"{k}_change", scale), b.value - a.value,
                          f"Restated minus originally reported fiscal {y1} {k.replace('_', ' ')}", b.read)
        fields += [a, b, change]
        checks.append(Check(f"{k}_change_reconciles", {b.spec.name: 1, a.spec.name: -1, change.spec.name: -1}))
        swapped |= {a.spec.name: b.value, b.spec.name: a.value, change.spec.name: a.value - b.value}
    wrong = {}
    for k in keys:
        a0, b2 = old.statement("income", k, y0).value, new.statement("income", k, y2).value
        wrong |= {f"{k}_original": a0, f"{k}_restated": b2, f"{k}_change": b2 - a0}
    intro = (f"{co['name']} published annual reports for fiscal {y1} (/work/{p_old}) and fiscal {y2} "
             f"(/work/{p_new}); the later report restates fiscal {y1}.")
    return DocPlan(docs, fields, intro, scale, checks,
                   traps={"original_for_restated": swapped, "wrong_year": wrong})


def _pair(rng: random.Random, difficulty: int):
    for _ in range(80):
        a, b = doc_company(rng, 3), doc_company(rng, 3)
        if a["name"] == b["name"] or (difficulty == 1 and {a["unit"], b["unit"]} != {"millions"}):
            continue
        ma = [100 * c["income"][str(c["years"][-1])]["operating_income"] / c["income"][str(c["years"][-1])]["revenue"]
              for c in (a, b)]
        if abs(ma[0] - ma[1]) > 0.5:
            return a, b
    raise RuntimeError("no company pair in 80 draws")  # pragma: no cover


def two_companies(rng: random.Random, difficulty: int) -> DocPlan:
    a, b = _pair(rng, difficulty)
    scale = 1.0 if difficulty >= 3 else 1e6
    docs, readers = {}, []
    for tag, co in (("a", a), ("b", b)):
        path = f"{co['name'].split()[0].lower()}_annual.pdf"
        docs[path] = annual_spec(co, rng, difficulty)
        readers.append((tag, co, Reader(path, docs[path], scale)))
    fields, margin, swapped, wrong = [], {}, {}, {}
    for tag, co, r in readers:
        y, prior = co["years"][-1], co["years"][-2]
        for k in ("revenue", "operating_income"):
            f = r.statement("income", k, y, f"{k}_{tag}", question=f"{co['name']}: {k.replace('_', ' ')}, fiscal {y}")
            fields.append(f)
            wrong[f.spec.name] = r.statement("income", k, prior).value
        inc = co["income"][str(y)]
        margin[co["name"]] = inc["operating_income"] / inc["revenue"]
    combined = fields[0].value + fields[2].value
    fields.append(DocField(_kit.amount("combined_revenue", scale), combined,
                           "Revenue of the two companies added together (each for its latest fiscal year)",
                           fields[0].read))
    best = max(margin, key=margin.get)
    fields.append(DocField(_kit.choice("higher_operating_margin"), best,
                           f"Which company has the higher operating margin (operating income / revenue): "
                           f"{a['name']} or {b['name']}? Answer with the company's name", fields[2].read))
    for x, y in (("revenue_a", "revenue_b"), ("operating_income_a", "operating_income_b")):
        vx, vy = next(f.value for f in fields if f.spec.name == x), next(f.value for f in fields if f.spec.name == y)
        swapped |= {x: vy, y: vx}
    swapped |= {"combined_revenue": combined * 1.5, "higher_operating_margin": best}
    wrong |= {"combined_revenue": wrong["revenue_a"] + wrong["revenue_b"], "higher_operating_margin": best}
    intro = f"The latest annual reports of {a['name']} and {b['name']} are in /work: {', '.join(docs)}."
    return DocPlan(docs, fields, intro, scale, [Check("combined_adds_up", {"revenue_a": 1, "revenue_b": 1,
                                                                           "combined_revenue": -1})],
                   traps={"swapped_companies": swapped, "wrong_year": wrong},
                   gates={"higher_operating_margin": "combined_revenue"})


register_domain(DocDomain("finance.pdf_restatement-v1", restatement,
                          description=("Comparing two PDF filings: a year's revenue as originally "
                                       'reported and as restated, and the change.')))
register_domain(DocDomain("finance.pdf_two_companies-v1", two_companies,
                          description=("Comparing two companies' PDF filings in different units: "
                                       'revenue, operating income and margin.')))
