"""Instruction-following and format domains (family ``instructions``): verifiable constraints
(length, keywords, casing, sections, lists, letters, JSON-Schema compliance, forbidden words)
with partial credit per constraint behind a substance gate
(:mod:`posttrain.verifiers.constraints`).

Modules: :mod:`.text` (constrained prose, sections, lists, letters), :mod:`.schema` (JSON).
"""
