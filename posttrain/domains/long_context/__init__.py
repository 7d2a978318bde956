"""Long-context domains (family ``long_context``): retrieval and multi-hop questions over long
generated documents (a staff handbook, a move log); difficulty is length (~3k to ~90k
characters) and distractor density (near-miss names, revoked codes, look-alike identifiers).

Modules: :mod:`.retrieval` (needle, multi-needle), :mod:`.reasoning` (multi-hop, aggregate,
latest state).
"""
