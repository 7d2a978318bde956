"""Local scheduler: retries, task failures, bounds, timeouts, checkpoints, filters, cancellation."""

import random
import threading
import time

from sched_fakes import group, task, traj

from posttrain.core.errors import InferenceError, SandboxError
from posttrain.core.types import TrajectoryGroup
from posttrain.scheduler.concurrency import AdaptiveConcurrency
from posttrain.scheduler.local import LocalScheduler
from posttrain.scheduler.retry import Cancelled, backoff_s
from posttrain.scheduler.store import WorkStore

FAST = dict(backoff_base_s=0.01, backoff_max_s=0.05, poll_s=0.005, max_attempts=3,
            min_concurrency=2, max_concurrency=4)


def drain(store, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        c = store.counts()
        if c["queued"] == 0 and c["running"] == 0:
            return c
        time.sleep(0.01)
    raise AssertionError(f"store did not drain: {store.counts()}")


def test_infra_errors_are_retried_task_failures_and_bugs_are_not(tmp_path):
    store = WorkStore(tmp_path / "q.db")
    for k in "abcd":
        store.enqueue(k, {"k": k})
    calls = {k: 0 for k in "abcd"}
    lock = threading.Lock()

    def episode(item, ctx):
        with lock:
            calls[item.key] += 1
            n = calls[item.key]
        t = task(seed=ord(item.key))
        if item.key == "a" and n < 3:
            raise SandboxError("sandbox died")
        if item.key == "c":
            raise KeyError("bug in the episode code")
        if item.key == "d":
            raise InferenceError("server down")
        return group(t, [0.0, 0.0, 0.0, 0.0] if item.key == "b" else [1.0, 0.0, 1.0, 0.0])

    seen = []
    ls = LocalScheduler(store, episode, FAST, on_group=lambda it, g, seq: seen.append(it.key)).start()
    drain(store)
    got = ls.take(10, timeout=1)
    ls.stop()
    assert calls == {"a": 3, "b": 1, "c": 1, "d": 3}
    assert [g.key for g in got] == ["a"]  # b is a task failure: done, but zero-variance
    assert sorted(seen) == ["a", "b"]  # the curriculum still learns from b
    assert store.item("b")["state"] == "done" and store.item("b")["attempts"] == 1
    fails = dict(store.failures())
    assert "KeyError" in fails["c"] and store.item("c")["attempts"] == 1
    assert "InferenceError" in fails["d"] and "after 3 attempts" in fails["d"]
    m = ls.metrics()
    assert m["sched/local/retried"] == 4 and m["sched/local/bug_failures"] == 1
    assert m["sched/filter/zero_variance"] == 1


def test_concurrency_is_bounded_and_backpressure_stops_claims(tmp_path):
    store = WorkStore(tmp_path / "q.db", synchronous="NORMAL")
    store.enqueue_many([(f"k{i}", {"i": i}, 0) for i in range(40)])
    active, peak, lock = [0], [0], threading.Lock()

    def episode(item, ctx):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.03)
        with lock:
            active[0] -= 1
        return group(task(seed=item.payload["i"]), [1.0, 0.0])

    cfg = dict(FAST, min_concurrency=1, max_concurrency=3, low_watermark=1, high_watermark=4)
    ls = LocalScheduler(store, episode, cfg).start()
    time.sleep(0.6)  # nobody consumes: the producer must stop at the high watermark
    assert ls.ready_count() <= 4 + 3
    assert store.counts()["queued"] > 20
    got = []
    while len(got) < 40:
        got += ls.take(4, timeout=5)
    ls.stop()
    assert sorted(g.key for g in got) == sorted(f"k{i}" for i in range(40))
    assert 2 <= peak[0] <= 3 and ls.max_live_seen <= 3


def test_soft_timeout_returns_partial_work_and_hard_timeout_retries(tmp_path):
    store = WorkStore(tmp_path / "q.db")
    store.enqueue("polite", {})
    store.enqueue("hung", {})
    attempts = {"polite": 0, "hung": 0}

    def episode(item, ctx):
        attempts[item.key] += 1
        t = task(seed=len(item.key))
        if item.key == "polite":
            while not ctx.cancelled:
                time.sleep(0.005)
            return TrajectoryGroup(t, (traj(t, 1.0, (1,), stop="timeout"), traj(t, 0.0, (2,), stop="timeout")))
        if attempts["hung"] == 1:
            time.sleep(0.8)  # ignores its cancel signal
            return group(t, [1.0, 0.0])
        return group(t, [0.0, 1.0], tokens=[(5,), (6,)])

    cfg = dict(FAST, episode_timeout_s=0.1, hard_grace_s=0.15)
    ls = LocalScheduler(store, episode, cfg).start()
    drain(store)
    time.sleep(0.9)  # let the abandoned thread come back late
    ls.stop()
    assert store.item("polite")["attempts"] == 1 and store.item("polite")["state"] == "done"
    assert store.item("hung")["attempts"] == 2 and store.item("hung")["state"] == "done"
    hung = [r for r in store.results() if r.key == "hung"][0]
    assert hung.result["rewards"] == [0.0, 1.0]  # the late first attempt did not overwrite it
    m = ls.metrics()
    assert m["sched/local/abandoned"] == 1 and m["sched/local/late_results_discarded"] == 1
    assert m["sched/local/soft_timeout"] >= 2


