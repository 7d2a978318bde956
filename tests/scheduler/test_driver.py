"""The wired scheduler: a run killed mid-flight resumes losing and duplicating nothing."""

import subprocess
import sys
import time

import numpy as np

from posttrain.scheduler import CurriculumDomain, Scheduler

_SETUP = """
import random, time
from posttrain.core.types import Completion, Observation, Score, Task, Trajectory, TrajectoryGroup, Turn
from posttrain.scheduler import CurriculumDomain

DOMAINS = [CurriculumDomain(f"math.m{i}-v1", "math", (1, 2, 3)) for i in range(3)] + [
    CurriculumDomain("tools.t-v1", "tools", (1, 2, 3))]

def make_task(domain, difficulty, seed):
    return Task(domain=domain, seed=seed, difficulty=difficulty,
                prompt=({"role": "user", "content": f"{domain} {seed}"},))

def episode(task, ctx):
    rng = random.Random(task.key)
    time.sleep(0.002)
    p = {1: 0.95, 2: 0.5, 3: 0.05}[task.difficulty]
    trajs = []
    for g in range(4):
        comp = Completion(text="x", token_ids_T=(task.seed, g), logprobs_T=(-0.1, -0.2))
        trajs.append(Trajectory(task=task, turns=(Turn(Observation(task.prompt), comp),),
                                score=Score(float(rng.random() < p))))
    return TrajectoryGroup(task=task, trajectories=tuple(trajs))

CFG = dict(curriculum={"seed": 3, "group_size": 4, "min_groups": 2},
           local={"lease_s": 0.6, "max_concurrency": 3, "backoff_base_s": 0.01, "poll_s": 0.005},
           task_factory=make_task, queue_target=6)
"""

_CHILD = _SETUP + """
import os, sys
from posttrain.scheduler import Scheduler
s = Scheduler.open(sys.argv[1], DOMAINS, episode, **CFG).start()
got = 0
while got < 25:
    groups = s.take(5, timeout=10)
    if got < 10:
        s.ack(groups)  # the later ones are taken but never acked before the crash
    got += len(groups)
os._exit(9)  # no stop(), no save(): threads, leases and all die here
"""


def _stats_total(sched):
    return int(np.sum(sched.curriculum.stats.count))


def test_a_killed_run_resumes_without_losing_or_duplicating(tmp_path):
    db = str(tmp_path / "run.db")
    proc = subprocess.run([sys.executable, "-c", _CHILD, db], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr[-2000:]
    ns: dict = {}
    exec(_SETUP, ns)
    s = Scheduler.open(db, ns["DOMAINS"], ns["episode"], **ns["CFG"])
    done_before = s.store.results()
    # every finished group is counted exactly once in the curriculum after the replay
    assert _stats_total(s) == sum(len(r.result["rewards"]) for r in done_before)
    unacked_kept = [r for r in done_before if not r.acked and "group" in r.result]
    assert s.local.ready_count() == len(unacked_kept) > 0  # redelivered
    seeds_before = {r.payload["seed"] for r in done_before}
    time.sleep(0.7)  # the dead process's leases run out
    s.start()
    got = []
    while len(got) < 25:
        groups = s.take(5, timeout=10)
        s.ack(groups)
        got += groups
    s.stop()
    results = s.store.results()
    keys = [r.key for r in results]
    assert len(keys) == len(set(keys))
    assert _stats_total(s) == sum(len(r.result["rewards"]) for r in results)
    counts = s.store.counts()
    assert counts["running"] == 0 and counts["failed"] == 0
    assert max(r.payload["seed"] for r in results) > max(seeds_before)  # the same run goes on
    assert s.store.get_state("planner")["next_seed"] == sum(counts.values())
    m = s.metrics()
    assert m["sched/groups"] == len([r for r in results if r.result["rewards"]])
    assert m["sched/promotions"] > 0
    s.write_report(tmp_path / "report")
    assert (tmp_path / "report" / "curriculum.png").stat().st_size > 1000


def test_reopen_after_clean_stop_keeps_state(tmp_path):
    ns: dict = {}
    exec(_SETUP, ns)
    db = str(tmp_path / "run.db")
    s = Scheduler.open(db, ns["DOMAINS"], ns["episode"], **ns["CFG"]).start()
    while len(s.take(20, timeout=10)) == 0:
        pass
    s.set_step(7)
    s.stop()
    before = s.curriculum.state_dict()
    again = Scheduler.open(db, ns["DOMAINS"], ns["episode"], **ns["CFG"])
    assert again.curriculum.state_dict() == before
    assert again.curriculum.step == 7
