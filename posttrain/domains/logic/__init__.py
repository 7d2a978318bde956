"""Logic domains (family ``logic``): propositional reasoning, deduction puzzles, constraint grids and plans.

Each module registers its domains on import; :func:`posttrain.domains.base.load_builtin_domains`
imports them all.
"""
