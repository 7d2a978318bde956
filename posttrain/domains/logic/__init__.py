"""Logic domains (family ``logic``): propositional reasoning, deduction puzzles, constraint grids and plans.

Modules: ``propositional`` (evaluation, truth tables, equivalence, SAT, model counting,
circuits), ``deduction`` (family relations, forward chaining, set algebra), ``puzzles``
(knights and knaves, zebra, ordering, syllogisms), ``grids`` (futoshiki, magic squares,
nonograms, binary puzzles), ``constraints`` (seating, precedence schedules, water jugs,
cryptarithms, graph colouring). Every domain is a
:class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` record.

Each module registers its domains on import; :func:`posttrain.domains.base.load_builtin_domains`
imports them all.
"""
