"""The RL algorithms ``rl.algorithm`` names: an advantage estimator plus a loss, by id.

:data:`ALGORITHM_REGISTRY` is a :class:`~posttrain.core.registry.Registry` like every other
pluggable kind: a package adds a recipe with ``ALGORITHM_REGISTRY.add("name", Algorithm(...))``
from a module named in the entry-point group ``posttrain.algorithms``. :data:`ALGORITHMS` is
its read-only mapping view (what older callers index).

Torch-free on purpose: the run config is checked against :data:`ALGORITHMS` before anything
heavy is imported, so a typo fails in a fraction of a second (``trainer/validate.py``). The
functions the ids point to live in :mod:`.advantages` (``ADVANTAGES``) and :mod:`.losses`
(``LOSSES``); a unit test checks that every id named here is registered there. The same
holds for the behaviour corrections (``rl.correction``, :data:`CORRECTION_IDS`) and
:mod:`.corrections` (``CORRECTIONS``).
"""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.core.errors import ConfigError
from posttrain.core.registry import Registry


@dataclass(frozen=True)
class Algorithm:
    name: str
    advantage: str  # id in posttrain.trainer.advantages.ADVANTAGES
    loss: str  # id in posttrain.trainer.losses.LOSSES
    filter_zero_variance: bool  # DAPO-style dynamic filtering is part of the recipe


ALGORITHM_REGISTRY: Registry[Algorithm] = Registry("algorithm", entry_point_group="posttrain.algorithms",
                                                   versioned=False)
for _a in (
    Algorithm("grpo", "grpo", "grpo", False),
    Algorithm("dr_grpo", "dr_grpo", "dr_grpo", False),
    Algorithm("dapo", "grpo", "dapo", True),
    Algorithm("rloo", "rloo", "rloo", False),
    Algorithm("reinforce_pp", "reinforce_pp", "reinforce", False),
    Algorithm("gspo", "grpo", "gspo", False),
    Algorithm("cispo", "grpo", "cispo", False),
):
    ALGORITHM_REGISTRY.add(_a.name, _a)
ALGORITHMS = ALGORITHM_REGISTRY.as_mapping()

# Ids of posttrain.trainer.corrections.CORRECTIONS (rl.correction), listed here torch-free
# for the config check; a unit test checks the two agree.
CORRECTION_IDS: tuple[str, ...] = ("none", "tis", "seq_mis", "icepop")


def check_correction(name: str) -> None:
    """Raise a ConfigError naming the allowed ids when ``rl.correction`` is not one."""
    if name in CORRECTION_IDS:
        return
    import difflib

    allowed = list(CORRECTION_IDS)
    if _has_plugins("posttrain.corrections"):  # only then pay for the torch import
        from posttrain.trainer.corrections import CORRECTIONS

        if name in CORRECTIONS:
            return
        allowed = CORRECTIONS.ids()
    close = difflib.get_close_matches(str(name), allowed, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"rl.correction: got {name!r}{hint} (allowed: {', '.join(allowed)})")


def _has_plugins(group: str) -> bool:
    from importlib import metadata

    return bool(metadata.entry_points(group=group))


def get_algorithm(name: str) -> Algorithm:
    """The recipe behind ``RLConfig.algorithm``; a ConfigError names the allowed ones."""
    if name in ALGORITHM_REGISTRY:
        return ALGORITHM_REGISTRY.get(name)
    import difflib

    known = ALGORITHM_REGISTRY.ids()
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"rl.algorithm: got {name!r}{hint} (allowed: {', '.join(known)})")
