import warnings

import pytest

from posttrain.sandbox import Limits, Timeouts, make_sandbox, native

SMALL = Limits(memory_bytes=128 << 20, pids=64, stdout_bytes=32 << 10, stderr_bytes=32 << 10,
               store_bytes=64 << 20)
QUICK = Timeouts(wall_s=10, cpu_s=10, kill_grace_s=0.2)


@pytest.fixture(params=["isolated", "isolated-python", "process"])
def backend(request, monkeypatch):
    if request.param == "isolated-python":  # the fallback when no C compiler is available
        monkeypatch.setenv("POSTTRAIN_SANDBOX_NATIVE", "0")
        return "isolated"
    return request.param


@pytest.fixture
def open_sb(backend):
    opened = []

    def make(template=None, **kw):
        kw.setdefault("limits", SMALL)
        kw.setdefault("timeouts", QUICK)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sb = make_sandbox(backend, template=template, untrusted=False, **kw)
        opened.append(sb)
        return sb

    yield make
    for sb in opened:
        sb.close()


@pytest.fixture(params=["native", "python"])
def front(request, monkeypatch):
    """The isolated backend's two supervisors: ptinit, or the Python fallback (no compiler)."""
    if request.param == "python":
        monkeypatch.setenv("POSTTRAIN_SANDBOX_NATIVE", "0")
    elif native.binary() is None:
        pytest.fail("gcc is on these machines and in CI: ptinit must build")
    return request.param
