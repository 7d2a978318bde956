"""Chaos loop: a run SIGKILLed at random moments K times, resumed each time with the same command.

What runs. ``python -m posttrain train configs/chaos.yaml --out RUN`` (the real CLI: tiny
model, asynchronous RL with process producers, deterministic schedule, SQLite work store,
bubblewrap sandboxes; single-turn, multi-turn and sandboxed domains). At moments drawn from a
seeded RNG (``--min-gap-s``..``--max-gap-s`` after the previous kill or launch) one process
of the run's tree gets SIGKILL, the target kind drawn among those alive at that moment
(kinds killed least so far are favoured, so every kind is hit):

- ``trainer``: the ``posttrain train`` process itself — the loop then starts the same
  command again, which resumes from the run folder;
- ``producer``: a rollout producer process (the run replaces it and re-runs its job);
- ``supervisor``: a sandbox's supervisor (``/.ptsup/supervisor.py`` inside bubblewrap);
- ``verifier``: a process inside a sandbox, doing an episode's tool calls or its verifier's
  checks (the HumanEval judge, the file-state checks): the sandbox's pre-started interpreter
  or the command it runs — there is no separate verifier process in this design: a verifier
  runs on the producer's env workers and its untrusted part in a sandbox;
- ``ray_actor``: a Ray actor process (``ray::...``), with ``--set async_rl.executor=ray``.

After the K-th kill the run is let finish (resumed once more if that kill was the trainer's).
Then the books (``_reliability_accounting``): every scheduled task has exactly one outcome
(``lost``, ``duplicated``), every job ``done`` and acknowledged, every RL step logged once and
its groups kept once; ``orphans``: processes ever seen in any of the run's trees (scanned
every 0.1 s) that are still alive, and sandbox leftovers on the host stamped by one of those
processes (cache dirs in ``/dev/shm``, entries of the runs' private TMPDIR, cgroups); and
``weights_equal``: the final ``model/`` is bit-identical to an uninterrupted run of the same
command in another folder (``--no-reference`` skips it).

Last line: one JSON object with ``ok``, ``kills``, ``kills_by_target``, ``launches``,
``lost``, ``duplicated``, ``steps_missing``, ``steps_duplicated``, ``orphans`` (a count) and
``orphan_list``, ``weights_equal`` and the kill log.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _reliability_accounting as books  # noqa: E402
import _reliability_probe as probe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("trainer", "producer", "supervisor", "verifier", "ray_actor")
PATIENCE_S = 60.0  # a drawn kind absent this long (the run is between phases): any target
# caches libraries keep in TMPDIR on purpose (torch's compile cache, Ray's session logs): not a
# sandbox's leftovers
LIBRARY_CACHES = ("torchinductor_", "ray")


def classify(pid: int, ppid: int, comm: str, root: int, tree: dict) -> str | None:
    """The kind of a process of the run's tree (None: not a target, e.g. bubblewrap itself,
    multiprocessing's resource tracker)."""
    if pid == root:
        return "trainer"
    cmd = " ".join(probe.cmdline(pid))
    if cmd.startswith("ray::"):  # an actor; ray::IDLE is a pooled worker holding nothing
        return None if cmd.startswith("ray::IDLE") else "ray_actor"
    if "/.ptsup/supervisor.py" in cmd:
        return "supervisor"
    if "multiprocessing.spawn" in cmd and ppid == root:
        return "producer"
    up, seen = ppid, 0
    while up in tree and seen < 32:  # below a supervisor: the sandbox's own processes
        if "/.ptsup/supervisor.py" in " ".join(probe.cmdline(up)):
            return "verifier"
        up, seen = tree[up][2], seen + 1
    return None


