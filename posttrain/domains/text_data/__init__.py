"""Text and data-format domains (family ``text_data``): regex synthesis, CSV/JSON/XML transforms,
dates, string transforms, encodings and record normalisation.

Modules: :mod:`.regex`, :mod:`.formats` (CSV/JSON/XML), :mod:`.dates`, :mod:`.strings`,
:mod:`.encodings` (base64, hex, Luhn, Roman, Morse), :mod:`.parsing` (numbers, IPv4, URLs,
phones, word frequencies). Every domain is a
:class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` record registered on import;
:mod:`._kit` holds the shared checkers and references. ``text_data.reverse-v1`` lives in
:mod:`posttrain.domains.basic`.
"""
