"""The sandbox works wherever the package is installed, and a failed start says what failed.

A clone under a directory the sandbox's uid cannot traverse (``mktemp -d`` is 0700) used to
fail every sandbox start with ``EOFError: peer closed the control socket``: bubblewrap,
running as that uid, bound the supervisor's sources straight from the package. Now they
(and ptinit) are staged into the harness's cache root first.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import posttrain
from posttrain.core.errors import SandboxError
from posttrain.sandbox import Template, staging, template
from posttrain.sandbox.isolated import IsolatedSandbox

PKG = Path(posttrain.__file__).resolve().parent

EXEC = r"""
import sys, posttrain
assert posttrain.__file__.startswith(sys.argv[1]), posttrain.__file__
from posttrain.sandbox import Template
from posttrain.sandbox.isolated import IsolatedSandbox
with IsolatedSandbox(template=Template.of({"in.txt": "x\n"})) as sb:
    r = sb.exec("cat in.txt; echo ran")
    sb.write_file("out.txt", "y")  # the Python supervisor too (ptinit upgrades to it)
    s = sb.run_python("print(open('out.txt').read())")
    print(r.status, r.stdout.split(), sb.front, s.stdout.strip())
"""


@pytest.fixture
def private_copy():
    """The package copied into a fresh ``mktemp -d`` folder (mode 0700), ptinit cache inside."""
    top = tempfile.mkdtemp(prefix="pt-clone-")
    assert os.stat(top).st_mode & 0o777 == 0o700
    shutil.copytree(PKG, os.path.join(top, "posttrain"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": top, "POSTTRAIN_SANDBOX_CACHE": os.path.join(top, "cache")}
    yield top, env
    shutil.rmtree(top, ignore_errors=True)


def _run(argv, env, timeout=300):
    return subprocess.run(argv, env=env, cwd="/", capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("native", ["1", "0"])
def test_sandboxed_exec_from_a_clone_in_a_0700_directory(private_copy, native):
    top, env = private_copy
    r = _run([sys.executable, "-c", EXEC, top], {**env, "POSTTRAIN_SANDBOX_NATIVE": native})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok ['x', 'ran'] python y", r.stdout


@pytest.mark.slow  # ~10 s: one domain's full check (generation, reference solve, probes)
def test_domain_check_from_a_clone_in_a_0700_directory(private_copy):
    top, env = private_copy
    r = _run([sys.executable, "-m", "posttrain.cli.main", "domains", "check",
              "terminal.organize-v1", "--json"], env)
    assert r.returncode == 0, (r.stdout[-1500:], r.stderr[-1500:])
    (report,) = json.loads(r.stdout)
    assert report["id"] == "terminal.organize-v1" and report["ok"], report["failures"]


def test_a_broken_supervisor_start_names_what_failed(monkeypatch, front):
    empty = template.cache_root() / "no-sources"
    empty.mkdir(exist_ok=True)
    os.chmod(empty, 0o755)
    monkeypatch.setattr(staging, "supervisor_dir", lambda: empty)
    with pytest.raises(SandboxError) as err:
        with IsolatedSandbox(template=Template.of({"a": "b"})) as sb:
            assert sb.exec("true").ok  # ptinit runs commands without the Python supervisor
            sb.write_file("c", "d")  # ... and starts it here
    msg = str(err.value)
    assert "supervisor" in msg and ("did not start" in msg or "failed to start" in msg), msg
    assert "/.ptsup/supervisor.py" in msg and "No such file" in msg, msg
    assert "EOFError" not in msg


def test_bubblewrap_failing_to_start_says_why(monkeypatch):
    monkeypatch.setattr(staging, "supervisor_dir", lambda: Path("/nonexistent-pt-sources"))
    with pytest.raises(SandboxError) as err:
        IsolatedSandbox()
    msg = str(err.value)
    assert "start" in msg and "Can't find source path /nonexistent-pt-sources" in msg, msg
    assert "EOFError" not in msg
