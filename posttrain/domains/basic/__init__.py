"""The foundation domains: tiny, compact single-turn tasks a character-level model can learn.

``math.add-v1``, ``math.sub-v1``, ``math.mul-v1``, ``math.compare-v1``,
``text_data.reverse-v1`` and ``algorithms.sort-v1``. Prompts are one short user message with no
system prompt (``12+34=`` → ``46``), so the built-in ~1.8M-parameter tiny model of the
quickstart can learn them by SFT cold start and then RL.

Every verifier here is strict exact match of the whole stripped answer (the last
``<answer>...</answer>`` block if there is one, see
:func:`posttrain.verifiers.text.extract_answer`), case- and character-exact after whitespace
collapsing. There is no partial credit: a near-miss ("45" for "46") is as wrong as garbage,
because these are one-token-class answers where partial credit would only reward guessing.
"""

from . import arithmetic, compare, lists, strings  # noqa: F401  (registration side effects)
