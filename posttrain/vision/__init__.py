"""posttrain.vision: the built-in tiny vision-language model and the images it pre-trains on.

``tiny_vlm`` (a LLaVA-style model + processor built from a config, no downloads) and
``render`` (procedural images with questions and answers: shapes, bar charts, parts).
Layer 6 (DESIGN.md §2), beside ``models``: it may import core, inference and models. The
backend that samples from any VLM is :mod:`posttrain.inference.vlm`; the foundation build
that pre-trains the tiny VLM is :mod:`posttrain.foundation.vision`.
"""
