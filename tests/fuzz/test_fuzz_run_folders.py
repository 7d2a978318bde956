"""Damaged run folders: a resume goes on from the last good checkpoint or fails with one clear,
typed error — never a silent restart from step 0, a traceback, or a step trained twice.

One real tiny run (the real pipeline: SFT, RL, checkpoints at steps 2 and 4) is copied and
harmed in each test (:mod:`fuzz_runs`): truncated, bit-flipped or deleted checkpoint files,
missing ``meta.json``, half-written and damaged ``groups.jsonl``/``metrics.jsonl`` lines, a
truncated ``summary.json``, a garbage or locked SQLite work store. The slow tier adds random
truncations and bit flips of every file of the latest checkpoint (``bench/fuzz.py`` too).

Before the fixes these found: a truncated latest checkpoint crashed the resume
(``SafetensorError``/``EOFError``: no run could go on, though step 2 was intact); every
checkpoint broken made the run restart from step 0 silently; a half-written last line of
``groups.jsonl`` or ``metrics.jsonl`` (a kill mid-append) made every resume crash with a
JSONDecodeError; a truncated ``summary.json`` the same; a damaged work store was a bare
``sqlite3.DatabaseError``.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuzz_runs import DAMAGES, STORE_DAMAGES, _locked, copy_run, make_run, random_damage, resume, run_config

POSTTRAIN = str(Path(sys.executable).parent / "posttrain")
STORE_CFG = dict(rl={"max_policy_lag": 1}, async_rl={"work_store": "sqlite"})


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("fuzz_run") / "run")


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_damaged_folder_resumes_or_fails_clearly(finished_run, tmp_path, name):
    damage, expected = DAMAGES[name]
    out = copy_run(finished_run, tmp_path / "run")
    damage(out, random.Random(name))
    got = resume(out, run_config(**STORE_CFG) if name in STORE_DAMAGES else None)
    assert got.matches(expected), (name, expected, got)
    if got.kind == "error":
        assert str(out) in got.detail, got.detail  # the message names the damaged file
        if name in STORE_DAMAGES:
            assert "work store" in got.detail and "work.sqlite" in got.detail


def test_cli_says_which_checkpoint_is_broken(finished_run, tmp_path):
    out = copy_run(finished_run, tmp_path / "run")
    DAMAGES["every_checkpoint_truncated"][0](out, random.Random(0))
    cfg = tmp_path / "config.yaml"
    cfg.write_text((out / "config.yaml").read_text())
    res = subprocess.run([POSTTRAIN, "train", str(cfg), "--out", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 1, res.stderr[-2000:]
    assert res.stderr.startswith("error: no complete checkpoint to resume from"), res.stderr[-2000:]
    assert "Traceback" not in res.stderr and "step_00000004" in res.stderr


@pytest.mark.slow
def test_locked_work_store_is_a_clear_error(finished_run, tmp_path):
    out = copy_run(finished_run, tmp_path / "run")
    conn = _locked(out)
    try:
        t0 = time.perf_counter()
        got = resume(out, run_config(**STORE_CFG))
    finally:
        conn.rollback() if conn.in_transaction else None
        conn.close()
    assert got.kind == "error" and "locked" in got.detail, got
    assert time.perf_counter() - t0 < 120


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_random_damage_to_the_latest_checkpoint(finished_run, tmp_path, seed):
    """Truncate or flip bytes of one random file of the latest checkpoint: a resume from
    step 2 or 4 or a CheckpointError; never an escape."""
    out = copy_run(finished_run, tmp_path / "run")
    victim = random_damage(out, random.Random(seed))
    got = resume(out)
    assert not got.escaped, (victim.name, got)
    assert got.kind == "error" or got.step in (2, 4), got

