"""SQLite work store: atomic claims, fencing, retries, exactly-once under a real process crash."""

import subprocess
import sys
import threading
import time

import pytest

from posttrain.scheduler.store import WorkStore


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def test_enqueue_is_idempotent_and_claims_follow_priority(tmp_path):
    s = WorkStore(tmp_path / "q.db", clock=Clock())
    assert s.enqueue("a", {"n": 1}) is True
    assert s.enqueue("a", {"n": 2}) is False
    assert s.enqueue_many([("b", {}, 5), ("c", {}, 0), ("a", {}, 9)]) == 2
    order = [s.claim("w", 10).key for _ in range(3)]
    assert order == ["b", "a", "c"]
    assert s.claim("w", 10) is None
    assert s.counts() == {"queued": 0, "running": 3, "done": 0, "failed": 0}


def test_retryable_failures_back_off_then_fail_with_reason(tmp_path):
    clock = Clock()
    s = WorkStore(tmp_path / "q.db", clock=clock, max_attempts=2)
    s.enqueue("a", {})
    it = s.claim("w", 10)
    assert s.fail(it, "SandboxError: boom", retryable=True, backoff_s=5.0) == "queued"
    assert s.claim("w", 10) is None  # backing off
    clock.t += 5.0
    it2 = s.claim("w", 10)
    assert it2.attempt == 2
    assert s.fail(it2, "SandboxError: boom", retryable=True) == "failed"
    assert s.failures() == [("a", "SandboxError: boom (after 2 attempts)")]
    s.enqueue("b", {})
    assert s.fail(s.claim("w", 10), "bug: KeyError", retryable=False) == "failed"
    assert s.item("b")["attempts"] == 1


def test_expired_lease_is_requeued_and_the_stale_holder_is_fenced_off(tmp_path):
    clock = Clock()
    s = WorkStore(tmp_path / "q.db", clock=clock, max_attempts=2)
    s.enqueue("a", {"x": 1})
    slow = s.claim("w1", lease_s=10)
    clock.t += 11
    fresh = s.claim("w2", lease_s=10)
    assert fresh.key == "a" and fresh.attempt == 2
    assert s.complete(slow, {"who": "w1"}) == 0  # lost its lease
    assert s.heartbeat(slow, 10) is False
    assert s.complete(fresh, {"who": "w2"}) == 1
    assert [r.result for r in s.results()] == [{"who": "w2"}]
    # past max attempts an expired lease fails the item with a reason
    s.enqueue("b", {})
    s.claim("w", 1)
    clock.t += 2
    s.claim("w", 1)
    clock.t += 2
    assert s.requeue_expired() == 1
    assert s.failures() == [("b", "lease expired (worker lost) after 2 attempts")]


_CHILD = """
import os, sys
from posttrain.scheduler.store import WorkStore
s = WorkStore(sys.argv[1])
it = s.claim("child", lease_s=0.5)
s.save_checkpoint(it, {"turn": 3})
s.complete(s.claim("child", lease_s=60), {"by": "child"})
print(it.key, flush=True)
os._exit(9)  # dies holding the first item
"""


def test_exactly_once_across_a_real_process_crash_and_restart(tmp_path):
    db = tmp_path / "q.db"
    WorkStore(db).enqueue_many([(f"k{i}", {"i": i}, 0) for i in range(20)])
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(db)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 9, proc.stderr
    crashed_key = proc.stdout.strip()
    time.sleep(0.6)  # the dead worker's lease runs out
    s = WorkStore(db)  # a fresh process-like open of the same file
    assert s.counts()["done"] == 1 and s.counts()["running"] == 1
    seen = {}
    while (it := s.claim("parent", lease_s=60)) is not None:
        seen[it.key] = it
        assert s.complete(it, {"by": "parent"})
    assert crashed_key in seen and seen[crashed_key].attempt == 2
    assert seen[crashed_key].checkpoint == {"turn": 3}  # the retry resumes the episode
    res = s.results()
    assert sorted(r.key for r in res) == sorted(f"k{i}" for i in range(20))  # each exactly once
    assert [r.seq for r in res] == list(range(1, 21))
    assert s.counts() == {"queued": 0, "running": 0, "done": 20, "failed": 0}


