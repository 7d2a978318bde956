"""Every caller plays episodes through the one engine: the same Score everywhere.

Over EVERY multi-turn domain (each domain with an env of its own), a scripted policy that
replays the domain's reference actions must get the same Score through: the reference loop,
the async loop at lag 0 and lag 2 with thread and process producers, held-out evaluation,
the evaluation runner and the ``posttrain eval run --backend reference|wrong`` command itself;
a scripted wrong policy must get the same low Score everywhere. After each run no sandbox lease is held, and at the end no
sandbox process of this test is left.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from posttrain.core.config import AsyncConfig, DomainSpec, RLConfig, TinyModelConfig
from posttrain.domains.base import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.envs.tool_env import shared_pool
from posttrain.eval.regression import DomainSet, RegressionSet
from posttrain.eval.runner import EvalSpec, evaluate
from posttrain.models.tiny import build_tiny_model
from posttrain.rollout import EpisodeLimits, ScriptedPolicy
from posttrain.eval.select import reference_script, wrong_script
from posttrain.trainer.heldout import heldout_accuracy
from posttrain.trainer.loop import train_async
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.producers import RolloutSettings
from posttrain.trainer.reference_loop import train_rl

load_builtin_domains()
DOMS = [get_domain(i) for i in DOMAINS.ids() if callable(getattr(get_domain(i), "make_env", None))]
LIMITS = EpisodeLimits(max_turns=40, env_workers=4)


def _task(dom):
    """The task held-out evaluation draws first (seed offset 0, the first allowed level)."""
    return sample_task(dom, seed=0, difficulty=list(dom.difficulties)[0])


TASKS = [_task(d) for d in DOMS]


reference, wrong = reference_script, wrong_script  # the scripts `eval run --backend` replays


class _Stream:
    """The TaskStream interface over a fixed list (position i -> TASKS[i])."""

    def __init__(self):
        self.position = 0

    def task_at(self, i):
        return TASKS[i % len(TASKS)]

    def next(self, n):
        out = [self.task_at(i) for i in range(self.position, self.position + n)]
        self.position += n
        return out

    def state_dict(self):
        return {"position": self.position}


class _Factory:
    """Picklable backend factory for process producers: a scripted policy in each worker."""

    def __init__(self, script):
        self.script = script

    def __call__(self, model, tokenizer):
        return ScriptedPolicy(TASKS, self.script)


def _rl(lag):
    return RLConfig(steps=1, prompts_per_step=len(TASKS), group_size=1, max_new_tokens=64,
                    max_policy_lag=lag, filter_zero_variance=False)


def _model():
    return build_tiny_model(TinyModelConfig(hidden_size=16, num_layers=1, num_heads=2,
                                            intermediate_size=32))


def _via_loop(script, *, lag=None, executor="thread"):
    model, tok = _model()
    rl = _rl(lag or 0)
    opt, sched = optimizer_from_config(model, rl)
    got = []
    kw = dict(pad_id=tok.pad_token_id, lr_scheduler=sched, on_groups=got.extend)
    backend = ScriptedPolicy(TASKS, script)
    if lag is None:
        train_rl(model, opt, backend, _Stream(), rl, limits=LIMITS, **kw)
    else:
        settings = RolloutSettings(limits=LIMITS, backend_factory=_Factory(script))
        train_async(model, opt, backend, _Stream(), rl, settings=settings,
                    config=AsyncConfig(executor=executor, num_producers=1), **kw)
    return {g.task.domain: g.trajectories[0].score for g in got}


def _via_heldout(script):
    specs = [DomainSpec(id=d.id, difficulties=[list(d.difficulties)[0]]) for d in DOMS]
    out = heldout_accuracy(ScriptedPolicy(TASKS, script), specs, 1, 0, max_new_tokens=64,
                           limits=LIMITS)
    assert out["errors"] == 0
    return out["per_domain"]


def _via_eval(script, tmp: Path):
    def version(did):
        return int(re.search(r"-v(\d+)$", did).group(1))

    rset = RegressionSet(domains={d.id: DomainSet(domain=d.id, version=version(d.id),
                                                   items=[(list(d.difficulties)[0], 0)])
                                  for d in DOMS})
    spec = EvalSpec(n=1, ks=(1,), max_new_tokens=64)
    res = evaluate(ScriptedPolicy(TASKS, script), {d.id: d for d in DOMS}, rset, spec, tmp,
                   report=False, limits=LIMITS)
    return {did: block["mean_reward"]["value"] for did, block in res["domains"].items()}


def _via_cli(script, tmp: Path):
    """``posttrain eval run --backend reference|wrong`` on the same tasks (a regression set)."""
    import json

    from typer.testing import CliRunner

    from posttrain.cli.main import app

    rset = RegressionSet(domains={d.id: DomainSet(domain=d.id, version=int(d.id.rsplit("-v", 1)[1]),
                                                   items=[(list(d.difficulties)[0], 0)])
                                  for d in DOMS})
    path = rset.save(tmp / "rset.json")
    name = "reference" if script is reference else "wrong"
    res = CliRunner().invoke(app, ["eval", "run", "--backend", name, "--regression-set", str(path),
                                   "--n", "1", "--k", "1", "--max-new-tokens", "64",
                                   "--max-turns", str(LIMITS.max_turns), "--no-cache",
                                   "--out", str(tmp / "cli"), "--json"])
    assert res.exit_code == 0, res.output[-2000:]
    out = json.loads(res.stdout)
    return {did: block["mean_reward"]["value"] for did, block in out["domains"].items()}


def _leases():
    return shared_pool().metrics()["sandbox/in_use"]


def _sandbox_descendants() -> list[int]:
    """Live bubblewrap processes descending from this process."""
    parent = {}
    names = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            names[int(d)] = stat[stat.index("(") + 1:stat.rindex(")")]
            parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])

    def mine(pid):
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [p for p, n in names.items() if n.startswith("bwrap") and mine(p)]


@pytest.mark.parametrize("script,floor", [(reference, None), (wrong, 0.05)], ids=["reference", "wrong"])
def test_same_score_through_every_caller_over_every_multi_turn_domain(script, floor, tmp_path):
    assert len(DOMS) >= 50, "the multi-turn domains did not load"
    runs = {"reference_loop": _via_loop(script)}
    assert _leases() == 0
    for lag in (0, 2):
        for executor in ("thread", "process"):
            runs[f"async lag {lag} {executor}"] = _via_loop(script, lag=lag, executor=executor)
            assert _leases() == 0, f"a sandbox lease leaked ({executor}, lag {lag})"
    base = runs["reference_loop"]
    assert sorted(base) == sorted(d.id for d in DOMS)
    for name, got in runs.items():
        assert sorted(got) == sorted(base), name
        for did, s in got.items():
            assert s.error is None and base[did].error is None, (name, did, s.reason)
            assert s.value == base[did].value and dict(s.components) == dict(base[did].components), (
                name, did, s.value, base[did].value)
    values = {did: s.value for did, s in base.items()}
    for name, got in (("heldout", _via_heldout(script)), ("eval runner", _via_eval(script, tmp_path)),
                      ("posttrain eval run", _via_cli(script, tmp_path))):
        assert got == pytest.approx(values, abs=1e-12), name
        assert _leases() == 0, name
    if floor is None:
        assert all(v == pytest.approx(1.0) for v in values.values()), values
    else:
        assert all(v <= floor for v in values.values()), values


def test_no_sandbox_process_outlives_the_pool():
    from posttrain.rollout import replay_groups

    replay_groups(TASKS, reference, limits=LIMITS)
    assert _sandbox_descendants(), "the reference episodes should have left warm sandboxes"
    shared_pool().close()
    import time

    end = time.monotonic() + 10
    while _sandbox_descendants() and time.monotonic() < end:
        time.sleep(0.1)
    assert _sandbox_descendants() == []
