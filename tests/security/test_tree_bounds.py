"""Attacks on the harness's view of the tree: diff/list_files must be complete or fail.

A policy can make a tree the harness cannot afford to read: 100,001 empty files that sort
before the tests (the old diff stopped silently at 100,000 entries and hid a rewrite of the
tests), a 3,000-deep chain of directories (quadratic walks: 25 s to list, 74 s to diff),
sixteen sparse 256 MiB files (11 s and 512 MiB of host memory to diff). Each must be
reported (a typed error, a failed verification) or handled in bounded time and memory.
"""

import resource
import time

import pytest

from posttrain.sandbox import Limits, Template, Timeouts
from posttrain.sandbox.isolated import IsolatedSandbox
from posttrain.sandbox.treewalk import TreeLimitExceeded, TreeLimits
from posttrain.verifiers.fs_state import collect_state, fs_score

pytestmark = pytest.mark.security

ROOMY = Limits(memory_bytes=512 << 20, pids=64, stdout_bytes=4 << 20, store_bytes=256 << 20)
SLOW_OK = Timeouts(create_s=30, wall_s=60, cpu_s=60, kill_grace_s=0.2)
TESTS = {"tests/test_app.py": "from app import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
         "app.py": "def add(a, b):\n    return a - b\n"}
PREDICATES = [{"op": "unchanged", "path": "tests", "guard": True},
              {"op": "file", "path": "app.py", "content": "def add(a, b):\n    return a + b\n"}]
FIX = "printf 'def add(a, b):\\n    return a + b\\n' > app.py"


@pytest.fixture
def sb():
    with IsolatedSandbox(template=Template.of(TESTS), limits=ROOMY, timeouts=SLOW_OK) as box:
        yield box


def test_file_state_verifier_sees_a_rewrite_of_the_tests(sb):
    """The control: on a small tree the guard catches the rewrite, and an honest fix passes."""
    s0 = sb.snapshot()
    assert sb.exec(FIX).ok
    assert fs_score(PREDICATES, collect_state(sb, since=s0), "t").value == 1.0
    assert sb.exec("echo 'def test_add(): pass' > tests/test_app.py").ok
    score = fs_score(PREDICATES, collect_state(sb, since=s0), "t")
    assert score.value == 0.0 and "guard failed" in score.reason


def test_100001_files_sorting_first_cannot_hide_a_test_rewrite(sb):
    s0 = sb.snapshot()
    r = sb.run_python("import os\nopen('000000', 'w').close()\n"  # hard links: 3x faster to make
                      "for i in range(1, 100_001):\n    os.link('000000', f'{i:06d}')\n"
                      "open('tests/test_app.py', 'w').write('def test_add(): pass\\n')",
                      timeout=60)
    assert r.ok, r.stderr
    assert sb.exec(FIX).ok
    with pytest.raises(TreeLimitExceeded) as err:
        sb.diff(since=s0)
    assert err.value.status == "entry_limit"
    state = collect_state(sb, since=s0)
    assert len(state.entries) > 100_001  # the listing itself was complete: the diff was not
    score = fs_score(PREDICATES, state, "t")
    assert score.value == 0.0 and "incomplete" in score.reason and "entry_limit" in score.reason
    listed = sb.list_files(limit=1000)
    assert len(listed) == 1000 and listed.truncated


def test_3000_deep_chain_lists_and_diffs_in_seconds_not_minutes(sb):
    s0 = sb.snapshot()
    r = sb.run_python("import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\n"
                      "open('leaf', 'w').write('bottom')", timeout=30)
    assert r.ok, r.stderr
    t0 = time.perf_counter()
    listed = sb.list_files()
    t_list = time.perf_counter() - t0
    t0 = time.perf_counter()
    changes = sb.diff(since=s0)
    t_diff = time.perf_counter() - t0
    deep = "/".join(["d"] * 3000) + "/leaf"
    assert len(listed) == 3000 + 1 + len(TESTS) + 1 and not listed.truncated
    assert [(c.path, c.kind, c.content) for c in changes] == [(deep, "added", "bottom")]
    # the quadratic walks took 25 s and 74 s; 5 s leaves room for a loaded 2-core CI machine
    assert t_list < 5.0 and t_diff < 5.0, (t_list, t_diff)
    sb.restore(s0)  # dropping the 3,000-deep layer (the supervisor once recursed here)
    assert sorted(f.path for f in sb.list_files()) == ["app.py", "tests", "tests/test_app.py"]


def test_sixteen_sparse_256mib_files_diff_in_bounded_time_and_memory(sb):
    assert sb.exec("for i in $(seq 10 25); do truncate -s 256M sparse$i; done").ok
    s1 = sb.snapshot()
    # copy-up of each (overlay keeps the holes), one byte changed in fifteen, one only touched
    assert sb.exec("for i in $(seq 10 24); do printf x | dd of=sparse$i bs=1 seek=100000000 "
                   "conv=notrunc 2>/dev/null; done; touch sparse25").ok
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB, peak of this process
    t0 = time.perf_counter()
    changes = sb.diff(since=s1)
    wall = time.perf_counter() - t0
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert [c.path for c in changes] == [f"sparse{i}" for i in range(10, 25)]
    assert all(c.kind == "changed" and c.size == 256 << 20 for c in changes)
    assert wall < 2.0 and grown_mib < 64, (wall, grown_mib)


def test_limits_fail_the_call_with_their_status(sb):
    s0 = sb.snapshot()
    assert sb.exec("head -c 4M /dev/urandom > a; cp a b").ok
    s1 = sb.snapshot()
    assert sb.exec("printf y | dd of=b bs=1 seek=4194303 conv=notrunc 2>/dev/null").ok
    with pytest.raises(TreeLimitExceeded) as err:  # 2 x 4 MiB to compare, 1 MiB allowed
        sb.diff(since=s1, limits=TreeLimits(max_bytes=1 << 20))
    assert err.value.status == "byte_limit"
    with pytest.raises(TreeLimitExceeded) as err:
        sb.diff(since=s0, limits=TreeLimits(time_s=0.0))
    assert err.value.status == "time_limit"
    with pytest.raises(TreeLimitExceeded) as err:
        sb.list_files(limits=TreeLimits(time_s=0.0))
    assert err.value.status == "time_limit"
    assert [c.path for c in sb.diff(since=s1)] == ["b"]
