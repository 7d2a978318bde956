"""Financial-document domains (family ``finance``): generated filings with three linked
statements and notes in plain-text, markdown or HTML tables; questions needing extraction,
ratios, growth, cross-statement reconciliation and notes. Answers are one JSON object scored
field by field with unit/scale normalisation (:mod:`posttrain.verifiers.fields`).

Modules: :mod:`._kit` (fields, task building, the shared check and probes, the record
constructor :func:`._kit.field_domain`), :mod:`.statements` (extract, ratios, growth),
:mod:`.checks` (crosscheck, notes), :mod:`.ratio_analysis` (liquidity, efficiency, DuPont,
EBITDA), :mod:`.cash_flow` (free cash flow, working-capital change), :mod:`.composition`
(segment mix, common size), :mod:`.per_share` (dividends, EPS dilution), :mod:`.instruments`
(loans, NPV/IRR, bonds, depreciation, leases), :mod:`.costing` (break-even, inventory, FX
translation, tax), :mod:`.operations` (budget variance, invoices, bank reconciliation,
payroll), :mod:`.chart_reading` (visual: reading charts); the real-tier PDF filings
(``filings_*``: a document-tool episode, :class:`.filings_tasks.DocDomain`).
"""
