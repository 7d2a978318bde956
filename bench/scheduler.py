"""Benchmark of the global scheduler (issue 7): decision speed and where compute goes.

1. Scheduling decisions per second with 1,000 cells (200 domains x 5 levels): the loop a
   trainer runs — ``next_cells(64)`` then one ``update`` per group of G=8 rewards — timed as
   a whole (``decisions_per_s``), and the draws alone (``decisions_per_s_sampling_only``).
   Target: 50,000/s.
2. A simulated 300-domain run. Each domain has an ability ``a`` and a true pass rate
   ``sigmoid(2 (a - level))`` per level; 20% of domains are impossible (never learn), 20%
   are solved at every level, 60% learn: each informative group (rewards not all equal)
   raises their ability by 0.01, as a group-relative gradient would. The same simulation,
   same seeds, is run with uniform sampling over all cells as the baseline. Reported:
   ``learnable_share`` (share of samples spent on cells whose true pass rate was in
   (0.1, 0.9) when sampled), the uniform baseline's, ``starved_domains`` (domains that got
   less than half of their floor share), the fewest samples any domain got, and the mean
   ability gained by learning domains.

Last line: one JSON object with the key figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from posttrain.scheduler import Curriculum, CurriculumDomain  # noqa: E402

FAMILIES = ["math", "code", "logic", "instructions", "tools", "long_horizon", "science", "sql"]


def decision_speed(seconds: float, batch: int = 64) -> dict[str, float]:
    doms = [CurriculumDomain(f"math.d{i}-v1", "math", (1, 2, 3, 4, 5)) for i in range(200)]
    cur = Curriculum(doms, {"seed": 0})
    rng = np.random.default_rng(0)
    pool = [(rng.random(8) < p).astype(float).tolist() for p in rng.random(4096)]
    n, k, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for d, diff in cur.next_cells(batch):
            cur.update(d, diff, pool[k & 4095])
            k += 1
        n += batch
    loop = n / (time.perf_counter() - t0)
    m, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds / 2:
        m += len(cur.next_cells(batch))
    only = m / (time.perf_counter() - t0)
    m, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds / 2:
        d, diff = cur.next_cells(1)[0]
        cur.update(d, diff, pool[m & 4095])
        m += 1
    single = m / (time.perf_counter() - t0)
    return dict(decisions_per_s=loop, decisions_per_s_sampling_only=only,
                decisions_per_s_batch1_with_update=single, cells=len(cur.cells), batch=batch)


class World:
    """True pass rates that move as the policy learns from informative groups."""

    def __init__(self, n_domains: int, levels: int, seed: int):
        rng = np.random.default_rng(seed)
        kind = rng.choice(3, size=n_domains, p=[0.2, 0.2, 0.6])  # impossible, solved, learnable
        self.ability = np.where(kind == 0, -4.0, np.where(kind == 1, levels + 5.0,
                                                          rng.uniform(0.5, 2.5, n_domains)))
        self.ability0 = self.ability.copy()
        self.learns = kind == 2
        self.rng = np.random.default_rng(seed + 1)

    def pass_rate(self, d: int, level: int) -> float:
        return float(1.0 / (1.0 + np.exp(-2.0 * (self.ability[d] - level))))

    def rollout(self, d: int, level: int, g: int) -> tuple[list[float], float]:
        p = self.pass_rate(d, level)
        rewards = (self.rng.random(g) < p).astype(float).tolist()
        if self.learns[d] and max(rewards) > min(rewards):
            self.ability[d] += 0.01
        return rewards, p


def simulate(policy: str, n_domains: int, decisions: int, seed: int) -> dict[str, float]:
    levels = (1, 2, 3, 4, 5)
    world = World(n_domains, len(levels), seed)
    doms = [CurriculumDomain(f"{FAMILIES[i % len(FAMILIES)]}.d{i}-v1", FAMILIES[i % len(FAMILIES)],
                             levels) for i in range(n_domains)]
    index = {d.id: i for i, d in enumerate(doms)}
    cur = Curriculum(doms, {"seed": seed})
    cells = cur.cells
    rng = np.random.default_rng(seed + 2)
    per_domain = np.zeros(n_domains, dtype=np.int64)
    learnable, step, done = 0, 0, 0
    while done < decisions:
        cur.set_step(step)
        if policy == "curriculum":
            batch = cur.next_cells(64)
        else:
            batch = [cells[i] for i in rng.integers(0, len(cells), 64)]
        for dom, diff in batch:
            d = index[dom]
            rewards, p = world.rollout(d, diff, 8)
            learnable += 0.1 < p < 0.9
            per_domain[d] += 1
            cur.update(dom, diff, rewards)
        done += len(batch)
        step += 1
    floor_each = cur.config.floor_share / n_domains * done
    return dict(learnable_share=learnable / done,
                starved_domains=int(np.count_nonzero(per_domain < 0.5 * floor_each)),
                min_domain_samples=int(per_domain.min()),
                ability_gain=float(np.mean((world.ability - world.ability0)[world.learns])),
                promotions=int(cur.counters["promotions"]), demotions=int(cur.counters["demotions"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter run for a smoke check")
    args = ap.parse_args()
    seconds = 1.0 if args.quick else 3.0
    decisions = 20_000 if args.quick else 90_000
    speed = decision_speed(seconds)
    print(f"decision speed (1,000 cells): {speed['decisions_per_s']:,.0f}/s with updates, "
          f"{speed['decisions_per_s_sampling_only']:,.0f}/s draws only, "
          f"{speed['decisions_per_s_batch1_with_update']:,.0f}/s one at a time", flush=True)
    t0 = time.perf_counter()
    cur = simulate("curriculum", 300, decisions, seed=0)
    uni = simulate("uniform", 300, decisions, seed=0)
    print(f"300 domains, {decisions:,} groups: learnable share {cur['learnable_share']:.3f} "
          f"(uniform {uni['learnable_share']:.3f}); starved domains {cur['starved_domains']}; "
          f"fewest samples of a domain {cur['min_domain_samples']} (uniform {uni['min_domain_samples']}); "
          f"ability gain {cur['ability_gain']:.3f} (uniform {uni['ability_gain']:.3f}) "
          f"[{time.perf_counter() - t0:.1f} s]", flush=True)
    out = dict(decisions_per_s=round(speed["decisions_per_s"]),
               decisions_per_s_sampling_only=round(speed["decisions_per_s_sampling_only"]),
               decisions_per_s_batch1_with_update=round(speed["decisions_per_s_batch1_with_update"]),
               cells=speed["cells"], batch=speed["batch"], target_decisions_per_s=50_000,
               sim_domains=300, sim_groups=decisions,
               learnable_share=round(cur["learnable_share"], 4),
               learnable_share_uniform=round(uni["learnable_share"], 4),
               learnable_share_ratio=round(cur["learnable_share"] / max(uni["learnable_share"], 1e-9), 3),
               starved_domains=cur["starved_domains"], starved_domains_uniform=uni["starved_domains"],
               min_domain_samples=cur["min_domain_samples"],
               ability_gain=round(cur["ability_gain"], 4), ability_gain_uniform=round(uni["ability_gain"], 4),
               promotions=cur["promotions"], demotions=cur["demotions"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
