"""SandboxPool: warm hand-out, clean reset on release, bounded concurrency, metrics."""

import threading
import time

import pytest

from posttrain.core.errors import SandboxError
from posttrain.sandbox import Limits, SandboxPool, Template, Timeouts

SMALL = Limits(memory_bytes=128 << 20, pids=64, store_bytes=64 << 20)


@pytest.fixture
def pool():
    p = SandboxPool(backend="isolated", max_total=2, warm=1, timeouts=Timeouts(create_s=20))
    yield p
    p.close()


def test_release_resets_to_clean_template(pool):
    tpl = Template.of({"task.txt": "clean"})
    first = pool.acquire(template=tpl, limits=SMALL)
    first.exec("echo dirty > task.txt; echo x > /tmp/t; echo y > new.txt")
    pool.release(first, wait=True)  # reset now, so the next acquire finds it idle
    with pool.lease(template=tpl, limits=SMALL) as sb:
        assert sb is first  # recycled, not recreated
        assert sb.read_file("task.txt") == b"clean"
        assert sb.exec("ls /tmp; ls").stdout == "task.txt\n"
    deadline = time.monotonic() + 10  # the lease's release resets in the background
    while pool.metrics()["sandbox/recycled"] < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    m = pool.metrics()
    assert m["sandbox/recycled"] == 2 and m["sandbox/created"] >= 1 and m["sandbox/in_use"] == 0
    assert m["sandbox/acquire_ms_p50"] >= 0


def test_keys_separate_templates(pool):
    a, b = Template.of({"who": "a"}), Template.of({"who": "b"})
    with pool.lease(template=a, limits=SMALL) as sa, pool.lease(template=b, limits=SMALL) as sb:
        assert (sa.read_file("who"), sb.read_file("who")) == (b"a", b"b")


def test_bounded_concurrency_waits_then_times_out(pool):
    s1 = pool.acquire(limits=SMALL)
    s2 = pool.acquire(limits=SMALL)
    t0 = time.monotonic()
    with pytest.raises(SandboxError):
        pool.acquire(limits=SMALL, timeout=0.3)
    assert time.monotonic() - t0 < 3
    threading.Timer(0.2, pool.release, args=(s1,)).start()
    s3 = pool.acquire(limits=SMALL, timeout=10)
    assert s3 is s1
    pool.release(s2)
    pool.release(s3)


def test_broken_sandbox_is_discarded_not_reused(pool):
    sb = pool.acquire(limits=SMALL)
    sb.close()  # simulates a sandbox that died while leased
    pool.release(sb, wait=True)
    assert pool.metrics()["sandbox/discarded"] >= 1
    with pool.lease(limits=SMALL) as fresh:
        assert fresh is not sb and fresh.exec("true").ok


def test_prewarm_makes_acquire_fast(pool):
    pool.prewarm(limits=SMALL)
    t0 = time.perf_counter()
    sb = pool.acquire(limits=SMALL)
    took = time.perf_counter() - t0
    pool.release(sb)
    assert took < 0.05, f"warm acquire took {took * 1000:.1f} ms"
