"""Reversing a string of lowercase letters: ``rev abc=`` → ``cba`` (``text_data.reverse-v1``).

Trains: reading a string of lowercase letters and writing it back to front (a pure
position-copying skill). Difficulty d = string length 3/5/7/9 for d1..d4. Palindromes are
never generated: on them copying the input would earn credit without reversing anything.

Does not cover: spaces, punctuation, Unicode, case, or reversing words rather than characters.
The verifier is strict exact match of the whole answer, case-sensitive: ``CBA``, ``c b a`` or
the unreversed input all score 0. No partial credit for a partly reversed string.
"""

from __future__ import annotations

import random
import string
from typing import Any

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._kit import LENGTHS, distinct_probes, strict_check



def _reverse(rng: random.Random, difficulty: int) -> Draft:
    n = LENGTHS[difficulty]
    while True:
        s = "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
        if s != s[::-1]:
            break
    return Draft(f"rev {s}=", answer=s[::-1], public={"text": s})


def _reverse_exploits(task: Task) -> dict[str, Any]:
    s = task.public["text"]
    ref = s[::-1]
    return distinct_probes(task, {
        "copy_input": s,
        "upper_case": ref.upper(),
        "spaced": " ".join(ref),
        "with_input": f"{ref} {s}",
        "sorted_letters": "".join(sorted(s)),
        "truncated": ref[:-1],
        "rotated": ref[1:] + ref[:1],
    })


register_domain(SingleTurnDomain("text_data.reverse-v1", _reverse, strict_check, _reverse_exploits,
                                 description=__doc__, difficulties=(1, 2, 3, 4)))
