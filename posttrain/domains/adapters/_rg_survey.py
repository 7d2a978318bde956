"""Builds :mod:`._rg_manifest` from the installed reasoning-gym (a maintainer's tool).

``python -m posttrain.domains.adapters._rg_survey [NAMES...] > _rg_manifest.py`` (or in
parallel shards: ``--shard K/N --json`` then ``--render`` the shards' JSON) tries every
generator: for each curriculum level (at most nine, evenly spaced) the banded configuration,
else the inclusive one; a level is usable when its config validates, four items generate in
under 0.5 s each on average (10 s budget), the reference answer scores 1.0 through the
hardened scorer, and its configuration differs from the previous usable level's. Up to five
usable levels, evenly spaced, become posttrain difficulties 1..n (at least three are needed).
The resulting domain must then pass :func:`posttrain.domains.check_domain` (seeds 0 and 1);
every generator that fails any step is listed in ``DROPPED`` with the reason.

Runs reasoning-gym code in this process; it is not imported by the library.
"""

from __future__ import annotations

import signal
import sys
import time
import warnings
from typing import Any

FAMILY_OF_CATEGORY = {
    "algebra": "math", "arithmetic": "math", "probability": "math", "geometry": "math",
    "algorithmic": "algorithms", "graphs": "algorithms", "games": "games", "code": "code",
    "logic": "logic", "induction": "logic", "arc": "logic", "cognition": "logic",
}
FAMILY_OVERRIDES = {  # string manipulation is text_data; a needle in a haystack is long_context
    **{n: "text_data" for n in (
        "caesar_cipher", "letter_counting", "letter_jumble", "spell_backward", "word_sorting",
        "word_sequence_reversal", "sentence_reordering", "palindrome_generation",
        "group_anagrams", "figlet_font", "emoji_mystery", "isomorphic_strings", "ransom_note",
        "number_format")},
    "needle_haystack": "long_context", "family_relationships": "logic",
    "number_sequence": "math", "rectangle_count": "math",
}
SKIP = {"composite": "a mixer of other generators, not a generator"}
SIZES = {"acre": 1000, "word_ladder": 2000}  # generators that precompute `size` items
MAX_CANDIDATES, MAX_LEVELS = 9, 5
PER_ITEM_S = 0.5


