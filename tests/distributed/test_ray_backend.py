"""The Ray backend on a real local cluster: object-store weight sync, verifier actors, and the
async loop with ``executor: ray`` giving the same run as the embedded default."""

import copy

import pytest
import torch

ray = pytest.importorskip("ray")

from async_helpers import run_config, setup, warm_policy  # noqa: E402


from posttrain.distributed.ray_sync import RayWeightSync  # noqa: E402
from posttrain.inference.hf import HFBackend  # noqa: E402
from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_async  # noqa: E402

pytestmark = pytest.mark.ray


@pytest.fixture(scope="module", autouse=True)
def cluster():
    from posttrain.distributed.ray_pool import ensure_ray

    ensure_ray(None, num_cpus=2)
    yield
    ray.shutdown()


def test_object_store_weight_sync_installs_newest_whole_version():
    model, tok = warm_policy()
    backend = HFBackend(copy.deepcopy(model), tok, policy_version=-1)
    sync = RayWeightSync()
    sync.publish(0, model.state_dict())
    assert sync.pull(backend) == 0
    bumped = {k: v + 1.0 for k, v in model.state_dict().items()}
    sync.publish(3, bumped)
    assert sync.wait_for(3, timeout=5) and not sync.wait_for(4, timeout=0.05)
    assert sync.pull(backend) == 3
    for k, v in backend.model.state_dict().items():
        assert torch.equal(v, bumped[k]), k
    sync.publish(2, model.state_dict())  # an older version never replaces a newer one
    assert sync.latest_version() == 3 and sync.pull(backend) == 3
    ray.kill(sync.store)


def _assert_same_run(a, wa, b, wb):
    """Steps 1 and 2 with equal metrics (time/ and async/ aside) and bit-identical weights."""
    assert sorted(a) == sorted(b) == [1, 2]
    for step in a:
        for key in a[step]:
            if not key.startswith(("time/", "async/")):
                assert a[step][key] == b[step][key], (step, key)
    for k in wa:
        assert torch.equal(wa[k], wb[k]), k


def test_same_config_on_ray_gives_the_embedded_run():
    cfg = run_config(steps=2, max_policy_lag=0)
    runs = {}
    for executor in ("thread", "ray"):
        model, opt, sched, backend, stream, pad = setup(cfg)
        rows, ledger = {}, TaskLedger()
        acfg = AsyncConfig(executor=executor, ray_cpus_per_worker=1.0)
        train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                    on_step=lambda s, m: rows.__setitem__(s, m), config=acfg, ledger=ledger)
        runs[executor] = (rows, model.state_dict(), ledger)
    (a, wa, la), (b, wb, lb) = runs["thread"], runs["ray"]
    _assert_same_run(a, wa, b, wb)
    assert [r["task"] for r in la.rows] == [r["task"] for r in lb.rows]
    assert b[2]["async/producers"] == 1.0


def test_ray_producers_through_the_sqlite_work_store(tmp_path):
    """``executor: ray`` + ``work_store: sqlite``: the store wraps the Ray pool like any other."""
    from posttrain.scheduler.ledger import OutcomeLedger
    from posttrain.scheduler.store import WorkStore

    cfg = run_config(steps=2, max_policy_lag=1)
    store = WorkStore(tmp_path / "work.sqlite")
    runs = {}
    for executor, work_store in (("thread", None), ("ray", store)):
        model, opt, sched, backend, stream, pad = setup(cfg)
        rows, ledger = {}, (TaskLedger() if work_store is None else None)
        # one job out at a time: each samples the newest weights, so both runs are deterministic
        acfg = AsyncConfig(executor=executor, max_inflight=1, ray_cpus_per_worker=1.0)
        train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                    on_step=lambda s, m: rows.__setitem__(s, m), config=acfg, ledger=ledger,
                    work_store=work_store)
        runs[executor] = (rows, model.state_dict(), ledger)
    (a, wa, la), (b, wb, _) = runs["thread"], runs["ray"]
    _assert_same_run(a, wa, b, wb)
    assert store.counts() == {"queued": 0, "running": 0, "done": 2, "failed": 0}
    assert [r["task"] for r in OutcomeLedger(store).rows] == [r["task"] for r in la.rows]
