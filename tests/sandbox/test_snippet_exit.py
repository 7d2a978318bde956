"""How a snippet ends: statuses, output and processes as before, the teardown off the path.

A snippet that ends normally leaves the server a note and is reaped after its report
(``exit_note.py``, ``pyserver.py``); every other ending takes the reaping path. These tests
check both give the same results, that nothing of a snippet is left when the next one
runs, and that the output is complete. Functional only (no timings). Real bubblewrap.
"""

import time

import pytest

from posttrain.sandbox import Limits, Timeouts
from posttrain.sandbox.isolated import IsolatedSandbox

SMALL = Limits(memory_bytes=128 << 20, pids=64, store_bytes=64 << 20)
QUICK = Timeouts(wall_s=10, cpu_s=10, kill_grace_s=0.3)
# The next snippet lists its pid namespace: only the server (pid 1) and itself may be there.
ALONE = ("import os\n"
         "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()) == [1, os.getpid()])")


@pytest.fixture
def sb(front):
    with IsolatedSandbox(limits=SMALL, timeouts=QUICK) as box:
        yield box


@pytest.mark.parametrize("code,status,exit_code,sig", [
    ("print('out'); import sys; sys.exit(3)", "nonzero_exit", 3, None),
    ("print('out'); raise ValueError('boom')", "nonzero_exit", 1, None),
    ("print('out', flush=True); import os; os._exit(5)", "nonzero_exit", 5, None),
    ("print('out', flush=True); import os; os.kill(os.getpid(), 9)", "nonzero_exit", None, 9),
    ("print('out')", "ok", 0, None),
])
def test_each_ending_gives_its_status_and_all_output(sb, code, status, exit_code, sig):
    r = sb.run_python(code)
    assert (r.status, r.exit_code, r.signal, r.stdout) == (status, exit_code, sig, "out\n")
    if "ValueError" in code:
        assert r.stderr.endswith("ValueError: boom\n")
    assert sb.run_python(ALONE).stdout == "True\n"


def test_a_timed_out_snippet_is_gone_before_the_next(sb):
    r = sb.run_python("print('started', flush=True)\nwhile True: pass", timeout=0.5)
    assert (r.status, r.stdout) == ("timeout", "started\n")
    assert sb.run_python(ALONE).stdout == "True\n"


def test_a_thread_writing_to_a_dup_of_stdout_leaks_nothing(sb):
    """The snippet's own stdout is closed before its note, but a dup of it is another fd."""
    code = ("import os, threading, time\n"
            "fd = os.dup(1)\n"
            "def spam():\n"
            "    while True:\n"
            "        os.write(fd, b'tick\\n')\n"
            "threading.Thread(target=spam, daemon=True).start()\n"
            "time.sleep(0.02)\n"
            "print('done')")
    for _ in range(3):
        r = sb.run_python(code)
        lines = r.stdout_bytes.split(b"\n")
        assert r.ok and lines[-1] == b"" and b"done" in lines
        assert set(lines[:-1]) <= {b"tick", b"done"}  # whole lines only: nothing cut or mixed
        nxt = sb.run_python("print('next')")
        assert (nxt.stdout, nxt.stderr) == ("next\n", "")
        assert sb.run_python(ALONE).stdout == "True\n"


def test_a_daemon_thread_never_runs_after_the_result(sb):
    """A normal end with a thread still alive: the thread is stopped with the process and
    killed before the report (as in ``python3 -c``, a daemon thread is not waited for)."""
    r = sb.run_python("import threading, time\n"
                      "def late():\n"
                      "    time.sleep(0.3)\n"
                      "    open('/work/late.txt', 'w').write('late')\n"
                      "threading.Thread(target=late, daemon=True).start()\n"
                      "print('done')")
    assert (r.status, r.stdout) == ("ok", "done\n")
    time.sleep(0.8)
    assert "late.txt" not in [f.path for f in sb.list_files()]
    assert sb.run_python(ALONE).stdout == "True\n"


def test_no_process_of_a_snippet_is_seen_by_the_next(sb):
    """Whatever ended the last snippet (note, fork, thread, exit), the next one is alone."""
    endings = ["pass",
               "import os\nif os.fork() == 0:\n    import time; time.sleep(30)",
               "import threading, time\nthreading.Thread(target=time.sleep, args=(30,)).start()",
               "import os, time\nif os.fork() == 0:\n    time.sleep(30)\nos._exit(0)",
               "import subprocess\nsubprocess.Popen(['sleep', '30'], start_new_session=True)"]
    for code in endings:
        pid = sb.run_python("import os; print(os.getpid(), flush=True)\n" + code).stdout.strip()
        assert pid.isdigit(), code
        after = sb.run_python(ALONE + "\nprint(os.path.exists('/proc/%s'))" % pid)
        assert after.stdout == "True\nFalse\n", code


def test_the_server_killed_between_snippets_is_replaced(sb):
    assert sb.run_python("print(1)").stdout == "1\n"
    for _ in range(2):
        pid, _sock = sb.ch.pyserver
        sb.ch.send_quiet({"op": "signal", "pid": pid, "sig": 9})
        # The kill is asynchronous: it may land during either of the next two requests, which
        # is then reported (never hung) and served by the replacement when sent again.
        for code, want in (("print(2)", "2\n"), (ALONE, "True\n")):
            r = sb.run_python(code)
            if r.stdout != want:
                assert r.status != "ok", (code, r)
                r = sb.run_python(code)
            assert r.stdout == want, (code, r)
