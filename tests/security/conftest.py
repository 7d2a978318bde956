import os
import tempfile
import uuid

import pytest

from posttrain.sandbox import attacks, hostcheck, isolated_available
from posttrain.sandbox.isolated import IsolatedSandbox


@pytest.fixture
def attack_ctx():
    ok, why = isolated_available()
    if not ok:
        pytest.fail(f"the isolated backend must be available for the security suite: {why}")
    marker = f"ptmark{uuid.uuid4().hex[:12]}"
    scratch = tempfile.mkdtemp(prefix=f"pt-sec-{marker}-")
    opened = []

    def make(**kw):
        kw.setdefault("limits", attacks.SMALL)
        kw.setdefault("timeouts", attacks.QUICK)
        sb = IsolatedSandbox(**kw)
        opened.append(sb)
        return sb

    before = hostcheck.capture(marker)
    ctx = attacks.Ctx(open=make, marker=marker, scratch=scratch)
    yield ctx
    for sb in opened:
        sb.close()
    import shutil
    shutil.rmtree(scratch, ignore_errors=True)
    after = hostcheck.capture(marker)
    problems = hostcheck.leftovers(before, after)
    for sb in opened:
        for pid in filter(None, (getattr(sb, "init_pid", None), getattr(sb, "supervisor_pid", None))):
            if os.path.exists(f"/proc/{pid}"):
                state = open(f"/proc/{pid}/stat").read().split()[2]
                if state != "Z":
                    problems.append(f"sandbox process {pid} still alive")
    assert not problems, f"host not left clean: {problems}"
