"""Nothing of a sandbox outlives it on the host, even when its harness dies without atexit.

A SIGKILLed harness (or a forked child that ``os._exit``s) cannot clean up: its cache
directory in ``/dev/shm`` (hidden tests included) and its cgroups stay. The next harness to
start sweeps what belongs to owners that are gone, and never what belongs to a live one.
Everything staged is owner-only, so the hidden tests are never readable by another user.
"""

import os
import signal
import subprocess
import sys

import pytest

from posttrain.sandbox import Template, template
from posttrain.sandbox.isolated import IsolatedSandbox
from posttrain.sandbox.process import ProcessSandbox

HOLDER = r"""
import os, sys
from posttrain.sandbox import Template, template
from posttrain.sandbox.isolated import IsolatedSandbox
sb = IsolatedSandbox(template=Template.of({"tests/test_hidden.py": "SECRET = 1\n"}))
sb.write_file("w.txt", "live")  # the Python supervisor runs too
pid = os.fork()
if pid == 0:  # a forked child stages its own cache, then ends without atexit
    print("child", template.cache_root(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("cache", template.cache_root(), flush=True)
print("groups", *sorted(set(sb.cgroup.dirs.values())), flush=True)
sys.stdin.read()  # hold the live sandbox until killed
"""
START = "from posttrain.sandbox.isolated import IsolatedSandbox; IsolatedSandbox().close()"


def test_sigkilled_harness_leftovers_are_swept_by_the_next_start():
    own_cache = template.cache_root()  # a live owner's: must survive the sweep
    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        lines = {}
        for _ in range(3):
            key, *rest = proc.stdout.readline().split()
            lines[key] = rest
        child, cache, groups = lines["child"][0], lines["cache"][0], lines["groups"]
        assert groups and all(os.path.isdir(g) for g in groups)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    leftovers = [child, cache] + groups
    assert all(os.path.exists(p) for p in leftovers)  # nobody ran atexit or destroy
    subprocess.run([sys.executable, "-c", START], check=True, timeout=120)
    assert [p for p in leftovers if os.path.exists(p)] == []
    assert own_cache.is_dir()


def test_hidden_test_templates_are_never_world_readable():
    secret = {"tests/test_hidden.py": "EXPECTED = 42\n"}
    with IsolatedSandbox(template=Template.of(secret)) as sb, \
            ProcessSandbox(template=Template.of(secret)) as psb:
        assert sb.read_file("tests/test_hidden.py") == psb.read_file("tests/test_hidden.py")
        root = template.cache_root()
        staged = sorted(root.glob("tpl-*/work/tests/test_hidden.py"))
        assert len(staged) == 2  # one per sandbox uid (the sandbox user, and ours)
        for place in (root, *(p.parents[2] for p in staged), psb.root):
            assert os.stat(place).st_mode & 0o077 == 0, oct(os.stat(place).st_mode)
        for path in staged:  # as another user: unreachable (not just unlisted)
            r = subprocess.run(["cat", str(path)], user=65534, group=65534, extra_groups=[],
                               capture_output=True, text=True)
            assert r.returncode != 0 and "Permission denied" in r.stderr, r


@pytest.mark.parametrize("stamp_ok", [True, False])
def test_sweep_removes_only_dead_owners(tmp_path, stamp_ok):
    from posttrain.sandbox import hostdirs

    live = hostdirs.make_dir("pt-x-", str(tmp_path))
    dead_proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                               capture_output=True, text=True)
    dead_pid = int(dead_proc.stdout)
    # a reused pid with another start time counts as dead; an unparsable name is kept
    name = f"pt-x-{os.getpid()}-1-abc" if stamp_ok else f"pt-x-{dead_pid}-abc"
    dead = tmp_path / name
    (dead / "sub").mkdir(parents=True)
    (tmp_path / "pt-x-notastamp").mkdir()
    removed = hostdirs.sweep(str(tmp_path), "pt-x-")
    assert removed == [str(dead)] and os.path.isdir(live)
    assert (tmp_path / "pt-x-notastamp").is_dir()
