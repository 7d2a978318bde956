"""Fault injection on Ray: a rollout worker actor killed mid-episode is replaced, its job re-run,
and every scheduled task is accounted for exactly once (a real local Ray cluster)."""

import os
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from async_helpers import run_config, setup  # noqa: E402
from fault_envs import SlowEnvFactory, assert_accounted, expected_keys  # noqa: E402

from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_async  # noqa: E402
from posttrain.trainer.producers import RolloutSettings  # noqa: E402
from posttrain.trainer.tasks import TaskStream  # noqa: E402

pytestmark = pytest.mark.ray
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module", autouse=True)
def cluster():
    path = os.pathsep.join([str(HERE), str(HERE.parent / "async_loop"), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False,
             runtime_env={"env_vars": {"PYTHONPATH": path, "OMP_NUM_THREADS": "1"}})
    yield
    ray.shutdown()


def test_killed_ray_worker_is_replaced_and_its_job_rerun():
    from posttrain.distributed.ray_pool import RayProducerPool

    cfg = run_config(steps=3, max_policy_lag=1, group_size=2)
    settings = RolloutSettings(make_env=SlowEnvFactory(0.4))
    model, opt, sched, backend, stream, pad = setup(cfg)
    pool = RayProducerPool(backend.model, backend.tokenizer, model.state_dict(), 0, settings,
                           num_workers=1, max_attempts=2, num_cpus=1.0,
                           keep=cfg.rl.max_policy_lag + 1)  # the schedule's ring (a re-run needs it)
    killed = []

    def assassin():
        end = time.time() + 120
        while time.time() < end and not pool.busy_actors():
            time.sleep(0.02)
        time.sleep(0.3)
        busy = pool.busy_actors()
        if busy:
            ray.kill(busy[0], no_restart=True)
            killed.append(busy[0])

    threading.Thread(target=assassin, daemon=True).start()
    rows, ledger = {}, TaskLedger()
    train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                on_step=lambda s, m: rows.__setitem__(s, m), config=AsyncConfig(), settings=settings,
                ledger=ledger, pool=pool)
    assert killed and pool.restarts >= 1 and rows[3]["async/worker_restarts"] >= 1
    assert sorted(rows) == [1, 2, 3]
    assert_accounted(ledger, expected_keys(lambda: TaskStream(cfg.domains, seed=cfg.seed), 6))
    assert ledger.counts().get("failed", 0) == 0, [r["reason"] for r in ledger.rows]
