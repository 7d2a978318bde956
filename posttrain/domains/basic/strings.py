"""String reversal: ``text_data.reverse-v1`` — ``rev abc=`` → ``cba``.

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

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ._common import distinct_probes, strict_score

LENGTHS = {1: 3, 2: 5, 3: 7, 4: 9}


@register_domain
class Reverse:
    id = "text_data.reverse-v1"
    family = "text_data"
    difficulties = (1, 2, 3, 4)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = LENGTHS[difficulty]
        while True:
            s = "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
            if s != s[::-1]:
                break
        return make_task(self.id, difficulty, f"rev {s}=", answer=s[::-1], public={"text": s})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return strict_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, Any]:
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
