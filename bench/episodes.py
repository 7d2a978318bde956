"""Benchmark: multi-turn sandboxed episodes through the one engine vs one episode at a time.

What runs. 32 episodes (8 domains x 4 seeds) of multi-turn sandboxed domains — terminal
tasks checked by the final file system, code repair against hidden tests, long-horizon
sessions — each playing its domain's reference trajectory, so every episode makes its real
tool calls in a real bubblewrap sandbox and is verified on its live env. The policy pays
the real generation cost of the built-in tiny model for every action: each backend call runs
the HF backend's batched decode — each row as many tokens as its own action has characters
(the built-in tokenizer is character-level; ``prompt_max_new_tokens``, as a real model's row
ends at its own EOS), at most ``--new-tokens``, on a fixed short prompt, because the
256-position tiny model cannot read these tasks' prompts — and then returns the scripted
action. The paced policy declares what the HF backend declares (per-prompt tools, seeds and
budgets), so the engine batches it exactly as it batches that backend: generation batches
the way a real model's would, and the sandbox work is exactly the episodes' own.

What is compared, in one run, interleaved (``--repeats`` rounds of A then B):
- ``engine``: one ``play_groups`` call with all 32 tasks — generation batched across every
  episode that waits for the policy, env steps and verifications on the env pool, up to
  ``--concurrency`` sandboxed episodes live at once;
- ``lockstep``: the same call with ``overlap_env_steps`` off (every round generates for all
  episodes, then steps them all): what starting a step as soon as its action is out adds;
- ``serial``: the same engine given one task at a time (the way a loop over episodes runs).

Reported: episodes/s of each, the speed-up, and where the engine's wall time goes (the
share of wall time in generation, in env steps and in waiting for the last verifications;
verification of ended episodes overlaps the other stages). Target: >= 4x at 32 concurrent
episodes. Last line: one JSON object with ``speedup``, ``episodes_per_s`` (the engine's),
``serial_episodes_per_s`` and the shares.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace

DOMAINS = (
    "terminal.organize-v1", "terminal.extract-v1", "terminal.permissions-v1",
    "code.bug_repair_repl-v1", "code.tdd_doctest-v1",
    "long_horizon.data_pipeline-v1", "long_horizon.incident-v1", "long_horizon.cli_flag-v1",
)


class PacedScript:
    """The scripted reference policy, paying the tiny model's batched decode per call."""

    def __init__(self, tasks, hf, new_tokens: int):
        from posttrain.rollout import ScriptedPolicy

        self.script = ScriptedPolicy(tasks, lambda t: _domain(t).reference_actions(t))
        self.hf, self.new_tokens = hf, new_tokens
        # The pace is the action's length, not the tiny model's random EOS: with EOS on, a row
        # stopped wherever its sample hit EOS (and every one-row call drew the same stream, so
        # one at a time stopped early far more often) — the two modes did different work.
        hf.eos_ids = frozenset()
        # The engine must batch this policy exactly as it batches the HF backend it paces with:
        # one call per round for episodes of every tool list and turn (without these the
        # engine split each round by domain, 8 calls of 4 prompts instead of 1 of 32).
        self.per_prompt_tools = hf.per_prompt_tools
        self.per_prompt_seeds = hf.per_prompt_seeds
        self.per_prompt_budgets = hf.per_prompt_budgets
        self.streams_prompts = hf.streams_prompts  # a row's action is out when its pace ends
        self.policy_version = 0
        self.tokenizer = None

    def generate(self, prompts, params, on_prompt=None):
        from posttrain.inference.base import SamplingParams

        out = self.script.generate(prompts, params)
        # each row decodes as many tokens as its action has characters (the built-in tokenizer
        # is character-level), within the tiny model's 256 positions: a real model's rows end
        # at their own EOS, so a short action does not pay for the call's longest one
        steps = tuple(max(1, min(self.new_tokens, len(g[0].text))) for g in out)
        filler = [[{"role": "user", "content": "pace " * 12}]] * len(prompts)
        self.hf.generate(filler, SamplingParams(n=params.n, max_new_tokens=max(steps),
                                                prompt_max_new_tokens=steps,
                                                temperature=1.0, seed=0, greedy=False),
                         on_prompt=None if on_prompt is None else lambda i, _: on_prompt(i, out[i]))
        return out

    def load_weights(self, version, weights):
        self.policy_version = version


def _domain(task):
    from posttrain.domains.base import get_domain

    return get_domain(task.domain)


