"""3D-modelling domains (family ``geometry3d``): the policy writes a script in a small
constructive-geometry language (:mod:`posttrain.verifiers.geometry`) to meet a specification;
the verifier interprets it with bounded resources, voxelises it, measures it (volume, bounds,
holes, cavities, pieces, symmetry, IoU against a hidden target) and scores the fraction of
constraints met. :func:`.render.render_png` draws a script as a PNG for "look and correct"
multi-turn environments.

Modules: :mod:`._kit` (the scorer, shared probes and the record constructor), :mod:`.parts`
(drilled plates, volume fitting, shells), :mod:`.assemblies` (tables, stepped shafts),
:mod:`.forms` (stacks, stairs, pyramids, a rook, mirrored parts), :mod:`.mechanical` (brackets,
flanges, tubes, wheels, counterbores), :mod:`.spatial_reasoning` (area, centroid, envelopes,
bridges, housings), :mod:`.render`; the real-tier CAD domains (``cad_*``, their own kit
:mod:`.cad_kit`: a build123d sandbox episode) and the visual :mod:`.render_matching`.
"""