class _Slow(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Slow("too slow")


def family_of(name: str, category: str) -> str:
    return FAMILY_OVERRIDES.get(name) or FAMILY_OF_CATEGORY.get(category, "logic")


def _try_level(name: str, family: str, level: Any) -> tuple[bool, str, str]:
    """(usable, why not, config fingerprint) for one (rg level, mode)."""
    from .reasoning_gym import RGDomain, build_dataset, reference, scorer_for

    dom = RGDomain(name, family, (level, level, level), SIZES.get(name))
    signal.alarm(10)
    try:
        ds = build_dataset(name, level, SIZES.get(name, 100_000))
        cfg = {k: v for k, v in vars(ds.config).items() if k not in ("seed", "size")}
        t0 = time.perf_counter()
        items = [ds[i] for i in (0, 1, 17, 1234)]
        if (time.perf_counter() - t0) / 4 > PER_ITEM_S:
            return False, f"generation slower than {PER_ITEM_S} s per item", ""
        for it in items:
            ref = reference(name, it)
            from ._rg_scoring import hardened_score

            if hardened_score(scorer_for(name, ds), it, ref, ref, dom.id).value != 1.0:
                return False, "reference answer does not score 1.0", ""
        return True, "", repr(sorted(cfg.items()))
    except _Slow:
        return False, "generation slower than 10 s", ""
    except Exception as exc:  # noqa: BLE001 - an invalid level is data for the table
        return False, f"{type(exc).__name__}: {exc}"[:120], ""
    finally:
        signal.alarm(0)


def survey(name: str) -> tuple[str, Any, str]:
    """``(family, levels, "")`` for a usable generator, else ``(family, None, reason)``."""
    from reasoning_gym import factory

    ds_cls, _ = factory.DATASETS[name]
    family = family_of(name, ds_cls.__module__.split(".")[1])
    if name in SKIP:
        return family, None, SKIP[name]
    if not factory.has_curriculum(name):
        return _by_length(name, family, "")
    cur = factory.create_curriculum(name)
    n = max(len(a.levels) for a in cur.attributes.values())
    cands = sorted({round(i * (n - 1) / (MAX_CANDIDATES - 1)) for i in range(MAX_CANDIDATES)})
    usable, last, whys = [], None, []
    for g in cands:
        for mode in ("upper_bound", "inclusive"):
            ok, why, fp = _try_level(name, family, (g, mode))
            if ok and fp != last:
                usable.append((g, mode))
                last = fp
                break
            whys.append(why or "same configuration as the level below")
    if len(usable) < 3:  # fall back to levels by question length under the default config
        return _by_length(name, family, f"only {len(usable)} usable curriculum levels "
                                        f"({whys[-1] if whys else ''}); ")
    k = min(MAX_LEVELS, len(usable))
    return family, tuple(usable[round(i * (len(usable) - 1) / (k - 1))] for i in range(k)), ""


def _by_length(name: str, family: str, prefix: str) -> tuple[str, Any, str]:
    ok, why, _ = _try_level(name, family, None)
    if not ok:
        return family, None, prefix + why
    from .reasoning_gym import RGDomain

    lo, hi = RGDomain(name, family, (), SIZES.get(name))._length_cuts()
    return (family, (), "") if lo < hi else (family, None, prefix + "question lengths too uniform")


def conforms(name: str, family: str, levels: Any) -> str:
    """'' when the domain passes the conformance check, else its first failure."""
    from posttrain.domains import check_domain

    from .reasoning_gym import RGDomain

    signal.alarm(180)  # a generator with pathological items (minutes for one) is unusable
    try:
        rep = check_domain(RGDomain(name, family, levels, SIZES.get(name)), seeds=(0, 1))
    except _Slow:
        return "some items take minutes to generate (conformance check over 180 s)"
    finally:
        signal.alarm(0)
    return "" if rep.ok else rep.failures[0][:160]


def main(argv: list[str]) -> None:
    """``[NAMES...]`` -> the manifest on stdout; ``--shard K/N --json`` -> one shard's result
    as JSON (run shards in parallel); ``--render A.json B.json ...`` -> the merged manifest."""
    import json

    if argv[:1] == ["--render"]:
        table, dropped = {}, {}
        for path in argv[1:]:  # a later file's verdict on a generator replaces an earlier one
            with open(path) as fh:
                part = json.load(fh)
            for k, (f, lv) in part["table"].items():
                table[k] = (f, tuple(map(tuple, lv)) if lv else ())
                dropped.pop(k, None)
            for k, why in part["dropped"].items():
                dropped[k] = why
                table.pop(k, None)
        print(render(table, dropped))
        return
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    from reasoning_gym import factory

    as_json = "--json" in argv
    names = [a for a in argv if not a.startswith("--") and "/" not in a] or sorted(factory.DATASETS)
    if "--shard" in argv:
        k, n = map(int, argv[argv.index("--shard") + 1].split("/"))
        names = names[k::n]
    table, dropped = {}, {}
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # some generators print progress dots
    for name in names:
        t0 = time.perf_counter()
        family, levels, why = survey(name)
        if levels is not None:
            why = conforms(name, family, levels)
        if why:
            dropped[name] = why
        else:
            table[name] = (family, levels)
        print(f"{name}: {'ok' if not why else 'DROP ' + why} ({time.perf_counter() - t0:.1f}s)",
              file=sys.stderr, flush=True)
    sys.stdout = real_stdout
    print(json.dumps({"table": table, "dropped": dropped}) if as_json else render(table, dropped))


def render(table: dict, dropped: dict) -> str:
    from importlib.metadata import version

    lines = [f'"""reasoning-gym {version("reasoning-gym")} generators as posttrain domains: '
             "family and levels (generated by\n``python -m posttrain.domains.adapters._rg_survey``; "
             "do not edit by hand).\n\n``LEVELS[name]`` is a tuple of (curriculum global level, "
             "range mode) per posttrain difficulty,\nor ``()`` for a generator without a "
             "curriculum (three levels by question length).\n\"\"\"\n",
             f"RG_VERSION = {version('reasoning-gym')!r}\n", "LEVELS = {"]
    for name, (family, levels) in sorted(table.items()):
        lines.append(f"    {name!r}: ({family!r}, {levels!r}),")
    lines += ["}\n", f"SIZES = {SIZES!r}\n", "DROPPED = {  # generator -> why it is not exposed"]
    lines += [f"    {k!r}: {v!r}," for k, v in sorted(dropped.items())]
    lines += ["}\n", "DATASETS = {name: (family, levels or None) "
              "for name, (family, levels) in LEVELS.items()}"]
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:])
