"""Template.ro_dirs: host directories exposed read-only at /opt/ro/<name> in an isolated
sandbox (both fronts), hidden from mountinfo like /etc, refused by the process backend.
Real bubblewrap; the directory is a temp dir made here."""

import shutil
import tempfile
from pathlib import Path

import pytest

from posttrain.core.errors import SandboxError
from posttrain.sandbox import Template
from posttrain.sandbox.isolated import IsolatedSandbox
from posttrain.sandbox.process import ProcessSandbox

from posttrain.sandbox import Limits, Timeouts

SMALL = Limits(memory_bytes=128 << 20, pids=64, store_bytes=64 << 20)
QUICK = Timeouts(wall_s=10, cpu_s=10)


@pytest.fixture
def pkg():
    # not under pytest's tmp_path (0700 under /tmp): bubblewrap runs as the sandbox user and
    # must traverse to the source; a bind it cannot reach fails the start, saying so
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="ro-dirs-"))
    root.chmod(0o755)
    (root / "ropkg").mkdir()
    (root / "ropkg" / "__init__.py").write_text("ANSWER = 42\n")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_ro_dir_is_visible_read_only_and_hidden(front, pkg):
    t = Template.of({"a.txt": "x"}, ro_dirs={"lib": str(pkg)})
    with IsolatedSandbox(template=t, limits=SMALL, timeouts=QUICK) as sb:
        r = sb.exec(["python3", "-c", "import sys; sys.path.insert(0, '/opt/ro/lib'); "
                     "import ropkg; print(ropkg.ANSWER)"])
        assert (r.status, r.stdout) == ("ok", "42\n")
        w = sb.exec("echo evil > /opt/ro/lib/ropkg/__init__.py")
        assert w.exit_code != 0 and "Read-only" in w.stderr
        info = sb.exec("cat /proc/self/mountinfo").stdout
        assert str(pkg) not in info and "/var/tmp" not in info
        assert any(" /opt/ro/lib " in line and " overlay " in line for line in info.splitlines())
    assert (pkg / "ropkg" / "__init__.py").read_text() == "ANSWER = 42\n"


def test_ro_dirs_change_the_key_and_are_validated(pkg):
    plain = Template.of({"a.txt": "x"})
    with_dir = Template.of({"a.txt": "x"}, ro_dirs={"lib": str(pkg)})
    assert plain.key != with_dir.key and with_dir.ro_dirs == (("lib", str(pkg.resolve())),)
    for bad in ("../x", "a/b", "A", "x:y", ""):
        with pytest.raises(ValueError):
            Template.of(ro_dirs={bad: str(pkg)})
    with pytest.raises(ValueError):
        Template.of(ro_dirs={"lib": str(pkg / "missing")})


def test_process_backend_refuses_ro_dirs(pkg):
    with pytest.raises(SandboxError, match="isolated"):
        ProcessSandbox(template=Template.of(ro_dirs={"lib": str(pkg)}))
