"""Fuzzing at every boundary, exhaustively: config, verifiers, tool calls, run folders.

The long version of ``tests/fuzz`` (same generators: ``tests/fuzz/fuzz_*.py``):

- ``config``: every field of ``RunConfig`` from its pydantic schema (wrong types, values past
  each bound, non-finite floats, booleans for numbers, an unknown key in every section)
  through the loader, and through the real CLI (``posttrain train CONFIG`` subprocesses,
  every ``--cli-every``-th case); plus ``--combinations`` schema-valid configs at their bounds
  for the cross-field rules. Escape: accepted, exit status other than 2, a traceback, or a
  message line that does not name the field;
- ``verifiers``: every registered domain (or ``--domains`` prefixes) against the named hostile
  corpus (with the 10 MB answers unless ``--no-huge``) and ``--examples`` hypothesis draws per
  domain, through the episode engine. Escape: a crash of our code on the text, a call over
  its time bound, a hang, a value outside [0, 1];
- ``tools``: ``parse_turn`` on ``--examples`` x 10 hypothesis turns, the built-in tools with
  hostile arguments in a real sandbox, every multi-turn domain's tools with hostile calls
  through the engine;
- ``runs``: a real tiny run, then every damage of ``fuzz_runs.DAMAGES`` and ``--random-damages``
  random truncations/bit flips of the latest checkpoint, each resumed. Escape: a silent
  restart from step 0, an untyped exception, a step trained twice, or an outcome other than
  the expected one (resume from the last good checkpoint, or a clear error).

Usage: ``python bench/fuzz.py [--boundary config,verifiers,tools,runs] [--domains math.,sql.]
[--examples 20] [--no-huge] [--cli-every 5] [--combinations 500] [--random-damages 24]``.
Exit status 1 when anything escaped. The last line is one JSON object: ``cases`` and
``escapes`` in total and per boundary (``boundaries``), and ``wall_s``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
os.environ.setdefault("POSTTRAIN_SANDBOX_QUIET", "1")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


class Tally:
    """Cases and escapes of one boundary; the first escapes are kept to print."""

    def __init__(self, name: str):
        self.name, self.cases, self.escapes, self.failures, self.first = name, 0, 0, 0, []

    def add(self, escaped: bool, what: str = "", *, failure: bool = False) -> None:
        self.cases += 1
        self.failures += int(failure)
        if escaped:
            self.escapes += 1
            if len(self.first) < 20:
                self.first.append(what)
                print(f"ESCAPE [{self.name}] {what}", flush=True)

    def summary(self) -> dict:
        return {"cases": self.cases, "escapes": self.escapes, "recorded_failures": self.failures}


def _hypothesis(strategy, n: int, fn) -> None:
    """Run ``fn`` on ``n`` draws of ``strategy`` (no shrinking: ``fn`` records, never raises)."""
    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value):
        fn(value)

    run()


# ------------------------------------------------------------------------------- config
def fuzz_config(args, tally: Tally) -> None:
    import yaml
    from fuzz_config import combination_configs, leaf_fields, mutations

    from posttrain.core.config import RunConfig, validate_config
    from posttrain.core.errors import ConfigError
    from posttrain.trainer.validate import check_run_config

    known = {lf.dotted for lf in leaf_fields()}
    cases = mutations()
    for m in cases:
        try:
            check_run_config(validate_config(m.data))
            tally.add(True, f"{m.name}: accepted")
        except ConfigError as exc:
            lines = [ln.strip() for ln in str(exc).split("\n")[1:]]
            tally.add(not lines or any(not ln.startswith(m.path) for ln in lines), f"{m.name}: {lines}")
    for data in combination_configs(args.combinations, seed=args.seed):
        try:
            check_run_config(RunConfig.model_validate(data))
            tally.add(False)
        except ConfigError as exc:
            lines = [ln.strip() for ln in str(exc).split("\n")[1:]]
            bad = [ln for ln in lines if ln.split(":", 1)[0] not in known or "got " not in ln]
            tally.add(bool(bad) or not lines, f"combination: {bad or lines}")
    posttrain = str(Path(sys.executable).parent / "posttrain")
    with tempfile.TemporaryDirectory() as tmp:
        for m in cases[::max(1, args.cli_every)]:
            path = Path(tmp) / "config.yaml"
            path.write_text(yaml.safe_dump(m.data))
            out = Path(tmp) / "run"
            res = subprocess.run([posttrain, "train", str(path), "--out", str(out)], cwd=ROOT,
                                 capture_output=True, text=True, timeout=300)
            lines = [ln.strip() for ln in res.stderr.splitlines()[1:] if ln.strip()]
            ok = (res.returncode == 2 and res.stderr.startswith("error: invalid config:")
                  and "Traceback" not in res.stderr and lines and not out.exists()
                  and all(ln.startswith(m.path) for ln in lines))
            tally.add(not ok, f"cli {m.name}: rc {res.returncode} {res.stderr[-300:]!r}")


# ---------------------------------------------------------------------------- verifiers
def _domains(prefixes: list[str]) -> list[str]:
    from posttrain.domains.base import DOMAINS, load_builtin_domains

    load_builtin_domains()
    ids = sorted(DOMAINS.ids())
    return [d for d in ids if not prefixes or d.startswith(tuple(prefixes))]


def fuzz_verifiers(args, tally: Tally) -> None:
    from fuzz_inputs import actions_for, bound_for, hostile_text, hostile_texts, play

    from posttrain.domains.base import DOMAINS, sample_task

    for did in _domains(args.domains):
        dom = DOMAINS.get(did)
        sandboxed = dom.env_kind == "sandbox" or bool(getattr(dom, "needs_sandbox", False))
        task = sample_task(dom, args.seed, tuple(dom.difficulties)[0])
        try:
            ref = str(dom.solve(task))
        except Exception:  # noqa: BLE001 - only shapes the corpus
            ref = "42"
        t0 = time.perf_counter()

        def one(name: str, text: str) -> None:
            o = play(dom, task, actions_for(dom, text), bound_s=bound_for(text, sandboxed))
            tally.add(o.escaped, f"{did} {name}: {o.kind} ({o.wall_s:.2f} s) {o.detail[:300]}",
                      failure=o.kind == "failure")

        for name, text in hostile_texts(task, ref, huge=not args.no_huge).items():
            one(name, text)
        if args.examples:
            _hypothesis(hostile_text(), args.examples, lambda text: one("hypothesis", text))
        print(f"# {did}: {time.perf_counter() - t0:.1f} s", flush=True)


# -------------------------------------------------------------------------------- tools
def fuzz_tools(args, tally: Tally) -> None:
    from fuzz_inputs import hostile_text, play, tool_call_texts
    from test_fuzz_tools import MULTI_TURN, SPECS, TOOLS, _check_parsed, _hostile_builtin_calls, _offered

    from posttrain.domains.base import DOMAINS, sample_task
    from posttrain.sandbox import open_sandbox

    def parse_one(text: str) -> None:
        t0 = time.perf_counter()
        try:
            _check_parsed(text, SPECS)
            tally.add(time.perf_counter() - t0 > 5.0, f"parse_turn slow on {text[:80]!r}")
        except Exception as exc:  # noqa: BLE001 - the finding
            tally.add(True, f"parse_turn raised {type(exc).__name__}: {exc} on {text[:80]!r}")

    texts = st.one_of(hostile_text(), st.lists(hostile_text(), max_size=12).map("".join))
    _hypothesis(texts, max(10, args.examples * 10), parse_one)
    with open_sandbox() as sb:
        for label, name, arguments in _hostile_builtin_calls():
            t0 = time.perf_counter()
            try:
                res = TOOLS.call(sb, name, arguments)
                tally.add(not isinstance(res.content, str) or time.perf_counter() - t0 > 10.0,
                          f"tool {label}: {time.perf_counter() - t0:.1f} s")
            except Exception as exc:  # noqa: BLE001 - the finding
                tally.add(True, f"tool {label} raised {type(exc).__name__}: {exc}")
    for did in [d for d in MULTI_TURN if not args.domains or d.startswith(tuple(args.domains))]:
        dom = DOMAINS.get(did)
        task = sample_task(dom, args.seed, tuple(dom.difficulties)[0])
        for label, text in tool_call_texts(_offered(did)).items():
            o = play(dom, task, [text, text, "<answer>0</answer>"],
                     bound_s=30.0 if dom.env_kind == "sandbox" else 5.0)
            tally.add(o.escaped, f"{did} {label}: {o.kind} {o.detail[:300]}", failure=o.kind == "failure")
        print(f"# tools of {did}", flush=True)


# --------------------------------------------------------------------------------- runs
def fuzz_runs(args, tally: Tally) -> None:
    from fuzz_runs import DAMAGES, STORE_DAMAGES, copy_run, make_run, random_damage, resume, run_config

    store_cfg = run_config(rl={"max_policy_lag": 1}, async_rl={"work_store": "sqlite"})
    with tempfile.TemporaryDirectory() as tmp:
        base = make_run(Path(tmp) / "base")
        for i, (name, (damage, expected)) in enumerate(sorted(DAMAGES.items())):
            out = copy_run(base, Path(tmp) / f"d{i}")
            damage(out, random.Random(name))
            got = resume(out, store_cfg if name in STORE_DAMAGES else None)
            tally.add(got.escaped or not got.matches(expected), f"{name}: expected {expected}, got {got}")
        rng = random.Random(args.seed)
        for i in range(args.random_damages):
            out = copy_run(base, Path(tmp) / f"r{i}")
            victim = random_damage(out, rng)
            got = resume(out)
            tally.add(got.escaped or (got.kind == "resumed" and got.step not in (2, 4)),
                      f"random damage of {victim.relative_to(out)}: {got}")


BOUNDARIES = {"config": fuzz_config, "verifiers": fuzz_verifiers, "tools": fuzz_tools, "runs": fuzz_runs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boundary", default="config,verifiers,tools,runs")
    ap.add_argument("--domains", default="", help="comma-separated id prefixes (default: all)")
    ap.add_argument("--examples", type=int, default=20, help="hypothesis draws per domain")
    ap.add_argument("--no-huge", action="store_true", help="skip the 10 MB answers")
    ap.add_argument("--cli-every", type=int, default=5, help="every N-th config case as a subprocess")
    ap.add_argument("--combinations", type=int, default=500)
    ap.add_argument("--random-damages", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    args.domains = [d for d in args.domains.split(",") if d]
    t0 = time.perf_counter()
    tallies = {}
    for name in [b for b in args.boundary.split(",") if b]:
        tally = tallies[name] = Tally(name)
        t1 = time.perf_counter()
        BOUNDARIES[name](args, tally)
        print(f"## {name}: {tally.cases} cases, {tally.escapes} escapes, "
              f"{time.perf_counter() - t1:.0f} s", flush=True)
    out = {"cases": sum(t.cases for t in tallies.values()),
           "escapes": sum(t.escapes for t in tallies.values()),
           "boundaries": {n: t.summary() for n, t in tallies.items()},
           "wall_s": round(time.perf_counter() - t0, 1)}
    print(json.dumps(out))
    return 1 if out["escapes"] else 0


if __name__ == "__main__":
    sys.exit(main())