def test_long_episode_resumes_from_its_checkpoint(tmp_path):
    store = WorkStore(tmp_path / "q.db")
    store.enqueue("long", {})
    resumed = []

    def episode(item, ctx):
        resumed.append(ctx.resume)
        start = (ctx.resume or {}).get("turn", 0)
        for turn in range(start, 6):
            ctx.checkpoint({"turn": turn})
            if turn == 3 and item.attempt == 1:
                raise SandboxError("sandbox lost mid-episode")
        return group(task(), [1.0, 0.0])

    ls = LocalScheduler(store, episode, FAST).start()
    drain(store)
    ls.stop()
    assert resumed == [None, {"turn": 3}]


def test_quality_filters_and_cross_delivery_dedup(tmp_path):
    store = WorkStore(tmp_path / "q.db")
    store.enqueue_many([("mixed", {}, 0), ("dup1", {}, 0), ("dup2", {}, 0), ("infra", {}, 0)])
    t = task(seed=1)

    def episode(item, ctx):
        if item.key == "mixed":
            return TrajectoryGroup(t, (traj(t, 1.0, (1,)), traj(t, 0.0, (2,)),
                                       traj(t, 1.0, (3,), finish="length"),
                                       traj(t, 1.0, (4,), score_error=True),
                                       traj(t, 1.0, ()), traj(t, 0.0, (5,), error=("parse", "bad json"))))
        if item.key == "infra":
            return TrajectoryGroup(t, (traj(t, 0.0, (1,), error=("sandbox", "x")),) * 2)
        return group(task(seed=9), [1.0, 0.0])  # dup1 and dup2: the same task and tokens

    ls = LocalScheduler(store, episode, dict(FAST, max_attempts=2)).start()
    drain(store)
    got = ls.take(10, timeout=1)
    ls.stop()
    keys = sorted(g.key for g in got)
    assert keys in (["dup1", "mixed"], ["dup2", "mixed"])
    mixed = [g for g in got if g.key == "mixed"][0].group
    assert mixed.rewards_G == [1.0, 0.0]
    m = ls.metrics()
    assert m["sched/filter/truncated"] == 1 and m["sched/filter/verifier_error"] == 1
    assert m["sched/filter/malformed"] == 2 and m["sched/filter/duplicate"] == 1
    assert "after 2 attempts" in dict(store.failures())["infra"]  # all-infra group: retried


def test_cancel_and_shutdown(tmp_path):
    store = WorkStore(tmp_path / "q.db")
    store.enqueue_many([("victim", {}, 5), ("other", {}, 0)])
    started = threading.Event()

    def episode(item, ctx):
        started.set()
        while True:
            ctx.raise_if_cancelled()
            time.sleep(0.005)

    ls = LocalScheduler(store, episode, dict(FAST, min_concurrency=2)).start()
    assert started.wait(5)
    time.sleep(0.05)
    assert ls.cancel("victim")
    time.sleep(0.05)
    ls.stop()
    assert dict(store.failures()) == {"victim": "cancelled"}
    other = store.item("other")
    assert other["state"] == "queued" and other["attempts"] == 0  # given back, attempt not spent


def test_adaptive_concurrency_and_backoff():
    c = AdaptiveConcurrency(1, 16, low_wm=2, high_wm=8)
    assert c.update(ready=0) == 2
    c.observe_consumed(0, 0.0)
    c.observe_consumed(10, 1.0)  # 10 groups/s
    c.observe_latency(0.5)  # 0.5 s per episode -> about 5 in flight
    assert c.update(ready=0) == 6
    assert c.update(ready=5) == 6
    assert c.update(ready=8) == 5
    rng = random.Random(0)
    waits = [backoff_s(a, 1.0, 10.0, rng) for a in (1, 2, 3, 4, 5, 6)]
    for a, w in zip((1, 2, 3, 4, 5, 6), waits):
        d = min(10.0, 2.0 ** (a - 1))
        assert d / 2 <= w <= d
    assert isinstance(Cancelled("x"), Exception)
