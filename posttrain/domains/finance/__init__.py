"""Financial-document domains (family ``finance``): generated filings with three linked
statements and notes in plain-text, markdown or HTML tables; questions needing extraction,
ratios, growth, cross-statement reconciliation and notes. Answers are one JSON object scored
field by field with unit/scale normalisation (:mod:`posttrain.verifiers.fields`).

Modules: :mod:`.statements` (extract, ratios, growth), :mod:`.checks` (crosscheck, notes).
"""
