"""A snippet against its own exit note (``exit_note.py``): it can write the shared page and
stop itself, so every trick with them must end in a correct report, a dead snippet and
nothing carried over.

The page's layout is the one in ``exit_note.py`` (the note's text at its start); the
snippets find the page as the one shared 4 KiB mapping of ``/dev/zero``.
"""

import os
import time

import pytest

from posttrain.sandbox import attacks
from posttrain.sandbox.isolated import IsolatedSandbox

pytestmark = [pytest.mark.security,
              pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86_64 syscall numbers")]

PAGE = ("import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "base = next(int(l.split('-')[0], 16) for l in open('/proc/self/maps')\n"
        "            if ' rw-s ' in l and '/dev/zero' in l)\n")
ALONE = ("import os\n"
         "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()) == [1, os.getpid()])")


@pytest.fixture
def sb():
    with IsolatedSandbox(limits=attacks.SMALL, timeouts=attacks.QUICK) as box:
        yield box


def _forge(pid: str) -> str:
    return PAGE + ("note = b'd %%d 7 0.000001 1\\n' %% (%s)\n" % pid
                   + "ctypes.memmove(base, note, len(note))\n")


def test_a_forged_note_only_ends_the_snippet_early(sb):
    r = sb.run_python(_forge("os.getpid()") + (
        "if os.fork() == 0:\n"  # a grandchild that would outlive the report, were it let
        "    import time; time.sleep(1); open('/work/after.txt', 'w').write('ran on')\n"
        "    os._exit(0)\n"
        "import signal; os.kill(os.getpid(), signal.SIGSTOP)\n"
        "open('/work/after.txt', 'w').write('ran on')"))
    assert r.exit_code == 7  # what it claimed: its own exit code to choose anyway
    time.sleep(1.5)
    assert "after.txt" not in [f.path for f in sb.list_files()]
    assert sb.run_python(ALONE).stdout == "True\n"


def test_a_helper_that_continues_the_stopped_snippet_is_too_late(sb):
    """A process beside the stopped snippet could continue it (SIGCONT) and be gone by the
    time the server looks, so the server never takes an empty namespace for proof: a pid
    allocated after the snippet's own means everything is killed and reaped first."""
    r = sb.run_python(_forge("os.getpid()") + (
        "import signal, time\n"
        "me = os.getpid()\n"
        "if os.fork() == 0:\n"
        "    time.sleep(0.05); os.kill(me, signal.SIGCONT); os._exit(0)\n"
        "os.kill(me, signal.SIGSTOP)\n"
        "os.wait()\n"
        "time.sleep(0.5); open('/work/after.txt', 'w').write('ran on')"))
    assert r.exit_code == 7
    time.sleep(1)
    assert "after.txt" not in [f.path for f in sb.list_files()]
    assert sb.run_python(ALONE).stdout == "True\n"


@pytest.mark.parametrize("pid", ["os.getpid() + 1", "os.getpid()"])
def test_a_stop_without_its_own_note_is_waited_out_like_python_c(sb, pid):
    """Another pid's note is no note; a stop with none leaves the snippet stopped."""
    code = _forge(pid) + ("import signal; os.kill(os.getpid(), signal.SIGSTOP)\n"
                          "print('continued')")
    if pid == "os.getpid()":
        code = code.replace("memmove(base,", "memmove(base + 64,")  # not where a note goes
    r = sb.run_python(code, timeout=0.5)
    assert (r.status, r.stdout) == ("timeout", "")
    assert sb.run_python(ALONE).stdout == "True\n"


def test_the_page_carries_nothing_to_the_next_snippet(sb):
    sb.run_python(PAGE + "ctypes.memmove(base + 2048, b'left here', 9)")
    r = sb.run_python(PAGE + "print(ctypes.string_at(base + 2048, 9))")
    assert r.stdout == "b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'\n"


def test_kernel_aio_is_refused_in_snippets(sb):
    """exit waits for in-flight AIO in the teardown a noted snippet is reported before."""
    r = sb.run_python("import ctypes\n"
                      "libc = ctypes.CDLL(None, use_errno=True)\n"
                      "ctx = ctypes.c_ulong(0)\n"
                      "print(libc.syscall(206, 8, ctypes.byref(ctx)), ctypes.get_errno())")
    assert r.stdout == "-1 1\n"  # io_setup: EPERM
