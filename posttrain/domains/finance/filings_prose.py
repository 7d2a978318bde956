"""The prose of a long filing: risk factors, management's discussion, accounting policies.

What it is: :func:`section` writes ``paragraphs`` paragraphs of plausible annual-report prose
about one company from a bank of sentence templates, and :func:`discussion` writes the
management's discussion with its distractor figures (quarterly revenue, an adjusted non-GAAP
operating income, backlog): numbers in the statements' scale that are never the answer to a
question about the statements. These pad a filing past 30 pages so that long-context
questions must search it.

Guarantees: deterministic given the ``random.Random``; ASCII only (the PDF's core fonts are
Latin-1); no sentence states a figure of the statements or notes (the distractors are drawn
away from them: the adjusted figure is 8-30 % above operating income).
Does not: read like a real filing beyond the sentence level.
"""

from __future__ import annotations

import random
from typing import Any

RISKS = [
    "Demand for our products in the {seg} segment depends on customer capital budgets, which can fall sharply in a downturn.",
    "We rely on a limited number of suppliers for certain components; a disruption at any of them could delay shipments.",
    "Changes in foreign exchange rates affect the translation of results of operations outside the United States.",
    "Our indebtedness requires us to dedicate part of our cash flow to interest and principal payments.",
    "Cyber attacks on our systems or on those of our vendors could disrupt operations and expose confidential data.",
    "Competition in the {seg} market is intense, and competitors may introduce products at lower prices.",
    "We may not realise the expected benefits of acquisitions, and integration may divert management attention.",
    "Changes in tax law in the jurisdictions where we operate could increase our effective tax rate.",
    "Our ability to attract and retain qualified personnel is important to the execution of our strategy.",
    "Climate-related regulation may increase our operating costs and capital expenditures over time.",
    "Litigation and regulatory proceedings are subject to inherent uncertainty, and unfavourable outcomes could be material.",
    "Impairment of goodwill or other intangible assets would reduce reported earnings in the period recognised.",
]
POLICIES = [
    "Revenue is recognised when control of the promised goods or services transfers to the customer.",
    "Inventories are stated at the lower of cost, determined on a first-in, first-out basis, and net realisable value.",
    "Property, plant and equipment is depreciated on a straight-line basis over estimated useful lives.",
    "Goodwill is tested for impairment annually in the fourth quarter, or earlier when indicators arise.",
    "Receivables are recorded net of an allowance for expected credit losses based on historical experience.",
    "Income taxes are accounted for under the asset and liability method.",
    "Foreign-currency assets and liabilities are translated at year-end rates; results at average rates.",
    "Share-based awards are measured at grant-date fair value and expensed over the service period.",
    "Leases with terms longer than twelve months are recognised as right-of-use assets and lease liabilities.",
    "Cash equivalents are highly liquid investments with original maturities of three months or less.",
]
GENERAL = [
    "Management of {name} believes that its {seg} operations are well placed for the coming years.",
    "During fiscal {year} the company continued to invest in automation at its principal facilities.",
    "The board of directors reviews the allocation of capital between reinvestment and returns to shareholders.",
    "Customer retention in the {seg} segment remained above the level of the prior year.",
    "The company operates principal facilities in several regions and leases most of its office space.",
    "Seasonality affects the {seg} segment, whose sales are typically highest in the fourth quarter.",
    "The audit committee met regularly with the independent registered public accounting firm.",
    "Our code of conduct applies to all employees, officers and directors of {name}.",
    "Pricing actions taken in fiscal {year} offset part of the increase in input costs.",
    "The company maintains a revolving credit facility that was undrawn during most of fiscal {year}.",
]


def _fill(template: str, co: dict[str, Any], rng: random.Random) -> str:
    segs = sorted(co["segments"][str(co["years"][-1])])
    return template.format(seg=rng.choice(segs), name=co["name"], year=rng.choice(co["years"]))


def section(co: dict[str, Any], rng: random.Random, kind: str, paragraphs: int) -> list[str]:
    """``paragraphs`` paragraphs of 4-7 sentences from the ``kind`` bank (risks, policies, general)."""
    bank = {"risks": RISKS, "policies": POLICIES}.get(kind, GENERAL)
    out = []
    for _ in range(paragraphs):
        sentences = [_fill(rng.choice(bank), co, rng) for _ in range(rng.randint(4, 7))]
        sentences.append(_fill(rng.choice(GENERAL), co, rng))
        out.append(" ".join(sentences))
    return out


def discussion(co: dict[str, Any], rng: random.Random, year: int) -> list[str]:
    """Management's discussion for ``year`` with distractor figures (see the module docstring)."""
    inc = co["income"][str(year)]
    rev = inc["revenue"]
    cuts = sorted(rng.uniform(0.2, 0.3) for _ in range(3))
    quarters = [round(rev * c) for c in cuts]
    adjusted = round(inc["operating_income"] * rng.uniform(1.08, 1.3))
    backlog = round(rev * rng.uniform(0.4, 1.1))
    unit = co["unit"]
    return [
        f"Revenue for the first three quarters of fiscal {year} was {quarters[0]:,}, {quarters[1]:,} and "
        f"{quarters[2]:,} (in {unit}) respectively; the fourth quarter is discussed below.",
        f"Adjusted operating income, a non-GAAP measure that excludes restructuring and acquisition-related "
        f"charges, was {adjusted:,} (in {unit}) in fiscal {year}. It is not a substitute for operating "
        "income as reported in the consolidated statements of operations.",
        f"Order backlog at the end of fiscal {year} stood at {backlog:,} (in {unit}), most of which we "
        "expect to convert to revenue within twelve months.",
    ] + section(co, rng, "general", 2)
