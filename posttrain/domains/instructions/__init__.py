"""Instruction-following and format domains (family ``instructions``): verifiable constraints
(length, keywords, casing, sections, lists, letters, JSON-Schema compliance, forbidden words)
with partial credit per constraint behind a substance gate
(:mod:`posttrain.verifiers.constraints`).

Modules: :mod:`.text` (constrained prose, sections, lists, letters), :mod:`.prose` (the form
of prose: counts, acrostics, lipograms, poems, combined constraints), :mod:`.layout`
(outlines, sections, parts, placement, e-mails), :mod:`.templates` (forms, line regexes),
:mod:`.formats` (records as CSV, markdown, JSON Lines, XML, YAML), :mod:`.schema` (JSON
Schema). Every domain is a :class:`~posttrain.domains.kit.single_turn.SingleTurnDomain`
record; :mod:`._kit` holds the shared writers, phrasing, scorer and probes.
"""