def _resolve(ids):
    from posttrain.domains.base import DOMAINS as REG, get_domain, load_builtin_domains

    load_builtin_domains()
    out = []
    for did in ids:
        if did in REG.ids():
            out.append(get_domain(did))
    return out


def _run(backend, tasks, limits, serial: bool):
    from posttrain.inference.base import SamplingParams
    from posttrain.rollout import play_groups

    params = SamplingParams(n=1, max_new_tokens=1 << 16)
    t0 = time.perf_counter()
    if serial:
        groups, stages = [], {"sample_s": 0.0, "env_s": 0.0, "verify_s": 0.0}
        for t in tasks:
            g, times = play_groups(backend, [t], params, limits=limits)
            groups += g
            for k, v in times.as_dict().items():
                stages[k] += v
    else:
        groups, times = play_groups(backend, tasks, params, limits=limits)
        stages = times.as_dict()
    wall = time.perf_counter() - t0
    rewards = [g.trajectories[0].reward for g in groups]
    turns = sum(len(g.trajectories[0].turns) for g in groups)
    return wall, stages, rewards, turns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4, help="tasks per domain")
    ap.add_argument("--concurrency", type=int, default=32, help="sandboxed episodes live at once")
    ap.add_argument("--new-tokens", type=int, default=160, help="most decode steps per policy call")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--env-workers", type=int, default=16)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from posttrain.domains.base import sample_task
    from posttrain.envs.tool_env import use_pool
    from posttrain.inference.hf import HFBackend
    from posttrain.models.tiny import build_tiny_model
    from posttrain.rollout import EpisodeLimits
    from posttrain.sandbox import SandboxPool, Timeouts

    doms = _resolve(DOMAINS)
    tasks, seen = [], set()
    for d in doms:  # distinct prompts: the scripted policy finds its task by the prompt
        for seed in range(50):
            t = sample_task(d, seed, list(d.difficulties)[seed % len(d.difficulties)])
            key = json.dumps(t.prompt, sort_keys=True)
            if key not in seen and sum(x.domain == d.id for x in tasks) < args.seeds:
                seen.add(key)
                tasks.append(t)
    model, tok = build_tiny_model()
    backend = PacedScript(tasks, HFBackend(model.eval(), tok), args.new_tokens)
    limits = EpisodeLimits(max_turns=40, env_workers=args.env_workers,
                           max_sandbox_episodes=args.concurrency)
    pool = SandboxPool(max_total=2 * args.concurrency, warm=0,
                       timeouts=Timeouts(wall_s=10.0, cpu_s=10.0, create_s=60.0))
    walls: dict[str, list[float]] = {"engine": [], "lockstep": [], "serial": []}
    stages_e: list[dict] = []
    modes = {"engine": limits, "lockstep": replace(limits, overlap_env_steps=False), "serial": limits}
    with use_pool(pool):
        _run(backend, tasks[:4], replace(limits), serial=False)  # warm the pool and the model
        for _ in range(args.repeats):
            for mode, lim in modes.items():
                wall, stages, rewards, turns = _run(backend, tasks, lim, serial=mode == "serial")
                assert all(r == 1.0 for r in rewards), (mode, rewards)
                walls[mode].append(wall)
                if mode == "engine":
                    stages_e.append({k: v / wall for k, v in stages.items()})
                print(f"{mode:>6}: {len(tasks)} episodes ({turns} turns) in {wall:.2f} s "
                      f"= {len(tasks) / wall:.2f} episodes/s", flush=True)
    pool.close()
    eng, ser = statistics.median(walls["engine"]), statistics.median(walls["serial"])
    lock = statistics.median(walls["lockstep"])
    share = {k: round(statistics.median(s[k] for s in stages_e), 3) for k in stages_e[0]}
    print(f"engine over serial: {ser / eng:.2f}x (lockstep, no overlap: {ser / lock:.2f}x); "
          f"engine wall time shares: generation "
          f"{share['sample_s']:.0%}, env steps {share['env_s']:.0%}, last verifications "
          f"{share['verify_s']:.0%}")
    print(json.dumps({"speedup": round(ser / eng, 3), "episodes_per_s": round(len(tasks) / eng, 3),
                      "serial_episodes_per_s": round(len(tasks) / ser, 3), "episodes": len(tasks),
                      "speedup_lockstep": round(ser / lock, 3),
                      "concurrency": args.concurrency, "domains": [d.id for d in doms],
                      "share_generation": share["sample_s"], "share_env": share["env_s"],
                      "share_verify_tail": share["verify_s"], "repeats": args.repeats}))


if __name__ == "__main__":
    main()
