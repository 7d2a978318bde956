"""Staleness policy, partial rollouts across a weight update, and the weight-sync transports."""

import copy
import os

import pytest
import torch

import sync_children
from async_helpers import run_config, warm_policy

from posttrain.domains.base import get_domain, sample_task
from posttrain.inference.base import SamplingParams
from posttrain.inference.hf import HFBackend
from posttrain.rollout import EpisodeLimits, play_groups
from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_async, train_on_result
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.producers import JobResult
from posttrain.trainer.reference_loop import RLState
from posttrain.trainer.sft import pad_id_of
from posttrain.trainer.weight_sync import InProcessWeightSync, SharedMemoryWeightSync


def _groups_at(backend, version, seeds):
    backend.load_weights(version, None)
    tasks = [sample_task(get_domain("math.add-v1"), s, 1) for s in seeds]
    groups, _ = play_groups(backend, tasks, SamplingParams(n=4, max_new_tokens=4, seed=version))
    return groups


@pytest.mark.parametrize("mode", ["drop", "downweight"])
def test_groups_older_than_the_bound_are_dropped_or_downweighted(mode):
    model, tok = warm_policy()
    backend = HFBackend(copy.deepcopy(model), tok)
    groups = _groups_at(backend, 5, [0, 1]) + _groups_at(backend, 2, [2, 3])  # lags 1 and 4 at v6
    rl = run_config(max_policy_lag=2).rl
    opt, _ = optimizer_from_config(model, rl)
    state, ledger = RLState(step=6, policy_version=6), TaskLedger()
    m = train_on_result(JobResult(6, tuple(groups)), model, opt, rl, state, AsyncConfig(stale=mode),
                        pad_id=pad_id_of(tok), ledger=ledger)
    assert m["async/lag_max"] == 4 and m["async/lag_mean"] == 2.5
    outcomes = {r["task"]: r for r in ledger.rows}
    old = [g.task.key for g in groups[2:]]
    if mode == "drop":
        assert m["async/dropped_stale"] == 8 and m["batch/samples"] <= 8
        assert all(outcomes[k]["outcome"] == "dropped" and "stale: lag 4" in outcomes[k]["reason"] for k in old)
    else:
        assert m["async/dropped_stale"] == 0 and m["async/downweighted"] > 0
        assert all(outcomes[k]["outcome"] != "dropped" or "zero variance" in outcomes[k]["reason"] for k in old)
    assert "loss/tis_weight_mean" in m or "loss/skipped" in m
    assert state.samples_seen == 16


class _TwoTurnEnv:
    """Asks twice: the answer to turn 1 is shown back and the question repeated."""

    def __init__(self, task):
        from posttrain.envs.factory import make_env

        self.task, self.inner, self.turn = task, make_env(get_domain(task.domain), task), 0

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        from posttrain.core.types import Observation, StepResult

        self.turn += 1
        if self.turn == 1:
            return StepResult(Observation(({"role": "user", "content": "again"},)), 0.0, False)
        return StepResult(None, 0.0, True)

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


def test_partial_rollout_continues_across_a_weight_update():
    model, tok = warm_policy()
    backend = HFBackend(copy.deepcopy(model), tok)
    sync = InProcessWeightSync(0, model.state_dict())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01)
    sync.publish(1, model.state_dict())  # arrives while turn 1 is "in flight"
    task = sample_task(get_domain("math.add-v1"), 0, 1)
    groups, times = play_groups(backend, [task], SamplingParams(n=2, max_new_tokens=3, seed=0),
                                make_env=_TwoTurnEnv, limits=EpisodeLimits(max_turns=2),
                                between_turns=lambda: sync.pull(backend))
    for t in groups[0].trajectories:
        assert t.policy_versions == (0, 1) and t.stop_reason in ("done", "max_tokens")
    assert backend.policy_version == 1 and times.sample_s > 0


def test_async_lag_bound_holds_with_several_producers():
    from async_helpers import setup

    cfg = run_config(steps=4, max_policy_lag=2)
    model, opt, sched, backend, stream, pad = setup(cfg)
    rows, ledger = {}, TaskLedger()
    train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                on_step=lambda s, m: rows.__setitem__(s, m), config=AsyncConfig(), ledger=ledger)
    assert sorted(rows) == [1, 2, 3, 4]
    assert all(r["async/lag_max"] <= 2 and r["async/dropped_stale"] == 0 for r in rows.values())
    assert rows[4]["async/producers"] == 2 and backend.policy_version == 4
    assert len(ledger.rows) == 8 and len({r["task"] for r in ledger.rows}) == 8


def test_in_process_sync_never_goes_back_and_waits():
    sd = {"w": torch.zeros(3)}
    sync = InProcessWeightSync(0, sd)
    sync.publish(2, {"w": torch.ones(3)})
    with pytest.raises(ValueError):
        sync.publish(1, sd)
    assert sync.wait_for(2, 0.01) and not sync.wait_for(3, 0.01)


def test_shared_memory_sync_reaches_another_process():
    import torch.multiprocessing as tmp

    ctx = tmp.get_context("spawn")
    sync = SharedMemoryWeightSync({"w": torch.zeros(4)}, 0, ctx=ctx)
    q = ctx.Queue()
    p = ctx.Process(target=sync_children.child_pull, args=(sync, q))
    p.start()
    sync.publish(1, {"w": torch.full((4,), 2.0)})
    assert q.get(timeout=60) == (1, 8.0)
    p.join(10)


def test_torch_distributed_broadcast_sync_gloo():
    import socket

    import torch.multiprocessing as tmp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = tmp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=sync_children.dist_worker, args=(r, port, q)) for r in range(2)]
    for p in procs:
        p.start()
    got = sorted(q.get(timeout=90) for _ in procs)
    for p in procs:
        p.join(10)
    assert got == [(0, 7, 12.0, 3.0), (1, 7, 12.0, 3.0)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="NCCL weight sync needs a GPU")
def test_nccl_broadcast_sync_on_gpu():
    import torch.distributed as dist

    from posttrain.trainer.weight_sync import TorchDistributedWeightSync

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29531")
    dist.init_process_group("nccl", rank=0, world_size=1)
    try:
        sd = {"w": torch.randn(64, 64)}
        sync = TorchDistributedWeightSync(sd, device="cuda")
        sync.publish(3, sd)
        assert sync.latest_version() == 3
        assert torch.equal(sync._received["w"].cpu(), sd["w"])
    finally:
        dist.destroy_process_group()
