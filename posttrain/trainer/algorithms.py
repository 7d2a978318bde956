"""The RL algorithms ``rl.algorithm`` names: an advantage estimator plus a loss, by id.

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


@dataclass(frozen=True)
class Algorithm:
    name: str
    advantage: str  # id in posttrain.trainer.advantages.ADVANTAGES
    loss: str  # id in posttrain.trainer.losses.LOSSES
    filter_zero_variance: bool  # DAPO-style dynamic filtering is part of the recipe


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a for a in (
        Algorithm("grpo", "grpo", "grpo", False),
        Algorithm("dr_grpo", "dr_grpo", "dr_grpo", False),
        Algorithm("dapo", "grpo", "dapo", True),
        Algorithm("rloo", "rloo", "rloo", False),
        Algorithm("reinforce_pp", "reinforce_pp", "reinforce", False),
        Algorithm("gspo", "grpo", "gspo", False),
        Algorithm("cispo", "grpo", "cispo", False),
    )
}

# Ids of posttrain.trainer.corrections.CORRECTIONS (rl.correction), listed here torch-free
# for the config check; a unit test checks the two agree.
CORRECTION_IDS: tuple[str, ...] = ("none", "tis", "seq_mis", "icepop")


def check_correction(name: str) -> None:
    """Raise a ConfigError naming the allowed ids when ``rl.correction`` is not one."""
    if name in CORRECTION_IDS:
        return
    import difflib

    close = difflib.get_close_matches(str(name), CORRECTION_IDS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"rl.correction: got {name!r}{hint} (allowed: {', '.join(CORRECTION_IDS)})")


def get_algorithm(name: str) -> Algorithm:
    """The recipe behind ``RLConfig.algorithm``; a ConfigError names the allowed ones."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(str(name), list(ALGORITHMS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"rl.algorithm: got {name!r}{hint} (allowed: {', '.join(sorted(ALGORITHMS))})"
        ) from None
