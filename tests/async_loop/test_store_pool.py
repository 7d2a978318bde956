"""The async loop through the SQLite work store: stored results, the lag bound, failures, shutdown."""

import dataclasses
import queue

import pytest
from async_helpers import run_config, setup

from posttrain.core.errors import SchedulerError
from posttrain.core.types import Task
from posttrain.scheduler.ledger import OutcomeLedger
from posttrain.scheduler.store import WorkStore
from posttrain.trainer.loop import BEHAVIOUR_WEIGHTS, AsyncConfig, train_async
from posttrain.trainer.producers import Job, JobResult, RolloutSettings, produce
from posttrain.trainer.reference_loop import RLState, sampling_params
from posttrain.trainer.store_pool import StorePool, job_key, job_payload, result_body
from posttrain.trainer.weight_sync import InProcessWeightSync


def _job(cfg, stream, index, step, version):
    """The job ``_Jobs.fill`` submits for ``index`` when the trainer is at ``step``/``version``."""
    P = cfg.rl.prompts_per_step
    tasks = tuple(stream.task_at(i) for i in range(index * P, index * P + P))
    expected = version + (index - step)
    return Job(index, tasks, sampling_params(cfg.rl, cfg.seed * 1_000_003 + index),
               max(0, expected - cfg.rl.max_policy_lag), exact=True)  # as the deterministic schedule makes it


def test_a_stored_result_is_reused_and_the_lag_bound_applies_to_it(tmp_path):
    cfg = run_config(steps=6, max_policy_lag=1, group_size=2)
    model, opt, sched, backend, stream, pad = setup(cfg)
    job = _job(cfg, stream, 5, 5, 5)
    # job 5 sampled by version 0 (say, before a crash long ago) and completed in the file
    sampled = produce(dataclasses.replace(job, min_version=0), backend, InProcessWeightSync(0, model.state_dict()),
                      RolloutSettings(), None, lambda: False, "before")
    store = WorkStore(tmp_path / "work.sqlite")
    store.enqueue(job_key(5), job_payload(job), priority=-5)
    seq = store.complete(store.claim("old-process/0", 60.0), result_body(sampled))
    stream.position = 5 * cfg.rl.prompts_per_step
    rows = {}
    train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                state=RLState(step=5, policy_version=5, extra={BEHAVIOUR_WEIGHTS: {4: model.state_dict()}}),
                config=AsyncConfig(), work_store=store,
                on_step=lambda s, m: rows.__setitem__(s, m))
    assert store.item(job_key(5))["seq"] == seq  # trained from the file, not sampled again
    assert rows[6]["async/store_reused"] == 1 and rows[6]["async/store_claimed"] == 0
    assert rows[6]["async/lag_max"] == 5 and rows[6]["async/dropped_stale"] == 2 * 2
    ledger = OutcomeLedger(store).rows
    assert [(r["outcome"], r["reason"]) for r in ledger] == [("dropped", "stale: lag 5 > 1")] * 2


class _StubPool:
    """An inner pool whose job 0 fails (its worker died for good) and whose job 1 never ends."""

    def __init__(self):
        self.sync = InProcessWeightSync(0, None)
        self.jobs, self.results = [], queue.Queue()

    def submit(self, job):
        self.jobs.append(job)
        if job.index == 0:
            self.results.put(JobResult(0, error="worker process proc-0 died (exit code -9) after 2 attempts"))

    def get(self, timeout=None):
        try:
            return self.results.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self, timeout=10.0):
        pass

    def metrics(self):
        return {}


def _stub_job(index, seed=0):
    return Job(index, (Task("math.add-v1", index, 1, ({"role": "user", "content": "1+1"},)),),
               sampling_params(run_config().rl, seed), 0)


def test_failures_are_recorded_and_shutdown_gives_work_back(tmp_path):
    store = WorkStore(tmp_path / "work.sqlite")
    pool = StorePool(_StubPool(), store)
    pool.submit(_stub_job(0))
    pool.submit(_stub_job(1))
    res = pool.get(timeout=30)
    assert res.index == 0 and "died" in res.error
    assert store.item(job_key(0))["state"] == "failed" and "died" in store.item(job_key(0))["reason"]
    assert pool.get(timeout=0.2) is None  # job 1 still runs
    pool.close()
    held = store.item(job_key(1))
    assert (held["state"], held["attempts"]) == ("queued", 0)  # given back, no attempt spent
    # a new session delivers the failure from the file and refuses a different spec for a key
    again = StorePool(_StubPool(), store)
    again.submit(_stub_job(0))
    assert "work store: worker process proc-0 died" in again.get(timeout=30).error
    again.submit(_stub_job(1, seed=99))
    with pytest.raises(SchedulerError, match="another config"):
        again.get(timeout=30)
    again.close()
