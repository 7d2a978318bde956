"""reasoning-gym's procedural generators as posttrain domains (the ``reasoning_gym`` extra).

Each generator ``<name>`` of the table in :mod:`._rg_manifest` becomes the domain
``<family>.rg_<name>-vN`` (family chosen per generator: ``math``, ``logic``, ``algorithms``,
``games``, ``text_data``, ``code``, ``long_context``; N = 1, or 2 for the generators whose
rewards :mod:`._rg_strict` changed), flagged ``native = False`` and
``source = "reasoning-gym"``, also reachable by the alias ``rg.<name>`` (see
:mod:`posttrain.domains.adapters`). Registration reads only the table: ``reasoning_gym``
itself (about 1.6 s to import) is imported on the first ``generate`` or ``score``.

Difficulty: for a generator with a curriculum, level ``d`` is the curriculum's global level
``levels[d - 1]`` (up to five, evenly spaced over the curriculum's range; each attribute set
to its own band, or the inclusive range where the banded one is invalid). Generators
without a curriculum get three levels by question length: the terciles of 60 reference items,
reached by rejection sampling with the task's rng.

The hardened scorer (reasoning-gym's own scorers give partial credit, e.g. the default one
pays ``len(oracle) / len(answer)`` for an answer that merely contains the oracle):

- the answer is extracted strictly (:func:`posttrain.verifiers.text.extract_answer`: the last
  ``<answer>`` block, else the whole text, stripped); empty answers score 0;
- answers longer than ``3 * len(oracle) + 64`` characters, or with more lines than the
  reference, score 0 (padding, floods, one candidate per line);
- reasoning-gym's ``score_answer`` then runs on the extracted text; only a full 1.0 counts
  (reward in {0, 1}: no partial credit at all); a scorer exception is a 0 with its reason;
- an accepted answer scores 0 anyway when a proper part of it (a run of as many tokens as the
  reference, or a comma/line/"or"-separated piece) is accepted on its own: that answer is a
  right one padded with more (``5 6``, ``(1, 2), not (1, 2)``, ``x**2 or 0``);
- generators whose own scorer is broken get a strict one instead (:data:`SCORERS`), and a
  few whose scorer reads answers too generously get a check in front of it
  (:mod:`._rg_strict`: a restated premise, a prompt sentence that names the right roles);
- the task is regenerated from ``(difficulty, index)`` at scoring time and must match the
  prompt, else the Score carries an ``error`` (a non-deterministic generator is a verifier
  failure, never a silent reward).

Does not: keep reasoning-gym's graded rewards (on purpose), or cover generators whose
reference answer is missing or cannot be hardened (listed in :data:`._rg_manifest.DROPPED`).
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections import OrderedDict
from typing import Any, Callable

from posttrain.core.errors import ErrorInfo, MissingExtraError
from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task

from ._quiet import quiet_output
from ._rg_manifest import DATASETS, SIZES
from ._rg_strict import VERSIONS, propositional_reference, wrap

SEED = 20_250_101  # fixed dataset seed: (difficulty, index) names one item in every process
DEFAULT_SIZE = 100_000
LENGTH_SAMPLE = 60
INSTRUCTION = "\n\nGive only the final answer inside <answer></answer> tags."
_LOCK = threading.RLock()
_LOG = logging.getLogger(__name__)  # what the generators print lands here (DEBUG), not on the terminal


def rg_id(name: str) -> str:
    family = DATASETS[name][0]
    return f"{family}.rg_{name}-v{VERSIONS.get(name, 1)}"


def _rg() -> Any:
    try:
        from reasoning_gym import factory  # importing it registers every generator
    except ImportError as exc:
        raise MissingExtraError("reasoning_gym", "reasoning_gym") from exc
    from ._rg_safe_eval import harden

    harden()  # before any of its scorers sees an answer: none may run it as code
    return factory


def build_dataset(name: str, level: Any, size: int) -> Any:
    """The reasoning-gym dataset object for one posttrain level (curriculum level or None)."""
    factory = _rg()
    ds_cls, cfg_cls = factory.DATASETS[name]
    if level is None:
        config = cfg_cls(seed=SEED, size=size)
    else:
        from reasoning_gym.coaching.base_curriculum import DefaultCurriculumContext, RangeAttributeMode

        rg_level, mode = level
        cur = factory.create_curriculum(name)
        cur.set_global_level(rg_level)
        ctx = DefaultCurriculumContext(mode=RangeAttributeMode(mode))
        config = cur.generate_configuration({"seed": SEED, "size": size}, context=ctx)
    # Some generators print while they build (and codeio's snippets while they run): a
    # library must not write to its user's terminal, and stdout may carry a --json document.
    with quiet_output(_LOG):
        return ds_cls(config=config)


def _json_map(value: Any) -> str:
    if isinstance(value, str):
        import ast

        value = ast.literal_eval(value)
    return json.dumps({str(k): v for k, v in dict(value).items()})


# Generators whose items carry no single ``answer`` but a valid example in their metadata.
REFERENCES: dict[str, Callable[[dict], str]] = {
    "graph_color": lambda item: _json_map(item["metadata"]["possible_answer"]),
    "propositional_logic": propositional_reference,
    "rubiks_cube": lambda item: str(item["metadata"]["example_correct_answer"]).strip(),
}


def _exact_label(answer: str | None, entry: dict) -> float:
    """Case-insensitive exact match of the whole answer (for generators with a broken scorer)."""
    return float(isinstance(answer, str) and answer.strip().lower() == str(entry["answer"]).strip().lower())


# reasoning-gym scorers that cannot be hardened by wrapping, replaced by a strict one.
SCORERS: dict[str, Callable[[str, dict], float]] = {
    # bool(answer) == bool(entry["answer"]): any non-empty text scores 1.0
    "game_of_life_halting": _exact_label,
}

# Generators that legitimately show their answer in the prompt (conformance exemptions).
EXEMPT: dict[str, dict[str, str]] = {
    "needle_haystack": {"answer_in_prompt": "the task is to find the answer in the text"},
    "number_format": {"answer_in_prompt": "the answer is one of the numbers listed"},
}


def scorer_for(name: str, dataset: Any) -> Callable[[str, dict], float]:
    from ._rg_safe_eval import harden

    harden()  # cheap when nothing new was imported; covers modules loaded after the factory
    return SCORERS.get(name) or wrap(name, dataset.score_answer)


def reference(name: str, item: dict) -> str:
    """The reference answer of a reasoning-gym item, as text."""
    if name in REFERENCES:
        return REFERENCES[name](item)
    if item.get("answer") is None:
        raise ValueError(f"reasoning-gym {name!r} gives no reference answer")
    return str(item["answer"])


class RGDomain:
    """One reasoning-gym generator as a domain (see the module docstring)."""

    env_kind = "single_turn"
    native = False
    source = "reasoning-gym"

    def __init__(self, name: str, family: str | None = None, levels: Any = None,
                 size: int | None = None):
        if family is None:  # the table's choice; the survey passes candidates explicitly
            family, levels = DATASETS[name]
        self.rg_name, self.family = name, family
        self.id = f"{family}.rg_{name}-v{VERSIONS.get(name, 1)}"
        self.alias = f"rg.{name}"
        self._levels = tuple(levels) if levels else (None, None, None)
        self.difficulties = tuple(range(1, len(self._levels) + 1))
        self.size = size or SIZES.get(name, DEFAULT_SIZE)
        self.description = f"reasoning-gym generator {name!r} (hardened scorer, no partial credit)."
        self.conformance_exempt = dict(EXEMPT.get(name, {}))
        self._reset_caches()

    def _reset_caches(self) -> None:
        self._lock = threading.RLock()  # per domain: building one dataset blocks no other
        self._ds: dict[int, Any] = {}
        self._cuts: tuple[int, int] | None = None
        self._entries: OrderedDict[tuple[int, int], dict] = OrderedDict()

    def __getstate__(self) -> dict:  # ships without its caches (rebuilt lazily where it lands)
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_lock", "_ds", "_cuts", "_entries")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._reset_caches()

    # -- data --------------------------------------------------------------------------------
    def dataset(self, difficulty: int) -> Any:
        with self._lock:
            if difficulty not in self._ds:
                key = 1 if self._levels[0] is None else difficulty  # no curriculum: one dataset
                if key not in self._ds:
                    self._ds[key] = build_dataset(self.rg_name, self._levels[key - 1], self.size)
                self._ds[difficulty] = self._ds[key]
            return self._ds[difficulty]

    def entry(self, difficulty: int, index: int) -> dict:
        """Item ``index`` of the level's dataset (a small LRU: scoring regenerates it)."""
        key = (difficulty, index)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        with quiet_output(_LOG):  # items are generated lazily, and some generators print
            item = self.dataset(difficulty)[index]
        with self._lock:
            self._entries[key] = item
            while len(self._entries) > 256:
                self._entries.popitem(last=False)
        return item

    def _length_cuts(self) -> tuple[int, int]:
        if self._cuts is None:
            lens = sorted(len(self.entry(1, i)["question"]) for i in range(LENGTH_SAMPLE))
            self._cuts = (lens[LENGTH_SAMPLE // 3], lens[2 * LENGTH_SAMPLE // 3])
        return self._cuts

    def _pick(self, rng: random.Random, difficulty: int) -> tuple[int, dict]:
        if self._levels[0] is not None:
            idx = rng.randrange(self.size)
            return idx, self.entry(difficulty, idx)
        lo, hi = self._length_cuts()
        # Rejection sampling by question length, ~3 tries on average; after 400 misses (a
        # generator whose lengths drifted from the sample) the last item is used as it is.
        for _ in range(400):
            idx = rng.randrange(self.size)
            item = self.entry(difficulty, idx)
            n = len(item["question"])
            if (1 if n <= lo else 2 if n <= hi else 3) == difficulty:
                return idx, item
        return idx, item

    # -- the Domain protocol -----------------------------------------------------------------
    def generate(self, rng: random.Random, difficulty: int) -> Task:
        idx, item = self._pick(rng, difficulty)
        return make_task(self.id, difficulty, str(item["question"]) + INSTRUCTION,
                         answer=reference(self.rg_name, item), hidden={"index": idx},
                         metadata={"source": "reasoning-gym", "dataset": self.rg_name})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        from ._rg_scoring import hardened_score

        try:
            item = self.entry(task.difficulty, int(task.hidden["index"]))
        except Exception as exc:  # the generator itself failed: a verifier error, not a 0
            return Score(0.0, error=ErrorInfo.from_exception(exc), verifier_version=self.id)
        users = [m for m in task.prompt if m.get("role") == "user"]
        if not users or users[-1].get("content") != str(item["question"]) + INSTRUCTION:
            return Score(0.0, error=ErrorInfo("verifier", "reasoning-gym regenerated a different "
                                              "task (non-deterministic generator?)"),
                         verifier_version=self.id)
        scorer = scorer_for(self.rg_name, self.dataset(task.difficulty))
        with quiet_output(_LOG):
            return hardened_score(scorer, item, answer, str(task.hidden["answer"]), self.id)

    def probes(self, task: Task) -> dict[str, str]:
        from ._restate import restate_probes
        from ._rg_scoring import padding_probes

        oracle, idx = str(task.hidden["answer"]), int(task.hidden["index"])
        other = self.entry(task.difficulty, (idx + 1) % self.size)
        third = self.entry(task.difficulty, (idx + 2) % self.size)
        users = [m for m in task.prompt if m.get("role") == "user"]
        prompt = str(users[-1].get("content", "")) if users else ""
        restated = restate_probes(prompt, oracle, instruction=INSTRUCTION,
                                  others=[str(other["question"]), str(third["question"])])
        return {**padding_probes(oracle, reference(self.rg_name, other)), **restated.probes}


_REGISTERED: dict[str, RGDomain] = {}


def register_all() -> dict[str, RGDomain]:
    """Register every generator of the table once; returns ``{rg name: domain}``."""
    from posttrain.domains.base import register_domain

    with _LOCK:
        for name in DATASETS:
            if name not in _REGISTERED:
                _REGISTERED[name] = register_domain(RGDomain(name))
    return dict(_REGISTERED)
