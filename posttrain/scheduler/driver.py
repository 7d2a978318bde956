"""The two-level scheduler wired together: curriculum → SQLite queue → local scheduler → trainer.

``Scheduler.open(path, domains, episode_fn)`` opens (or resumes) a run stored in one SQLite
file. A planner thread keeps about ``queue_target`` items queued: it asks the curriculum for
cells, gives each a fresh seed from a persisted counter, and enqueues
``{domain, difficulty, seed}`` under the key ``domain/d<difficulty>/s<seed>`` in the same
transaction that saves the curriculum state and the counter. The local scheduler runs each
item as ``episode_fn(task, ctx)``; every completed group updates the curriculum. The trainer
calls ``take(n)`` for ready groups, ``set_step(step)`` as it goes, and ``ack(groups)`` once
its checkpoint holds them.

Resume (a crash of any process): the curriculum state saved with the last plan is loaded and
the completions after it are replayed in completion order, so its statistics count every
finished group exactly once; items of a dead worker come back when their lease ends; groups
completed but never acknowledged are delivered again (``ack`` right after the trainer's
checkpoint; a group taken but not acked when the process dies is delivered once more).

Not covered: several planners on one file (one ``Scheduler`` per run; many local schedulers
may share the file through their own ``LocalScheduler`` and ``WorkStore``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from posttrain.core.serde import from_dict
from posttrain.core.types import Task, TrajectoryGroup

from .config import CurriculumConfig, LocalConfig, local_config
from .curriculum import Curriculum
from .local import EpisodeContext, LocalScheduler, ReadyGroup
from .store import WorkItem, WorkStore

TaskFactory = Callable[[str, int, int], Task]  # (domain id, difficulty, seed) -> Task
Episode = Callable[[Task, EpisodeContext], TrajectoryGroup]


def registry_task(domain_id: str, difficulty: int, seed: int) -> Task:
    """Tasks from the domain registry (``posttrain.domains``)."""
    from posttrain.domains.base import get_domain, sample_task

    return sample_task(get_domain(domain_id), seed, difficulty)


class Scheduler:
    def __init__(self, store: WorkStore, curriculum: Curriculum, local: LocalScheduler,
                 queue_target: int):
        self.store, self.curriculum, self.local = store, curriculum, local
        self.queue_target = queue_target
        self._lock = threading.RLock()  # the curriculum is touched by planner and episode threads
        self._applied_seq = 0
        self._next_seed = 0
        self._stop = threading.Event()
        self._planner: threading.Thread | None = None

    @classmethod
    def open(cls, path: str | Path, domains: Iterable[Any], episode_fn: Episode, *,
             curriculum: CurriculumConfig | dict | None = None, local: LocalConfig | dict | None = None,
             task_factory: TaskFactory = registry_task, queue_target: int | None = None,
             worker_id: str | None = None) -> "Scheduler":
        """Open a run (new or resumed) stored at ``path``."""
        lcfg = local_config(local)
        store = WorkStore(path, max_attempts=lcfg.max_attempts)
        cur = Curriculum(domains, curriculum)

        def run(item: WorkItem, ctx: EpisodeContext) -> TrajectoryGroup:
            p = item.payload
            return episode_fn(task_factory(p["domain"], p["difficulty"], p["seed"]), ctx)

        target = queue_target or 2 * lcfg.max_concurrency + lcfg.high_watermark
        sched = cls(store, cur, None, target)  # type: ignore[arg-type]
        sched.local = LocalScheduler(store, run, lcfg, on_group=sched._on_group, worker_id=worker_id,
                                     seed=cur.config.seed)
        sched._resume()
        return sched

    # ----------------------------------------------------------------- resume
    def _resume(self) -> None:
        saved = self.store.get_state("curriculum")
        if saved is not None:
            self.curriculum.load_state_dict(saved["state"])
            self._applied_seq = saved["applied_seq"]
        self._next_seed = self.store.get_state("planner", {"next_seed": 0})["next_seed"]
        for r in self.store.results(after_seq=self._applied_seq):
            if r.result.get("rewards"):
                p = r.payload
                self.curriculum.update(p["domain"], p["difficulty"], r.result["rewards"])
            self._applied_seq = r.seq
        pending = [ReadyGroup(r.id, r.key, r.payload, from_dict(TrajectoryGroup, r.result["group"]))
                   for r in self.store.results(unacked_only=True) if "group" in r.result]
        if pending:
            self.local.redeliver(pending)

    def _on_group(self, item: WorkItem, group: TrajectoryGroup, seq: int) -> None:
        with self._lock:
            p = item.payload
            self.curriculum.update(p["domain"], p["difficulty"], group.rewards_G)
            self._applied_seq = max(self._applied_seq, seq)

    # ----------------------------------------------------------------- planning
    def plan(self) -> int:
        """Top the queue up to ``queue_target`` items; returns how many were enqueued."""
        want = self.queue_target - self.store.counts()["queued"]
        if want <= 0:
            return 0
        with self._lock:
            cur = self.curriculum
            cells = cur.next_cells(want)
            items = []
            for dom, diff in cells:
                seed = self._next_seed
                self._next_seed += 1
                prio = int(cur.priority[cur._dom_index[dom]])
                items.append((f"{dom}/d{diff}/s{seed}",
                              dict(domain=dom, difficulty=diff, seed=seed, step=cur.step), prio))
            state = {"planner": {"next_seed": self._next_seed},
                     "curriculum": {"state": cur.state_dict(), "applied_seq": self._applied_seq}}
            return self.store.enqueue_many(items, state=state)

    def _plan_loop(self) -> None:
        while not self._stop.is_set():
            self.plan()
            self._stop.wait(max(self.local.cfg.poll_s, 0.02))

    # ----------------------------------------------------------------- trainer API
    def start(self) -> "Scheduler":
        self.plan()
        self.local.start()
        if self._planner is None:
            self._stop.clear()
            self._planner = threading.Thread(target=self._plan_loop, name="sched-plan", daemon=True)
            self._planner.start()
        return self

    def take(self, n: int, timeout: float | None = None) -> list[ReadyGroup]:
        """Up to ``n`` ready groups (waits up to ``timeout`` s for the first)."""
        return self.local.take(n, timeout)

    def ack(self, groups: Iterable[ReadyGroup]) -> None:
        """The consumer has made these groups durable (e.g. its checkpoint holds them)."""
        self.store.ack(g.item_id for g in groups)

    def set_step(self, step: int) -> None:
        with self._lock:
            self.curriculum.set_step(step)

    def save(self) -> None:
        """Persist the curriculum now (also done with every plan)."""
        with self._lock:
            self.store.put_state("curriculum", {"state": self.curriculum.state_dict(),
                                                "applied_seq": self._applied_seq})

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._planner is not None:
            self._planner.join(timeout)
            self._planner = None
        self.local.stop(timeout)
        self.save()

    def metrics(self) -> dict[str, float]:
        with self._lock:
            out = self.curriculum.metrics()
        out.update(self.local.metrics())
        out.update({f"sched/store/{k}": float(v) for k, v in self.store.counts().items()})
        return out

    def write_report(self, out_dir: str | Path) -> None:
        """``curriculum.json`` and ``curriculum.png`` (pass rate per cell) in ``out_dir``."""
        with self._lock:
            doc = self.curriculum.to_json()
        from .report import draw_heatmap, write_json

        write_json(doc, Path(out_dir) / "curriculum.json")
        draw_heatmap(doc, Path(out_dir) / "curriculum.png")
