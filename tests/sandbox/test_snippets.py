"""The pre-started snippet interpreter (``run_python``) behaves like a fresh ``python3 -c``.

Each snippet runs in a child forked (ahead of time) from the confined server and rehearsed on
a sample before the request arrives; nothing of the rehearsal, of an earlier snippet, or of
anything a snippet started may be visible afterwards. Real bubblewrap, both fronts.
"""

import time

import pytest

from posttrain.sandbox import Limits, Timeouts
from posttrain.sandbox.execspec import BASE_ENV
from posttrain.sandbox.isolated import IsolatedSandbox

SMALL = Limits(memory_bytes=128 << 20, pids=64, store_bytes=64 << 20)
QUICK = Timeouts(wall_s=10, cpu_s=10, kill_grace_s=0.3)


@pytest.fixture
def sb(front):
    with IsolatedSandbox(limits=SMALL, timeouts=QUICK) as box:
        yield box


def test_no_state_carries_from_one_snippet_to_the_next(sb):
    code = ("import builtins, os, sys\n"
            "print(getattr(builtins, 'COUNT', 0), 'planted' in sys.modules,"
            " os.environ.get('PLANTED'), os.getcwd())\n"
            "builtins.COUNT = 1\n"
            "sys.modules['planted'] = sys\n"
            "os.environ['PLANTED'] = '1'\n"
            "os.chdir('/tmp')")
    first = sb.run_python(code).stdout
    for _ in range(5):
        assert sb.run_python(code).stdout == first == "0 False None /work\n"


def test_the_rehearsal_leaves_nothing_behind(sb):
    r = sb.run_python("import os, sys\n"
                      "print(sorted(os.environ))\n"
                      "print(sorted(k for k in globals() if not k.startswith('__')))\n"
                      "print(sys.modules['__main__'] is sys.modules[__name__], sys.argv)\n"
                      "print(sorted(os.listdir('/proc/self/fd')))",
                      env={"MINE": "1"})
    env_keys, names, main, fds = r.stdout.splitlines()
    assert env_keys == str(sorted({*BASE_ENV, "MINE"}))  # exactly what was asked for
    assert names == "['os', 'sys']"  # no sample variable of the rehearsal
    assert main == "True ['-c']"
    assert fds == "['0', '1', '2', '3']"  # stdio and listdir's own fd: no socket, no pipe


def test_a_started_process_is_gone_before_the_result(sb):
    r = sb.run_python(
        "import subprocess\n"
        "subprocess.Popen(['sh', '-c', 'sleep 0.5; echo late > /work/late.txt'],"
        " start_new_session=True)\n"
        "import os\n"
        "if os.fork() == 0:\n"  # a double fork: the grandchild is nobody's child but pid 1's
        "    if os.fork() == 0:\n"
        "        import time; time.sleep(0.5); open('/work/late2.txt', 'w').write('late')\n"
        "    os._exit(0)\n"
        "print('started')")
    assert (r.status, r.stdout) == ("ok", "started\n")
    time.sleep(1.0)  # long enough for either to have written, had it survived the report
    names = [f.path for f in sb.list_files()]
    assert "late.txt" not in names and "late2.txt" not in names
    assert sb.run_python("import os; print(len([p for p in os.listdir('/proc') if p.isdigit()]))"
                         ).stdout == "2\n"  # the server and this snippet, nothing else


def test_a_leftover_thread_is_gone_before_the_result(sb):
    r = sb.run_python("import threading, time\n"
                      "def late():\n"
                      "    time.sleep(0.5)\n"
                      "    open('/work/thread.txt', 'w').write('late')\n"
                      "threading.Thread(target=late).start()\n"
                      "import os; os._exit(0)")  # skips the join at interpreter exit
    assert r.ok
    time.sleep(1.0)
    assert "thread.txt" not in [f.path for f in sb.list_files()]


def test_exit_statuses_and_signals_are_those_of_python_c(sb):
    assert sb.run_python("import os; os._exit(5)").exit_code == 5
    assert sb.run_python("raise SystemExit('bye')").exit_code == 1
    r = sb.run_python("import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert (r.status, r.signal) == ("nonzero_exit", 15)  # default SIGTERM: it dies
    r = sb.run_python("import os, signal\n"
                      "try:\n"
                      "    os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(1)\n"
                      "except KeyboardInterrupt:\n"
                      "    print('interrupted')")
    assert r.stdout == "interrupted\n"


def test_a_timed_out_snippet_is_killed_and_the_next_one_runs(sb):
    r = sb.run_python("import signal\n"
                      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"  # only KILL ends it
                      "while True: pass", timeout=0.5)
    assert r.status == "timeout"
    assert sb.run_python("print('next')").stdout == "next\n"


def test_the_server_is_restarted_when_it_dies(sb):
    assert sb.run_python("print(1)").stdout == "1\n"
    pid, _sock = sb.ch.pyserver
    sb.ch.send_quiet({"op": "signal", "pid": pid, "sig": 9})  # the kill ladder's last step
    r = sb.run_python("print(2)")
    if r.stdout != "2\n":  # the kill raced this request: it is reported, not hung
        assert r.status != "ok"
        r = sb.run_python("print(2)")
    assert r.stdout == "2\n"
