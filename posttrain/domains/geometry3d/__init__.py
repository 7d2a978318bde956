"""3D-modelling domains (family ``geometry3d``): the policy writes a script in a small
constructive-geometry language (:mod:`posttrain.verifiers.geometry`) to meet a specification;
the verifier interprets it with bounded resources, voxelises it, measures it (volume, bounds,
holes, cavities, pieces, symmetry, IoU against a hidden target) and scores the fraction of
constraints met. :func:`.render.render_png` draws a script as a PNG for "look and correct"
multi-turn environments.

Modules: :mod:`.parts` (drilled plates, volume fitting, shells), :mod:`.assemblies` (tables,
stepped shafts), :mod:`.render`.
"""
