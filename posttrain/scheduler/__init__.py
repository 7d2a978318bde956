"""posttrain.scheduler: the two-level scheduler (DESIGN.md §6).

- Global: :class:`Curriculum` chooses (domain, difficulty) cells from live statistics; the
  training loops draw their tasks from it (``trainer/tasks.CurriculumStream``).
- Local, on the training path: :func:`~posttrain.scheduler.rollouts.play_scheduled` plays a
  step's tasks with the one episode engine (staged timeouts, cancellation, episode
  checkpoints), replays groups hit by an infrastructure failure with backoff, resuming them
  from their checkpoint; :class:`~posttrain.scheduler.filters.GroupFilter` drops what must not
  reach the loss, with counters.
- Persistence: :class:`WorkStore` keeps the async loop's jobs, leases, results and episode
  checkpoints in SQLite; :class:`OutcomeLedger` each task's outcome in the same file.

See ``docs/scheduler.md`` for the rules, the config fields and the metrics.
"""

from .config import CurriculumConfig, DomainOverride, StageSpec
from .curriculum import Curriculum, CurriculumDomain
from .filters import GroupFilter
from .ledger import OutcomeLedger
from .retry import Cancelled, WorkerLost
from .rollouts import play_scheduled
from .store import Result, WorkItem, WorkStore

__all__ = ["Cancelled", "Curriculum", "CurriculumConfig", "CurriculumDomain", "DomainOverride",
           "GroupFilter", "OutcomeLedger", "Result", "StageSpec", "WorkItem", "WorkStore",
           "WorkerLost", "play_scheduled"]