def test_racing_threads_never_claim_the_same_item_twice(tmp_path):
    s = WorkStore(tmp_path / "q.db", synchronous="NORMAL")
    s.enqueue_many([(f"k{i}", {}, 0) for i in range(120)])
    claimed, lock = [], threading.Lock()

    def worker(name):
        while (it := s.claim(name, 60)) is not None:
            with lock:
                claimed.append(it.key)
            s.complete(it, {})

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(f"k{i}" for i in range(120))
    assert s.counts()["done"] == 120


def test_results_ack_state_and_cancel(tmp_path):
    s = WorkStore(tmp_path / "q.db", clock=Clock())
    s.enqueue_many([("a", {}, 0), ("b", {}, 0)], state={"planner": {"next_seed": 2}})
    assert s.get_state("planner") == {"next_seed": 2}
    a = s.claim("w", 10)
    assert s.complete(a, {"rewards": [1, 0]}, state={"planner": {"next_seed": 3}})
    assert s.get_state("planner") == {"next_seed": 3}
    assert [r.key for r in s.results(unacked_only=True)] == ["a"]
    s.ack([a.id])
    assert s.results(unacked_only=True) == []
    assert s.results(after_seq=1) == []
    b = s.claim("w", 10)
    assert s.cancel("b") is True
    assert s.complete(b, {}) == 0
    assert s.failures() == [("b", "cancelled")]
    with pytest.raises(Exception):
        s.enqueue("c", {"bad": object()})
    assert s.item("c") is None


def test_min_priority_claims_and_recover_after_a_crash(tmp_path):
    s = WorkStore(tmp_path / "q.db", clock=Clock(), max_attempts=2)
    s.enqueue_many([(f"job/{j}", {"job": j}, -j) for j in range(4)])
    assert s.claim("w", 10, min_priority=-1).key == "job/0"  # earliest step first
    assert s.claim("w", 10, min_priority=-1).key == "job/1"
    assert s.claim("w", 10, min_priority=-1) is None  # job 2 and 3 were not asked for yet
    # the owner died holding job/0 and job/1; its restart recovers them without waiting for leases
    again = WorkStore(tmp_path / "q.db", clock=Clock(), max_attempts=2)
    assert again.recover() == 2
    assert again.counts() == {"queued": 4, "running": 0, "done": 0, "failed": 0}
    item = again.claim("w2", 10)
    assert (item.key, item.attempt) == ("job/0", 2)  # the crash spent an attempt
    assert again.recover() == 1 and again.failures() == [("job/0", "lease expired (worker lost) after 2 attempts")]


def test_outcome_ledger_shares_the_file_and_truncates_by_job(tmp_path):
    from posttrain.scheduler.ledger import OutcomeLedger

    s = WorkStore(tmp_path / "q.db")
    led = OutcomeLedger(s)
    led.record(0, "a/d1/s0", "trained", domain="a", difficulty=1, samples=4, reward_mean=0.5)
    led.record(0, "a/d1/s1", "dropped", "zero variance", domain="a", difficulty=1, samples=2, reward_mean=1.0)
    led.record(1, "b/d2/s2", "failed", "sandbox: died", domain="b", difficulty=2)
    assert led.counts() == {"trained": 1, "dropped": 1, "failed": 1}
    cells = {(c["domain"], c["difficulty"]): c for c in led.cell_stats()}
    assert cells[("a", 1)]["groups"] == 2 and cells[("a", 1)]["reward_mean"] == pytest.approx(4 / 6)
    assert cells[("b", 2)]["failed"] == 1 and cells[("b", 2)]["reward_mean"] is None
    led.truncate(1)
    reopened = OutcomeLedger(WorkStore(tmp_path / "q.db"))
    assert [r["task"] for r in reopened.rows] == ["a/d1/s0", "a/d1/s1"]
    with pytest.raises(Exception):
        led.record(2, "x", "maybe")  # outcomes are checked by the table
