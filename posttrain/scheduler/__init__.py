"""posttrain.scheduler: the two-level scheduler (DESIGN.md §6).

- Global: :class:`Curriculum` chooses (domain, difficulty) cells from live statistics.
- Local: :class:`LocalScheduler` runs episodes with bounded concurrency, retries and filters.
- Persistence: :class:`WorkStore` keeps the queue, in-flight work and statistics in SQLite;
  :class:`OutcomeLedger` each task's outcome in the same file.
- :class:`Scheduler` wires the three together for a trainer (``take``/``ack``/``set_step``).

See ``docs/scheduler.md`` for the rules, the config fields and the ``sched/`` metrics.
"""

from .config import CurriculumConfig, DomainOverride, LocalConfig, StageSpec
from .curriculum import Curriculum, CurriculumDomain
from .driver import Scheduler, registry_task
from .ledger import OutcomeLedger
from .local import EpisodeContext, LocalScheduler, ReadyGroup
from .retry import Cancelled, WorkerLost
from .store import Result, WorkItem, WorkStore

__all__ = ["Cancelled", "Curriculum", "CurriculumConfig", "CurriculumDomain", "DomainOverride",
           "EpisodeContext", "LocalConfig", "LocalScheduler", "OutcomeLedger", "ReadyGroup", "Result",
           "Scheduler", "StageSpec", "WorkItem", "WorkStore", "WorkerLost", "registry_task"]
