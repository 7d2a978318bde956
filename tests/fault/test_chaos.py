"""The chaos loop (bench/chaos.py) in short, and the leak it found: producers outliving a
SIGKILLed trainer.

Real pieces: the tiny model, spawned producer processes, the real CLI in subprocesses,
bubblewrap sandboxes, real SQLite, real SIGKILLs at seeded random moments.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[1] / "bench"
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def _gone(pid: int) -> bool:
    """Exited (or a zombie: exited, waiting for a reaper that is not ours)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return data[data.rindex(")") + 2] == "Z"


def test_producers_exit_when_their_trainer_is_sigkilled():
    proc = subprocess.Popen([sys.executable, str(HERE / "orphan_run.py")], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()[-3000:]
        workers = json.loads(line)
        assert len(workers) == 2 and not any(_gone(p) for p in workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.time() + 60
        while time.time() < deadline and not all(_gone(p) for p in workers):
            time.sleep(0.1)
        alive = [p for p in workers if not _gone(p)]
        assert not alive, f"producers {alive} outlived their SIGKILLed parent"
    finally:
        proc.kill()
        for p in json.loads(line) if "line" in dir() and line else []:
            if not _gone(p):
                os.kill(p, signal.SIGKILL)


@pytest.mark.slow
def test_chaos_three_kills_exact_books(tmp_path):
    """Three kills (a seed that hits a producer, a sandbox's process and the trainer) on a
    six-step run: nothing lost or doubled, nothing left running, the uninterrupted weights."""
    cmd = [sys.executable, str(BENCH / "chaos.py"), "--kills", "3", "--seed", "1", "--out", str(tmp_path),
           "--set", "rl.steps=6", "--min-gap-s", "2", "--max-gap-s", "6", "--timeout-min", "20"]
    proc = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=1800)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["kills"] == 3 and len(res["kill_log"]) == 3, proc.stderr[-3000:]
    assert res["finished"] and res["launches"] == 1 + res["kills_by_target"].get("trainer", 0)
    assert (res["lost"], res["duplicated"], res["steps_missing"], res["steps_duplicated"]) == (0, 0, [], [])
    assert res["jobs_not_done"] == [] and res["groups_wrong"] == [] and res["unexplained_outcomes"] == 0
    assert res["orphans"] == 0, res["orphan_list"]
    assert res["weights_equal"] is True
    assert res["ok"] is True and proc.returncode == 0