class Watch:
    """Scans the current run's tree every 0.1 s; remembers every process it ever held."""

    def __init__(self):
        self.root: int | None = None
        self.seen: dict[probe.Proc, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chaos-watch", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            if self.root is not None:
                for pid, (start, comm, _ppid) in probe.tree(self.root).items():
                    self.seen.setdefault((pid, start), comm)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _targets(root: int) -> dict[str, list[int]]:
    tree = probe.tree(root)
    out: dict[str, list[int]] = {}
    for pid, (_start, comm, ppid) in tree.items():
        kind = classify(pid, ppid, comm, root, tree)
        if kind is not None:
            out.setdefault(kind, []).append(pid)
    return out


def _launch(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    with log.open("a") as fh:
        return subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _leftovers(seen: set[int], tmp: Path) -> list[str]:
    """Host state a sandbox of one of ``seen`` left: stamped dirs in ``/dev/shm``, entries of
    the runs' private TMPDIR, stamped cgroups (``posttrain-sbx-<pid>-...``)."""
    found = probe.stamped_dirs(["/dev/shm"], seen) + [str(p) for p in tmp.iterdir()
                                                       if not p.name.startswith(LIBRARY_CACHES)]
    for dirpath, dirs, _files in os.walk("/sys/fs/cgroup"):
        if any(d.startswith("posttrain") for d in dirs):
            found += probe.stamped_dirs([dirpath], seen)
        dirs[:] = [d for d in dirs if dirpath.count(os.sep) < 8]
    return sorted(set(found))


def chaos(cmd: list[str], env: dict, kills: int, kinds: tuple[str, ...], rng: random.Random,
          gaps: tuple[float, float], log: Path, console, timeout_s: float) -> tuple[list[dict], int, Watch]:
    """Run ``cmd`` to completion through ``kills`` SIGKILLs; the kill log, launches, the watch.

    Each kill: a moment ``gaps`` after the previous kill or launch and a kind (favouring the
    kinds killed least); the kill lands on a random process of that kind at the first poll
    (every 50 ms) from that moment on at which one is alive — a producer or a sandbox exists
    only while the run is past its start-up — or on any target after ``PATIENCE_S``."""
    watch, done, launches, t0 = Watch(), [], 0, time.time()
    by_kind: Counter[str] = Counter()

    def draw() -> tuple[float, str]:
        least = min(by_kind[k] for k in kinds)
        return time.time() + rng.uniform(*gaps), rng.choice([k for k in kinds if by_kind[k] == least])

    while time.time() < t0 + timeout_s:
        proc, launches = _launch(cmd, env, log), launches + 1
        watch.root = proc.pid
        at, kind = draw()
        while proc.poll() is None and time.time() < t0 + timeout_s:
            time.sleep(0.05)
            if len(done) >= kills or time.time() < at:
                continue
            alive = _targets(proc.pid)
            pick = kind if kind in alive else (rng.choice(sorted(alive)) if time.time() > at + PATIENCE_S else None)
            if pick is None:
                continue
            pid = rng.choice(sorted(alive[pick]))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # it ended between the scan and the kill: draw again
                continue
            by_kind[pick] += 1
            done.append({"n": len(done) + 1, "kind": pick, "pid": pid, "launch": launches,
                         "t_s": round(time.time() - t0, 1)})
            console.print(f"kill {len(done):2d}/{kills}: {pick:10s} pid {pid}  (launch {launches}, "
                          f"t={done[-1]['t_s']:.0f}s)", highlight=False)
            if pick == "trainer":
                proc.wait()
            at, kind = draw()
        if proc.poll() is None:  # out of time
            proc.kill()
            proc.wait()
            break
        if proc.returncode == 0:
            break
        if not (done and done[-1]["kind"] == "trainer" and done[-1]["launch"] == launches):
            console.print(f"[yellow]launch {launches} exited {proc.returncode} on its own: resuming[/]")
    watch.root = None
    return done, launches, watch


def _settle(seen: dict, wait_s: float = 45.0) -> list[str]:
    """Processes of any run tree still alive after ``wait_s`` (those killed take a moment)."""
    end = time.time() + wait_s
    while True:
        alive = [f"{pid} ({comm})" for (pid, start), comm in seen.items() if probe.alive((pid, start))]
        if not alive or time.time() >= end:
            return alive
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill moments and targets")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "chaos.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a new temp dir)")
    ap.add_argument("--min-gap-s", type=float, default=3.0)
    ap.add_argument("--max-gap-s", type=float, default=15.0)
    ap.add_argument("--timeout-min", type=float, default=90.0)
    ap.add_argument("--no-reference", action="store_true", help="skip the uninterrupted run (weights_equal: null)")
    args = ap.parse_args(argv)
    console = Console(stderr=True)
    out = args.out or Path(tempfile.mkdtemp(prefix="posttrain-chaos-"))
    tmp = out / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp)}

    def command(run: Path) -> list[str]:
        sets = [a for kv in args.overrides for a in ("--set", kv)]
        return [sys.executable, "-m", "posttrain", "train", str(args.config), "--out", str(run), *sets]

    from posttrain.core.config import load_config

    cfg = load_config(args.config, overrides=args.overrides)
    t0 = time.time()
    ref_ok = None
    if not args.no_reference:
        console.print("uninterrupted reference run ...", highlight=False)
        ref = subprocess.run(command(out / "reference"), env=env, capture_output=True, text=True,
                             timeout=args.timeout_min * 60)
        ref_ok = ref.returncode == 0
        if not ref_ok:
            console.print(ref.stdout[-3000:] + ref.stderr[-3000:])
    t_ref = time.time() - t0
    rng = random.Random(args.seed)
    run = out / "run"
    kinds = ("trainer", "ray_actor" if cfg.async_rl.executor == "ray" else "producer", "supervisor", "verifier")
    done, launches, watch = chaos(command(run), env, args.kills, kinds, rng, (args.min_gap_s, args.max_gap_s),
                                  out / "chaos.log", console, args.timeout_min * 60)
    watch.stop()
    finished = (run / "summary.json").exists() and "rl_steps" in json.loads((run / "summary.json").read_text())
    orphans = _settle(watch.seen)
    orphans += _leftovers({pid for pid, _ in watch.seen}, tmp)
    tasks = books.task_books(run)
    steps = books.step_books(run, cfg.sft.steps, cfg.rl.steps, cfg.rl.prompts_per_step)
    equal = (books.weights_equal(run / "model", out / "reference" / "model")
             if ref_ok and finished else (None if args.no_reference else False))
    result = {"kills": len(done), "requested_kills": args.kills,
              "kills_by_target": dict(Counter(k["kind"] for k in done)), "launches": launches,
              "finished": finished, "lost": tasks["lost"], "duplicated": tasks["duplicated"],
              "jobs_not_done": tasks["not_done"], "unexplained_outcomes": tasks["unexplained"],
              "outcomes": tasks["outcomes"], **steps,
              "orphans": len(orphans), "orphan_list": orphans[:50], "weights_equal": equal,
              "reference_s": round(t_ref, 1), "chaos_s": round(time.time() - t0 - t_ref, 1),
              "load_avg": [round(x, 2) for x in os.getloadavg()], "kill_log": done}
    ok = bool(finished and len(done) == args.kills and not tasks["lost"] and not tasks["duplicated"]
              and not tasks["not_done"] and not tasks["unexplained"] and not steps["steps_missing"]
              and not steps["steps_duplicated"] and not steps["groups_wrong"] and not orphans
              and equal is not False)
    print(json.dumps({"ok": ok, **result}))
    return 0 if ok else 1

if __name__ == "__main__":
    sys.exit(main())
