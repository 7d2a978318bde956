"""Algorithm domains (family ``algorithms``): graphs, dynamic programming, arrays, simulations.

Each module registers its domains on import; :func:`posttrain.domains.base.load_builtin_domains`
imports them all. ``algorithms.sort-v1`` lives in :mod:`posttrain.domains.basic`.
"""
