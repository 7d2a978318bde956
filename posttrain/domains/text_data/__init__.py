"""Text and data-format domains (family ``text_data``): regex synthesis, CSV/JSON/XML transforms,
dates, string transforms, encodings and record normalisation.

Each module registers its domains on import. ``text_data.reverse-v1`` lives in
:mod:`posttrain.domains.basic`.
"""
