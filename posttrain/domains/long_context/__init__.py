"""Long-context domains (family ``long_context``): retrieval and multi-hop questions over long
generated documents (a staff handbook, a move log, logs, code bases, registers, regulations);
difficulty is length (~3k to ~90k characters) and distractor density (near-miss names, revoked
codes, look-alike identifiers).

Modules: :mod:`.retrieval` (needle, multi-needle), :mod:`.reasoning` (multi-hop, aggregate,
latest state), :mod:`.logs` (conditional counts, timelines, statistics), :mod:`.scanning`
(callers, duplicates, config diffs), :mod:`.documents` (joins, contradictions,
cross-references, overrides), :mod:`.filings` (a long PDF annual report, real tier).
:mod:`._corpus` writes the documents; :mod:`._kit` holds the record constructor, checkers and
probes every single-turn domain here is built from.
"""
