"""posttrain.scheduler: the two-level scheduler (DESIGN.md §6).

Global: :class:`Curriculum` chooses (domain, difficulty) cells from live statistics.
Local: :class:`LocalScheduler` runs episodes with bounded concurrency, retries and filters.
Persistence: :class:`WorkStore` keeps the queue, in-flight work and statistics in SQLite.
:class:`Scheduler` wires the three together. See ``docs/scheduler.md``.
"""

from .config import CurriculumConfig, DomainOverride, LocalConfig, StageSpec
from .curriculum import Curriculum, CurriculumDomain

__all__ = ["Curriculum", "CurriculumConfig", "CurriculumDomain", "DomainOverride",
           "LocalConfig", "StageSpec"]
