"""Code domains (family ``code``): function synthesis and bug repair, single- and multi-turn.

Hidden tests run after the episode in a fresh sandbox; see :mod:`posttrain.verifiers.code`
for the reward (static gate, baseline-corrected hidden pass rate, efficiency and style) and
:mod:`posttrain.domains.code._kit` for the shared probes.
"""
