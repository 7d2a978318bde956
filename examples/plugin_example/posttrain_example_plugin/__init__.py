"""Winning moves in Nim, ``games.nim_move-v1``: a third-party posttrain domain plugin.

``heaps 3 5 6`` -> any move ``HEAP COUNT`` that leaves the heaps' XOR at 0 (here ``1 2``).
Many answers are correct, so the verifier checks the move instead of matching one label.
"""
import random
from functools import reduce

from posttrain.core.types import Score
from posttrain.domains import make_task, register_domain
from posttrain.verifiers.text import extract_answer


@register_domain
class NimMove:
    id, family, difficulties, env_kind = "games.nim_move-v1", "games", (1, 2, 3), "single_turn"

    def generate(self, rng: random.Random, difficulty: int):
        while True:  # only positions with a winning move (XOR != 0)
            heaps = [rng.randint(1, 4 * difficulty + 3) for _ in range(difficulty + 2)]
            if reduce(int.__xor__, heaps):
                break
        text = " ".join(map(str, heaps))
        prompt = (f"Nim heaps: {text}. A move takes COUNT >= 1 objects from one heap. Answer "
                  "'HEAP COUNT' (heaps numbered from 1) for a move after which the XOR of all "
                  "heaps is 0.")
        return make_task(self.id, difficulty, prompt, public={"heaps": heaps})

    def solve(self, task):
        heaps = task.public["heaps"]
        x = reduce(int.__xor__, heaps)
        i = next(i for i, h in enumerate(heaps) if h ^ x < h)
        return f"{i + 1} {heaps[i] - (heaps[i] ^ x)}"

    def score(self, task, answer):
        heaps, parts = list(task.public["heaps"]), extract_answer(answer).split()
        ok = len(parts) == 2 and all(p.isdigit() for p in parts)
        i, k = (int(parts[0]) - 1, int(parts[1])) if ok else (-1, 0)
        if ok and 0 <= i < len(heaps) and 1 <= k <= heaps[i]:
            heaps[i] -= k
            ok = reduce(int.__xor__, heaps) == 0
        else:
            ok = False
        return Score(1.0 if ok else 0.0, reason="winning move" if ok else "not a winning move",
                     verifier_version=self.id)

    def probes(self, task):
        heaps = task.public["heaps"]
        return {"too_many": f"1 {heaps[0] + 1}", "take_none": "1 0", "heap_zero": "0 1",
                "no_such_heap": f"{len(heaps) + 1} 1", "two_moves": self.solve(task) + " 1 1"}
