"""Generators print nothing on the user's terminal (issue 19, item 6).

reasoning-gym's ``codeio`` runs data-set snippets that print ``ERROR: I/O error ...
log_file_0.txt`` and ``bf``'s compiler prints a dot per pass; both used to reach the terminal
during ``posttrain domains check``. The check runs in a real subprocess and its file
descriptors 1 and 2 are read whole, so output from any layer would show.
"""

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from posttrain.domains.adapters._quiet import quiet_output

ROOT = Path(__file__).resolve().parents[2]


def test_check_of_printing_generators_prints_nothing_stray():
    pytest.importorskip("reasoning_gym")
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "posttrain", "domains", "check", "code.rg_codeio-v1",
         "code.rg_bf-v1", "--seeds", "3", "-w", "1", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    both = proc.stdout + proc.stderr
    assert "I/O error" not in both and "log_file_" not in both, both[-2000:]
    assert "...." not in both, both[-2000:]
    assert proc.stderr.strip() == "", proc.stderr[-2000:]


def test_quiet_output_logs_prints_and_restores_streams(caplog):
    log = logging.getLogger("test.quiet")
    before = (sys.stdout, sys.stderr)
    with caplog.at_level(logging.DEBUG, logger="test.quiet"):
        with quiet_output(log):
            print("ERROR: I/O error log_file_0.txt")
            print("partial", end="")
            print("dots", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    text = [r.getMessage() for r in caplog.records]
    assert "stdout: ERROR: I/O error log_file_0.txt" in text
    assert "stdout: partial" in text and "stderr: dots" in text


def test_quiet_output_interleaved_threads_restore_the_original_streams():
    # A stack of saved streams would leave thread A's buffer installed when A exits first.
    log = logging.getLogger("test.quiet.threads")
    before = (sys.stdout, sys.stderr)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def first():
        with quiet_output(log):
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second():
        a_in.wait(5)
        with quiet_output(log):
            b_in.set()
            a_out.wait(5)
            seen.append(sys.stdout is not before[0])  # still quiet while this block runs

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [True]
    assert (sys.stdout, sys.stderr) == before
