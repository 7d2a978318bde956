"""Real-tier filing domains over the notes and footnotes of one PDF annual report.

- ``finance.pdf_segments-v1`` — revenue of every segment (Note 2) and the segment total,
  checked to reconcile (segments sum to the total); d3 also revenue from the statement of
  operations, checked equal to the segment total.
- ``finance.pdf_footnotes-v1`` — the restructuring charges stated in footnote (1) under the
  statement of operations (read as page text, not a table), SG&A from the table, and SG&A
  excluding restructuring (checked: SG&A = restructuring + the rest); d3 adds operating income
  before restructuring (checked too).
- ``finance.pdf_note_scale-v1`` — the notes use another scale than the statements (a filing in
  thousands whose notes are in millions with one decimal, or the reverse); segment revenue,
  the first debt maturity and revenue, all in one asked unit.

Difficulty: the layout of :mod:`.filings_plans` and the asked unit. Probes: the shared ones of
:mod:`.filings_tasks` plus ``wrong_year`` (the same fields for another fiscal year).
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.domains.finance.filings_plans import Reader, annual_spec, asked_scale, distinct, doc_company
from posttrain.domains.finance.filings_tasks import DocDomain, DocField, DocPlan
from posttrain.verifiers.fields_checks import Check

PATH = "filing.pdf"


def _company(rng: random.Random, difficulty: int, keys: list[str], **extra):
    for _ in range(60):
        co = doc_company(rng, 3)
        spec = annual_spec(co, rng, difficulty, **extra)
        year, other = spec["years"][0], spec["years"][1]
        segs_differ = all(co["segments"][str(year)][s] != co["segments"][str(other)][s] and
                          co["segments"][str(year)][s] > 0 for s in co["segments"][str(year)])
        ex = co["extras"]
        if distinct(co, "income", keys, year, other) and segs_differ and \
                ex[str(year)]["restructuring"] != ex[str(other)]["restructuring"]:
            return co, spec, year, other
    raise RuntimeError("no suitable company in 60 draws")  # pragma: no cover


def _intro(co, spec) -> str:
    return f"The annual report of {co['name']} for fiscal {spec['years'][0]} is in /work/{PATH}."


def _segment_fields(r: Reader, year: int) -> list[DocField]:
    co = r.co
    out = []
    for s in sorted(co["segments"][str(year)]):
        out.append(r.note_amount("segments", s, co["segments"][str(year)][s], f"segment_{s.lower()}",
                                 f"Revenue of the {s} segment for fiscal {year} (Note 2)"))
    out.append(r.note_amount("segments", "Total segment revenue", co["income"][str(year)]["revenue"],
                             "segment_total", f"Total segment revenue for fiscal {year}"))
    return out


def segments(rng: random.Random, difficulty: int) -> DocPlan:
    co, spec, year, other = _company(rng, difficulty, ["revenue"], notes=True)
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    fields = _segment_fields(r, year)
    terms = {f.spec.name: 1.0 for f in fields[:-1]} | {"segment_total": -1.0}
    checks = [Check("segments_sum_to_total", terms)]
    if difficulty >= 3:
        fields.append(r.statement("income", "revenue", year))
        checks.append(Check("segments_match_revenue", {"segment_total": 1, "revenue": -1}))
    wrong = {f.spec.name: f.value for f in _segment_fields(r, other)}
    wrong["revenue"] = r.statement("income", "revenue", other).value
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, checks, traps={"wrong_year": wrong})


def _footnote_fields(r: Reader, year: int, difficulty: int) -> list[DocField]:
    co = r.co
    restr = co["extras"][str(year)]["restructuring"]
    inc = co["income"][str(year)]
    page = r.layout.block_pages["income:footnotes"][0]
    fields = [r.text_amount(restr, page, "restructuring", f"Restructuring charges in fiscal {year} (footnote 1)"),
              r.statement("income", "sga", year),
              r.text_amount(inc["sga"] - restr, page, "sga_excluding_restructuring",
                            f"SG&A expense excluding restructuring charges, fiscal {year}")]
    if difficulty >= 3:
        fields += [r.statement("income", "operating_income", year),
                   r.text_amount(inc["operating_income"] + restr, page, "operating_income_before_restructuring",
                                 f"Operating income before restructuring charges, fiscal {year}")]
    return fields


def footnotes(rng: random.Random, difficulty: int) -> DocPlan:
    co, spec, year, other = _company(rng, difficulty, ["sga", "operating_income"], footnote=True)
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    fields = _footnote_fields(r, year, difficulty)
    checks = [Check("sga_splits", {"sga": 1, "restructuring": -1, "sga_excluding_restructuring": -1})]
    if difficulty >= 3:
        checks.append(Check("operating_income_adds_back", {"operating_income": 1, "restructuring": 1,
                                                           "operating_income_before_restructuring": -1}))
    wrong = {f.spec.name: f.value for f in _footnote_fields(r, other, difficulty)}
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, checks, traps={"wrong_year": wrong})


def note_scale(rng: random.Random, difficulty: int) -> DocPlan:
    co, spec, year, other = _company(rng, difficulty, ["revenue"], notes=True)
    spec["note_scale"] = "millions" if co["unit"] == "thousands" else "thousands"
    scale = asked_scale(co, rng, difficulty)
    r = Reader(PATH, spec, scale)
    seg = sorted(co["segments"][str(year)])
    names = seg[:1] if difficulty == 1 else seg[:2]
    fields = [r.note_amount("segments", s, co["segments"][str(year)][s], f"segment_{s.lower()}",
                            f"Revenue of the {s} segment for fiscal {year} (Note 2)") for s in names]
    first = min(co["maturities"], key=int)
    fields.append(r.note_amount("debt", first, co["maturities"][first], "debt_due_next_year",
                                f"Principal of total debt due in {first} (Note 3)"))
    fields.append(r.statement("income", "revenue", year))
    wrong = {f"segment_{s.lower()}": r.note_amount("segments", s, co["segments"][str(other)][s], "x", "").value
             for s in names}
    wrong["revenue"] = r.statement("income", "revenue", other).value
    return DocPlan({PATH: spec}, fields, _intro(co, spec), scale, traps={"wrong_year": wrong})


register_domain(DocDomain("finance.pdf_segments-v1", segments,
                          description=("Reading segment revenue from a PDF filing's notes so that the "
                                       'segments reconcile to the total.')))
register_domain(DocDomain("finance.pdf_footnotes-v1", footnotes,
                          description=("Reading restructuring charges from a PDF filing's footnote "
                                       'text and separating them from SG&A.')))
register_domain(DocDomain("finance.pdf_note_scale-v1", note_scale,
                          description=('Reading figures from PDF notes kept at another scale than the '
                                       'statements, all in one asked unit.')))
