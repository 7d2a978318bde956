"""The global scheduler: a curriculum over (domain, difficulty) cells.

``next_cells(n)`` draws the next n cells; ``update(domain, difficulty, rewards_G)`` folds a
group's rewards back in. The rules (details and numbers in ``docs/scheduler.md``):

- **Learnability.** A cell's weight is its score ``(1 - P(all-equal group)) * E[reward var]``
  (``cells.py``): cells with a pass rate strictly between 0 and 1 and a high reward variance
  first; a cell predicted to give an all-equal group with probability above
  ``skip_zero_var_above`` is skipped before generation (it keeps ``min_cell_weight`` only).
- **Levels.** Each domain has a frontier level; the frontier and ``replay_levels`` below it
  are active. After ``min_groups`` fresh groups, a frontier cell whose pass rate reaches
  ``promote_at`` promotes the domain one level; an active cell whose pass rate falls to
  ``demote_at`` demotes the frontier to the level below it (a saturated or collapsed cell has
  a near-zero score anyway; the levels decide which harder cells get tried at all).
- **Domains.** A domain's share is ``floor_share / n_domains`` (so none starves) plus its part
  of the rest in proportion to mixture weight × stage weight at this step × expected
  learnability of a draw from it; ``max_share`` caps a share, ``budget`` caps total groups.
  Priorities order the cells a call returns (higher first); they do not change amounts.
- **Stages.** Each domain belongs to a stage (foundation, tools, domain, long_horizon) with a
  step schedule of weights and its own bias towards easier active levels.
- **Measured prior** (``measured_prior``, or a ``prior`` mapping passed in). A measured pass
  rate ``p`` of a cell (``posttrain domains calibrate``/``catalogue``, committed in
  ``posttrain/domains/calibration.json``) starts that cell's statistics at
  ``measured_prior_samples`` pseudo-samples (``p`` of them passes), which decay like observed
  ones; a domain's first frontier is its lowest level measured below ``promote_at`` (levels
  measured as saturated are skipped). Cells without a figure keep the flat prior.

Guarantees: a draw costs O(n log cells) (a cached CDF and a binary search); an update is
O(G) and only marks the CDF stale, rebuilt once per ``next_cells`` in vectorised numpy.
``state_dict``/``load_state_dict`` restore everything, RNG included: the decisions after a
restore are identical to those of the original. Not covered: generating tasks, seeds and
persistence (``planner.py`` and ``store.py``).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from posttrain.core.errors import ConfigError, SchedulerError

from .cells import CellStats
from .config import STAGES, CurriculumConfig, curriculum_config
from .stages import stage_easy_bias, stage_of, stage_weights

log = logging.getLogger("posttrain.scheduler")
Cell = tuple[str, int]


@dataclass(frozen=True)
class CurriculumDomain:
    """What the curriculum needs to know of a domain (any Domain object also fits)."""

    id: str
    family: str
    difficulties: tuple[int, ...]


class Curriculum:
    """Sampler of (domain, difficulty) cells from live per-cell statistics."""

    def __init__(self, domains: Iterable[Any], config: CurriculumConfig | dict | None = None,
                 prior: dict[Cell, float] | None = None):
        self.config = cfg = curriculum_config(config)
        doms = [CurriculumDomain(d.id, d.family, tuple(sorted(d.difficulties))) for d in domains]
        ids = [d.id for d in doms]
        if not doms or len(set(ids)) != len(ids):
            raise ConfigError(f"curriculum needs distinct domains, got {ids}")
        unknown = sorted(set(cfg.domains) - set(ids))
        if unknown:
            raise ConfigError(f"curriculum.domains: unknown domain ids {unknown} (known: {ids})")
        self.domains = doms
        self._build_arrays(doms, cfg)
        self.stats = CellStats(len(self.cells), group_size=cfg.group_size,
                               success_threshold=cfg.success_threshold, prior_alpha=cfg.prior_alpha,
                               prior_beta=cfg.prior_beta, decay=cfg.decay)
        if prior is None and cfg.measured_prior:
            prior = _measured_prior(doms)
        if prior:
            self._apply_prior(prior)
        self.rng = np.random.Generator(np.random.PCG64(cfg.seed))
        self.step = 0
        self.counters = dict(decisions=0, learnable_decisions=0, pzv_sum=0.0, groups=0,
                             zero_var_groups=0, promotions=0, demotions=0)
        self.stage_decisions = np.zeros(len(STAGES), dtype=np.int64)
        self.events: deque[dict[str, Any]] = deque(maxlen=1000)
        self._dirty = True

    def _build_arrays(self, doms: list[CurriculumDomain], cfg: CurriculumConfig) -> None:
        self.cells: list[Cell] = [(d.id, diff) for d in doms for diff in d.difficulties]
        self._index = {c: i for i, c in enumerate(self.cells)}
        self._dom_index = {d.id: j for j, d in enumerate(doms)}
        self.n_levels = np.array([len(d.difficulties) for d in doms], dtype=np.int64)
        self.start = np.concatenate([[0], np.cumsum(self.n_levels)[:-1]]).astype(np.int64)
        self.dom_C = np.repeat(np.arange(len(doms)), self.n_levels)
        self.lvl_C = np.arange(len(self.cells)) - self.start[self.dom_C]
        self._dom_list, self._lvl_list = self.dom_C.tolist(), self.lvl_C.tolist()
        ov = [cfg.domains.get(d.id) for d in doms]
        self.mix = np.array([o.weight if o else 1.0 for o in ov])
        self.priority = np.array([o.priority if o else 0 for o in ov], dtype=np.int64)
        self.max_share = np.array([o.max_share if o and o.max_share else np.inf for o in ov])
        self.budget = np.array([o.budget if o and o.budget is not None else -1 for o in ov])
        self.stage = [stage_of(d.id, d.family, cfg) for d in doms]
        self.stage_idx = np.array([STAGES.index(s) for s in self.stage], dtype=np.int64)
        self.easy_bias = np.array([stage_easy_bias(cfg.stages, s) for s in self.stage])
        self.frontier = np.zeros(len(doms), dtype=np.int64)
        self.decided = np.zeros(len(doms), dtype=np.int64)
        self._ordered = bool(np.any(self.priority != self.priority[0]))
        self._struct: tuple[int, np.ndarray, np.ndarray] | None = None

    def _apply_prior(self, prior: dict[Cell, float]) -> None:
        """Seed cell statistics and first frontiers from measured pass rates (see the docstring)."""
        w = self.config.measured_prior_samples
        for cell, p in prior.items():
            i = self._index.get((cell[0], int(cell[1])))
            if i is None:
                continue
            if not 0.0 <= p <= 1.0:
                raise ConfigError(f"measured prior of {cell}: pass rate {p!r} is outside [0, 1]")
            self.stats.s_eff[i], self.stats.f_eff[i] = w * p, w * (1.0 - p)
        self.stats.load_state_dict(self.stats.state_dict())  # recompute the derived vectors
        for j, dom in enumerate(self.domains):
            k = 0
            while (k < len(dom.difficulties) - 1
                   and prior.get((dom.id, dom.difficulties[k]), 0.0) >= self.config.promote_at):
                k += 1
            self.frontier[j] = k

    # ------------------------------------------------------------------ weights
    def _active_mask(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.maximum(0, self.frontier - self.config.replay_levels)
        lo_C = lo[self.dom_C]
        active = (self.lvl_C >= lo_C) & (self.lvl_C <= self.frontier[self.dom_C])
        return active, self.lvl_C - lo_C

    def _structure(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-cell active mask × easy bias, and per-domain stage weight (cached: they only
        change when a frontier moves or the step changes)."""
        if self._struct is None or self._struct[0] != self.step:
            active, rank = self._active_mask()
            # replay levels guard against forgetting; they are mostly solved, so they get
            # a reduced weight rather than the easy bias's preference for low levels
            replay = np.where(self.lvl_C < self.frontier[self.dom_C], self.config.replay_weight, 1.0)
            shape = active * replay * np.exp(-self.easy_bias[self.dom_C] * rank)
            sw = stage_weights(self.config.stages, self.step)
            stage_w = np.array([sw[s] for s in STAGES])[self.stage_idx]
            self._struct = (self.step, shape, stage_w)
        return self._struct[1], self._struct[2]

    def _refresh(self) -> None:
        """Rebuild the per-cell sampling distribution (vectorised, O(cells))."""
        cfg, D = self.config, len(self.domains)
        shape, stage_w = self._structure()
        score = np.where(self.stats.pzv > cfg.skip_zero_var_above, 0.0, self.stats.score)
        cellw = shape * (score + cfg.min_cell_weight)
        mass = np.bincount(self.dom_C, cellw, minlength=D)
        q = cellw / np.maximum(mass, 1e-300)[self.dom_C]
        learn = np.bincount(self.dom_C, q * score, minlength=D) / 0.25
        eligible = (self.mix > 0) & (mass > 0) & ((self.budget < 0) | (self.decided < self.budget))
        raw = np.where(eligible, self.mix * stage_w * (learn + cfg.min_cell_weight), 0.0)
        n_el = int(eligible.sum())
        if n_el == 0:
            self.share = np.zeros(D)
            self._cdf = None
            self._dirty = False
            return
        floor = cfg.floor_share if raw.sum() > 0 else 1.0
        share = eligible * floor / n_el + (1.0 - floor) * raw / max(raw.sum(), 1e-300)
        self.share = _cap_shares(share, self.max_share, eligible)
        prob = self.share[self.dom_C] * q
        self._prob = prob
        self._cdf = np.cumsum(prob)
        self._dirty = False

    # ------------------------------------------------------------------ decisions
    def next_cells(self, n: int) -> list[Cell]:
        """The next ``n`` cells to generate groups for, higher-priority domains first.

        Returns fewer than ``n`` only when every domain is exhausted (budget or weight 0).
        """
        picked: list[np.ndarray] = []
        left = n
        while left > 0:
            if self._dirty:
                self._refresh()
            if self._cdf is None:
                break
            u = self.rng.random(left) * self._cdf[-1]
            idx = np.minimum(np.searchsorted(self._cdf, u, side="right"), len(self.cells) - 1)
            idx = self._within_budget(idx)
            picked.append(idx)
            left -= len(idx)
        idx = np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)
        self._count_decisions(idx)
        if self._ordered and len(idx) > 1:
            idx = idx[np.argsort(-self.priority[self.dom_C[idx]], kind="stable")]
        cells = self.cells
        return [cells[i] for i in idx.tolist()]

    def _within_budget(self, idx: np.ndarray) -> np.ndarray:
        doms = self.dom_C[idx]
        counts = np.bincount(doms, minlength=len(self.domains))
        if np.any(self.budget >= 0):
            room = np.where(self.budget >= 0, self.budget - self.decided, np.iinfo(np.int64).max)
            if np.any(counts > room):
                # keep each domain's first `room` draws; the rest are redrawn after a refresh
                seen = np.zeros(len(self.domains), dtype=np.int64)
                keep = np.zeros(len(idx), dtype=bool)
                for j, d in enumerate(doms.tolist()):
                    if seen[d] < room[d]:
                        seen[d] += 1
                        keep[j] = True
                idx, counts = idx[keep], seen
                self._dirty = True
        self.decided += counts
        return idx

    def _count_decisions(self, idx: np.ndarray) -> None:
        if len(idx) == 0:
            return
        lo, hi = self.config.learnable_band
        p = self.stats.pass_rate_C[idx]
        c = self.counters
        c["decisions"] += len(idx)
        c["learnable_decisions"] += int(np.count_nonzero((p > lo) & (p < hi)))
        c["pzv_sum"] += float(self.stats.pzv[idx].sum())
        self.stage_decisions += np.bincount(self.stage_idx[self.dom_C[idx]], minlength=len(STAGES))

    def predict_zero_variance(self, domain: str, difficulty: int) -> float:
        """Predicted probability that a group of G samples of this cell has all-equal rewards."""
        return float(self.stats.pzv[self._cell(domain, difficulty)])

    def set_step(self, step: int) -> None:
        """Tell the curriculum the trainer's step (stage weights depend on it)."""
        if step != self.step:
            self.step = int(step)
            self._dirty = True

    # ------------------------------------------------------------------ feedback
    def update(self, domain: str, difficulty: int, rewards_G: Sequence[float]) -> bool:
        """Fold a group's rewards in; True when the group is informative (rewards not all equal)."""
        i = self._cell(domain, difficulty)
        rewards = [float(r) for r in rewards_G]
        if not rewards:
            return False
        var = self.stats.update(i, rewards, self.step)
        informative = max(rewards) > min(rewards)
        self.counters["groups"] += 1
        self.counters["zero_var_groups"] += not informative
        self._apply_level_rules(i)
        self._dirty = True
        return informative and var > 0.0

    def _apply_level_rules(self, i: int) -> None:
        cfg, st = self.config, self.stats
        if st.recent[i] < cfg.min_groups:
            return
        d, k = self._dom_list[i], self._lvl_list[i]
        f = int(self.frontier[d])
        p = float(st.pass_rate_C[i])
        if k == f and p >= cfg.promote_at and f < self.n_levels[d] - 1:
            self._move(d, f + 1, "promote", p)
        elif p <= cfg.demote_at and 0 < k <= f and k >= f - cfg.replay_levels:
            self._move(d, k - 1, "demote", p)
            st.recent[i] = 0

    def _move(self, d: int, to: int, kind: str, p: float) -> None:
        dom = self.domains[d]
        before = dom.difficulties[int(self.frontier[d])]
        self.frontier[d] = to
        self._struct = None
        self.stats.recent[int(self.start[d]) + to] = 0  # the new frontier needs fresh evidence
        self.counters["promotions" if kind == "promote" else "demotions"] += 1
        event = dict(step=self.step, domain=dom.id, kind=kind, pass_rate=round(float(p), 4),
                     from_difficulty=before, to_difficulty=dom.difficulties[to])
        self.events.append(event)
        log.info("curriculum %s %s: difficulty %s -> %s (pass rate %.3f)", kind, dom.id,
                 before, event["to_difficulty"], p)

    def _cell(self, domain: str, difficulty: int) -> int:
        try:
            return self._index[(domain, int(difficulty))]
        except KeyError:
            raise SchedulerError(f"unknown cell ({domain!r}, {difficulty}); the curriculum has "
                                 f"{len(self.domains)} domains") from None

    # ------------------------------------------------------------------ views
    def frontier_difficulty(self, domain: str) -> int:
        d = self._dom_index[domain]
        return self.domains[d].difficulties[int(self.frontier[d])]

    def active_cells(self) -> list[Cell]:
        active, _ = self._active_mask()
        return [self.cells[i] for i in np.flatnonzero(active).tolist()]

    def probabilities(self) -> dict[Cell, float]:
        """Current probability of drawing each cell (for inspection and tests)."""
        if self._dirty:
            self._refresh()
        if self._cdf is None:
            return {c: 0.0 for c in self.cells}
        total = self._cdf[-1]
        return {c: float(p / total) for c, p in zip(self.cells, self._prob)}

    def metrics(self) -> dict[str, float]:
        from .report import curriculum_metrics

        return curriculum_metrics(self)

    def to_json(self) -> dict[str, Any]:
        from .report import curriculum_json

        return curriculum_json(self)

    def write_json(self, path: str) -> None:
        from .report import write_json

        write_json(self.to_json(), path)

    def heatmap(self, path: str) -> None:
        from .report import draw_heatmap

        draw_heatmap(self.to_json(), path)

    # ------------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        return dict(version=1, cells=[list(c) for c in self.cells], step=self.step,
                    stats=self.stats.state_dict(), frontier=self.frontier.tolist(),
                    decided=self.decided.tolist(), counters=dict(self.counters),
                    stage_decisions=self.stage_decisions.tolist(), events=list(self.events),
                    rng=self.rng.bit_generator.state)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        cells = [tuple(c) for c in state["cells"]]
        if cells != self.cells:
            raise SchedulerError("curriculum state is for a different set of (domain, difficulty) "
                                 f"cells ({len(cells)} saved, {len(self.cells)} here)")
        self.step = int(state["step"])
        self.stats.load_state_dict(state["stats"])
        self.frontier = np.asarray(state["frontier"], dtype=np.int64)
        self._struct = None
        self.decided = np.asarray(state["decided"], dtype=np.int64)
        self.counters = dict(state["counters"])
        self.stage_decisions = np.asarray(state["stage_decisions"], dtype=np.int64)
        self.events = deque(state["events"], maxlen=1000)
        self.rng.bit_generator.state = state["rng"]
        self._dirty = True


def _measured_prior(doms: Sequence[CurriculumDomain]) -> dict[Cell, float]:
    """The committed measured pass rates (the built-in model's) of these domains' cells."""
    from posttrain.domains.calibration import level_prior

    return {(d.id, lvl): p for d in doms for lvl, p in level_prior(d.id).items()
            if lvl in d.difficulties}


def _cap_shares(share: np.ndarray, cap: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Clip shares at their caps and hand the excess to the uncapped domains (water-filling)."""
    share = share.copy()
    for _ in range(len(share)):
        over = share > cap
        if not over.any():
            break
        excess = float((share[over] - cap[over]).sum())
        share[over] = cap[over]
        room = eligible & (share < cap)
        if not room.any():
            break
        share[room] += excess * share[room] / max(share[room].sum(), 1e-300)
    return share
