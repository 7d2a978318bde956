"""games.nim_move-v1: give a move that leaves Nim heaps with XOR 0 (any such move is right)."""
import random
from functools import reduce
from operator import xor

from posttrain.core.types import Score
from posttrain.domains import make_task, register_domain
from posttrain.verifiers.text import extract_answer


@register_domain
class NimMove:
    id, family, difficulties, env_kind = "games.nim_move-v1", "games", (1, 2, 3), "single_turn"

    def generate(self, rng: random.Random, difficulty: int):
        heaps = [0]
        while not reduce(xor, heaps):  # only positions that have a winning move
            heaps = [rng.randint(1, 4 * difficulty + 3) for _ in range(difficulty + 2)]
        return make_task(self.id, difficulty, f"Nim heaps: {' '.join(map(str, heaps))}. Answer "
                         "'HEAP COUNT' (heap numbered from 1): take COUNT >= 1 objects from that "
                         "heap so that the XOR of all heaps becomes 0.", public={"heaps": heaps})

    def solve(self, task):
        heaps, x = task.public["heaps"], reduce(xor, task.public["heaps"])
        i = next(i for i, h in enumerate(heaps) if h ^ x < h)
        return f"{i + 1} {heaps[i] - (heaps[i] ^ x)}"

    def score(self, task, answer):
        heaps, parts = list(task.public["heaps"]), extract_answer(answer).split()
        ok = len(parts) == 2 and all(p.isdigit() for p in parts)
        i, k = (int(parts[0]) - 1, int(parts[1])) if ok else (-1, 0)
        ok = ok and 0 <= i < len(heaps) and 1 <= k <= heaps[i]
        if ok:
            heaps[i] -= k
        return Score(float(ok and reduce(xor, heaps) == 0), verifier_version=self.id)

    def probes(self, task):  # wrong moves a lazy policy might try; each must score 0
        h = task.public["heaps"]
        return {"too_many": f"1 {h[0] + 1}", "take_none": "1 0", "no_heap": f"{len(h) + 1} 1",
                "two_moves": self.solve(task) + " 1 1"}
