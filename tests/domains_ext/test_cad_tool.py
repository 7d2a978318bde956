"""The ``cad`` tool in a real isolated sandbox: the script runs under the sandbox's
/usr/bin/python3 with the CAD packages bound read-only, exports land in /work/out, errors
come back as observations, and escapes fail cleanly. Prints the measured latency."""

import os
import time

import pytest

from posttrain.sandbox import isolated_available, open_sandbox
from posttrain.tools.cad_tool import CAD_LIMITS, CadTool, cad_site, cad_template

pytestmark = pytest.mark.skipif(not isolated_available()[0], reason="needs bubblewrap")


@pytest.fixture(scope="module")
def sb():
    with open_sandbox(cad_template(), limits=CAD_LIMITS, backend="isolated") as box:
        yield box


def outputs(sb):
    return sorted(sb.exec("ls /work/out 2>/dev/null").stdout.split())


def test_builds_measures_and_exports(sb):
    t0 = time.perf_counter()
    r = CadTool()(sb, "from build123d import *\nprint('hello')\n"
                      "result = [Box(40, 20, 5) - Pos(10, 0, 0) * Cylinder(3, 10), Pos(0, 0, 10) * Box(4, 4, 4)]\n")
    wall = time.perf_counter() - t0
    print(f"cad tool: one script run {wall:.2f}s wall, {r.data['exec']['cpu_s']:.2f}s CPU, "
          f"peak {r.data['exec']['peak_memory_bytes'] >> 20} MiB, load {os.getloadavg()[0]:.1f}")
    assert r.ok, r.content
    s = r.data["summary"]
    assert s["solids"] == 2 and s["valid"]
    assert abs(s["volume"] - (40 * 20 * 5 - 3.14159265 * 9 * 5 + 64)) < 0.5
    assert s["bbox_min"] == [-20.0, -10.0, -2.5] and s["bbox_max"] == [20.0, 10.0, 12.0]
    assert "hello" in r.content and "2 solid(s)" in r.content
    assert outputs(sb) == ["body_0.stl", "body_1.stl", "model.step"]
    assert sb.read_file("out/model.step").startswith(b"ISO-10303-21")


@pytest.mark.parametrize("script, says", [
    ("from build123d import *\nresult = Box(1, 1,\n", "SyntaxError"),
    ("raise ValueError('bad dimension')\n", "ValueError: bad dimension"),
    ("import sys\nsys.exit(3)\n", "SystemExit"),
    ("x = 1\n", "no model"),
    ("from build123d import *\nresult = Circle(3)\n", "no solid"),
    ("result = 42\n", "not a build123d shape"),
])
def test_failures_are_observations_and_leave_no_export(sb, script, says):
    sb.write_file("out/body_0.stl", b"left by an earlier run")
    r = CadTool()(sb, script)
    assert not r.ok and r.content.startswith("error:") and says in r.content, r.content
    assert outputs(sb) == []  # the previous model's exports are gone: nothing stale is graded


def test_a_written_stl_is_not_a_model(sb):
    r = CadTool()(sb, "import os\nos.makedirs('/work/out', exist_ok=True)\n"
                      "open('/work/out/body_0.stl', 'w').write('solid x\\nendsolid x\\n')\n")
    assert not r.ok and "no model" in r.content and outputs(sb) == []


@pytest.mark.parametrize("target", ["/opt/ro/cad/planted.py", "/etc/planted", "/usr/lib/planted",
                                    "/work/../opt/ro/cad/build123d/planted.py"])
def test_escaping_the_work_dir_fails_cleanly(sb, target):
    r = CadTool()(sb, f"import os\nwith open({target!r}, 'w') as fh:\n    fh.write('x')\n")
    assert not r.ok and ("Read-only file system" in r.content or "Permission denied" in r.content
                         or "No such file" in r.content), r.content
    assert not os.path.exists(os.path.join(cad_site(), "planted.py"))
    assert not os.path.exists(os.path.join(cad_site(), "build123d", "planted.py"))


def test_the_host_is_not_visible(sb):
    r = CadTool()(sb, f"import os\nprint(os.path.exists({cad_site()!r}), os.path.exists('/work/main'),"
                      " open('/proc/self/mountinfo').read().count('site-packages'))\n")
    assert "False False 0" in r.content, r.content


def test_a_repeated_script_reuses_its_real_run(sb):
    script = "from build123d import *\nprint('once')\nresult = Cylinder(5, 12) - Cylinder(2, 12)\n"
    first = CadTool()(sb, script)
    assert first.ok and first.data["cached"] is False
    body = sb.read_file("out/body_0.stl")
    sb.write_file("out/body_0.stl", b"tampered")
    sb.write_file("out/stray.stl", b"x")
    t0 = time.perf_counter()
    again = CadTool()(sb, script)
    assert time.perf_counter() - t0 < 2.0  # no interpreter start, no kernel import
    assert again.ok and again.data["cached"] is True and again.data["summary"] == first.data["summary"]
    assert "once" in again.content
    assert outputs(sb) == ["body_0.stl", "model.step"] and sb.read_file("out/body_0.stl") == body
    fresh = CadTool(cache=False)(sb, script)
    assert fresh.data["cached"] is False and fresh.data["exec"]["status"] == "ok"


def test_a_venv_the_sandbox_user_cannot_reach_is_mirrored(tmp_path, monkeypatch):
    """A checkout under a private directory (a ``mktemp -d`` clone, ``/root``): the CAD
    packages are mirrored where the sandbox user can reach them, and a script builds there."""
    from pathlib import Path

    from posttrain.tools import cad_packages

    assert not cad_packages.reachable(tmp_path)  # pytest's tmp dirs are 0700
    assert cad_packages.reachable(Path("/usr/lib"))
    base = Path(__import__("tempfile").mkdtemp(dir="/var/tmp", prefix="cad-mirror-test-"))
    base.chmod(0o755)
    try:
        monkeypatch.setattr(cad_packages, "MIRROR_BASE", base)
        monkeypatch.setattr(cad_packages, "reachable", lambda p: False)
        cad_packages.cad_site.cache_clear()
        site = cad_packages.cad_site()
        assert Path(site).parent == base and (Path(site) / "build123d").is_dir()
        assert not (Path(site) / "torch").exists()  # only what build123d imports
        with open_sandbox(cad_template(), limits=CAD_LIMITS, backend="isolated") as box:
            r = CadTool(cache=False)(box, "from build123d import *\nresult = Box(10, 10, 10)\n")
        assert r.ok and abs(r.data["summary"]["volume"] - 1000) < 1e-6, r.content
    finally:
        cad_packages.cad_site.cache_clear()
        __import__("shutil").rmtree(base, ignore_errors=True)
