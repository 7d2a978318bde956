"""The deterministic async schedule: a seed fixes the weights, whatever the thread timing.

(a) two uninterrupted async runs (thread producers, lag 2, two producers, jittered env
latency so the producers interleave differently each time) train bit-identical weights, and
every group is sampled with exactly the scheduled version ``max(0, s - lag)``;
(c) the weight ring of every local transport installs exactly the version asked for —
older or newer than the backend's — and refuses one it no longer holds; the shared-memory
ring does it in another process (what the process pool's workers run).
"""

import random
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "async_loop"))  # async_helpers

import ring_children  # noqa: E402
from async_helpers import run_config, setup  # noqa: E402

from posttrain.core.errors import ConfigError  # noqa: E402
from posttrain.domains.base import get_domain  # noqa: E402
from posttrain.envs.factory import make_env  # noqa: E402
from posttrain.trainer.loop import AsyncConfig, train_async  # noqa: E402
from posttrain.trainer.producers import RolloutSettings  # noqa: E402
from posttrain.trainer.weight_sync import (InProcessWeightSync, SharedMemoryWeightSync,  # noqa: E402
                                           WeightVersionError)

LAG, STEPS = 2, 6
_jitter = random.Random()  # unseeded on purpose: the timing must not matter
_jitter_lock = threading.Lock()


class JitteredEnv:
    """The domain's env with a random 0-30 ms delay per step: producers race differently."""

    def __init__(self, task):
        self.inner = make_env(get_domain(task.domain), task)

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        with _jitter_lock:
            delay = _jitter.random() * 0.03
        time.sleep(delay)
        return self.inner.step(action)

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


def _run(schedule="deterministic"):
    cfg = run_config(steps=STEPS, max_policy_lag=LAG, kl_coef=0.05)
    model, opt, sched, backend, stream, pad = setup(cfg)
    versions = {}
    step = [0]

    def on_groups(groups):
        versions[step[0]] = sorted({v for g in groups for t in g.trajectories for v in t.policy_versions})
        step[0] += 1

    train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                config=AsyncConfig(num_producers=2, schedule=schedule), on_groups=on_groups,
                settings=RolloutSettings(make_env=JitteredEnv))
    return {k: v.clone() for k, v in model.state_dict().items()}, versions


def test_two_async_runs_train_bit_identical_weights():
    (w1, v1), (w2, v2) = _run(), _run()
    expected = {s: [max(0, s - LAG)] for s in range(STEPS)}
    assert v1 == v2 == expected  # each job sampled by exactly its scheduled version
    assert sorted(w1) == sorted(w2)
    for name in w1:
        assert torch.equal(w1[name], w2[name]), name


def test_partial_rollouts_need_the_free_running_schedule():
    cfg = run_config(steps=1, max_policy_lag=1)
    model, opt, sched, backend, stream, pad = setup(cfg)
    with pytest.raises(ConfigError, match="partial_rollouts"):
        train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, config=AsyncConfig(partial_rollouts=True))


def _sd(x: float) -> dict[str, torch.Tensor]:
    return {"w": torch.full((3,), x)}


@pytest.mark.parametrize("kind", ["in_process", "shared_memory"])
def test_the_ring_installs_exactly_the_version_asked_for(kind):
    sync = InProcessWeightSync(0, _sd(0.0), keep=3) if kind == "in_process" \
        else SharedMemoryWeightSync(_sd(0.0), 0, keep=3)
    for v in range(1, 5):
        sync.publish(v, _sd(float(v)))
    assert sync.held() == [2, 3, 4]
    b = ring_children.Backend()
    assert sync.pull(b, 3) == 3 and float(b.w["w"][0]) == 3.0
    assert sync.pull(b, 2) == 2 and float(b.w["w"][0]) == 2.0  # back to an older one: exact
    assert sync.pull(b) == 4 and float(b.w["w"][0]) == 4.0  # free-running: the newest
    with pytest.raises(WeightVersionError):
        sync.pull(b, 1)  # evicted: never a silent substitute
    sync.preload({0: _sd(10.0), 3: _sd(30.0)})  # a resume: older versions back (ring of 3)
    assert sync.held() == [2, 3, 4] and float(sync.weights(3)["w"][0]) == 3.0


def test_a_worker_process_pulls_the_scheduled_version_from_shared_memory():
    import torch.multiprocessing as tmp

    ctx = tmp.get_context("spawn")
    sync = SharedMemoryWeightSync(_sd(0.0), 0, ctx=ctx, keep=3)
    for v in range(1, 4):
        sync.publish(v, _sd(float(v)))
    fresh = SharedMemoryWeightSync(_sd(5.0), 5, ctx=ctx, keep=3)
    fresh.preload({3: _sd(3.0), 4: _sd(4.0)})  # a resumed run's ring, before any job
    q = ctx.Queue()
    procs = [ctx.Process(target=ring_children.pull_versions, args=(sync, [1, 3, 2, 0], q)),
             ctx.Process(target=ring_children.pull_versions, args=(fresh, [3, 5, 4], q))]
    for p in procs:
        p.start()
    got = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(10)
    assert sorted(got, key=len) == sorted([[(1, 1.0), (3, 3.0), (2, 2.0), ("missing", True)],
                                           [(3, 3.0), (5, 5.0), (4, 4.0)]], key=len)
