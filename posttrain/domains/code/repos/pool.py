"""The validated task pool of the repository tier: building it, storing it, drawing from it.

What it is: :func:`build_pool` plans candidates per package (seeded, so the same plan every
time), validates each in the sandbox (:mod:`.validate`) and writes ``pool.json`` — every kept
task with its hunks, hidden tests and the failure text of its first hidden test, each
package's baseline (the regression gate), and the validation figures (tried, kept, reasons,
seconds per run). :func:`load_pool` reads it; :func:`draw` picks a task by ``(rng, level)``
from the validated set only.

Levels: 1 — one mutation (any operator but ``remove_function``) whose hidden set spans at
most ``POINTED`` test functions (parametrised cases counted once; the prompt points at one); 2 — two mutations in two different functions,
validated together (a multi-function bug: fixing one leaves tests failing); 3 — a feature
request: a documented function's body removed (docstring kept), its tests hidden (the new
tests the implementation must pass).

Guarantees: the committed pool is the one the domains draw from (no validation at task time);
``draw`` is deterministic given the rng; a pool built by another manifest (package versions
or hashes differ) is refused.

Does not: fetch anything while drawing (the image is built when an episode first needs it).
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from posttrain.core.errors import EnvError

from .fetch import Package, load_manifest
from .image import read_source
from .mutate import Hunk, Site, mutate, sites

POOL = Path(__file__).with_name("pool.json")
POINTED = 3
LEVELS = (1, 2, 3)
_cache: dict[str, Any] = {}


def _candidates(pkg: Package, rng: random.Random) -> tuple[list[tuple[Site, str]], list[tuple[Site, str]]]:
    """Every site of the package's sources with its file's text, shuffled by ``rng``; the
    hunk is computed only for a site that is tried (a libcst pass per site is the cost)."""
    bugs, features = [], []
    for path in pkg.sources:
        src = read_source(pkg, path)
        for s in sites(path, src):
            (features if s.op == "remove_function" else bugs).append((s, src))
    rng.shuffle(bugs)
    rng.shuffle(features)
    return bugs, features


def _hunks(cands: list[tuple[Site, str]], limit: int) -> Iterator[tuple[Site, Hunk]]:
    tried = 0
    for s, src in cands:
        if tried >= limit:
            return
        h = mutate(src, s)
        if h is not None:
            tried += 1
            yield s, h


def _apart(a: tuple, b: tuple) -> bool:
    """Two mutations in different functions whose hunks do not touch the same lines."""
    (sa, ha), (sb, hb) = a[:2], b[:2]
    if sa.path != sb.path:
        return True
    disjoint = ha.start + len(ha.old) <= hb.start or hb.start + len(hb.old) <= ha.start
    return disjoint and sa.function.split(".")[0] != sb.function.split(".")[0]


def _entry(pkg: Package, level: int, picked: list[tuple[Site, Hunk]], verdict: Any) -> dict:
    return {"package": pkg.name, "level": level,
            "sites": [[s.op, s.path, s.index, s.function] for s, _ in picked],
            "hunks": [h.to_json() for _, h in picked], "hidden": list(verdict.failing),
            "failure": next(iter(verdict.messages.values()), "")}


def _validate_package(pkg: Package, want: dict[int, int], max_tries: dict[int, int],
                      log: Callable[[str], None]) -> tuple[list[dict], dict]:
    from .validate import Validator

    rng = random.Random(f"repos|{pkg.key}")
    bugs, features = _candidates(pkg, rng)
    tasks: list[dict] = []
    stats = {"sites": len(bugs) + len(features), "tried": 0, "kept": 0, "reasons": {}}
    singles: list[tuple[Site, Hunk, Any]] = []

    def run(level: int, picked: list[tuple[Site, Hunk]]) -> Any:
        v = val.check([h for _, h in picked])
        stats["tried"] += 1
        stats["reasons"][v.reason if not v.kept else "kept"] = \
            stats["reasons"].get(v.reason if not v.kept else "kept", 0) + 1
        stats["kept"] += int(v.kept)
        return v

    with Validator(pkg) as val:
        for s, h in _hunks(bugs, max_tries[1]):
            if sum(t["level"] == 1 for t in tasks) >= want[1] and len({x[0].function for x in singles}) >= 2:
                break
            v = run(1, [(s, h)])
            if v.kept:
                singles.append((s, h, v))
                if len({t.split("[")[0] for t in v.failing}) <= POINTED:
                    tasks.append(_entry(pkg, 1, [(s, h)], v))
        pairs = [(a, b) for i, a in enumerate(singles) for b in singles[i + 1:] if _apart(a, b)]
        rng.shuffle(pairs)
        for a, b in pairs[:max_tries[2]]:
            if sum(t["level"] == 2 for t in tasks) >= want[2]:
                break
            v = run(2, [a[:2], b[:2]])
            if v.kept:
                tasks.append(_entry(pkg, 2, [a[:2], b[:2]], v))
        for s, h in _hunks(features, max_tries[3]):
            if sum(t["level"] == 3 for t in tasks) >= want[3]:
                break
            v = run(3, [(s, h)])
            if v.kept:
                tasks.append(_entry(pkg, 3, [(s, h)], v))
        stats["baseline"] = list(val.baseline)
        stats["seconds_per_run"] = round(sum(val.runs_s) / len(val.runs_s), 3)
        stats["runs"] = len(val.runs_s)
    log(f"{pkg.key}: tried {stats['tried']}, kept {stats['kept']}, tasks "
        f"{[sum(t['level'] == lv for t in tasks) for lv in LEVELS]}, {stats['seconds_per_run']} s/run")
    return tasks, stats


def build_pool(packages: Iterable[Package] | None = None, *, want: dict[int, int] | None = None,
               max_tries: dict[int, int] | None = None, out: Path | None = None,
               log: Callable[[str], None] = lambda s: None) -> dict:
    """Validate candidates of every package and write the pool (``out``, default ``pool.json``)."""
    want = want or {1: 32, 2: 14, 3: 10}
    t0 = time.perf_counter()
    pool: dict[str, Any] = {"format": 1, "packages": {}, "tasks": []}
    for pkg in packages if packages is not None else load_manifest():
        # the manifest may raise a package's budget (few of its mutations are pointed bugs)
        tries = max_tries or {1: 80, 2: 24, 3: 20, **dict(pkg.tries)}
        tasks, stats = _validate_package(pkg, want, tries, log)
        pool["packages"][pkg.name] = {"version": pkg.version, "sha256": pkg.sha256, **stats}
        for i, t in enumerate(tasks):
            pool["tasks"].append({"id": f"{pkg.key}/L{t['level']}/{i:03d}", **t})
    pool["wall_s"] = round(time.perf_counter() - t0, 1)
    target = out or POOL
    target.write_text(json.dumps(pool, indent=1, sort_keys=True) + "\n")
    _cache.pop(str(target), None)
    return pool


def load_pool(path: Path | None = None) -> dict:
    """The pool at ``path``, else ``$POSTTRAIN_REPO_POOL``, else the committed ``pool.json``."""
    key = str(path or os.environ.get("POSTTRAIN_REPO_POOL") or POOL)
    if key not in _cache:
        p = Path(key)
        if not p.exists():
            raise EnvError(f"no repository pool at {p}: run `posttrain domains build-pool repos`")
        pool = json.loads(p.read_text())
        pins = {pkg.name: pkg for pkg in load_manifest()}
        for name, info in pool["packages"].items():
            pin = pins.get(name)
            if pin is None or pin.version != info["version"] or pin.sha256 != info["sha256"]:
                raise EnvError(f"pool {p} was built for {name} {info['version']}, not the manifest's pin")
        _cache[key] = pool
    return _cache[key]


def draw(rng: random.Random, level: int, path: Path | None = None) -> dict:
    """A validated task of ``level``, chosen by ``rng`` (deterministic)."""
    tasks = [t for t in load_pool(path)["tasks"] if t["level"] == level]
    if not tasks:
        raise EnvError(f"the repository pool has no task of level {level}")
    return tasks[rng.randrange(len(tasks))]
