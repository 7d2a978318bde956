"""A third-party package registers a domain through the ``posttrain.domains`` entry point.

The fast test builds what ``pip install`` writes — the example package on the path plus a
``*.dist-info`` folder with ``METADATA`` and ``entry_points.txt`` — and runs the real CLI in a
subprocess, so discovery goes through ``importlib.metadata`` exactly as for an installed
plugin. The slow test really pip-installs ``examples/plugin_example`` into a fresh venv.
"""

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugin_example"
DOMAIN = "games.nim_move-v1"


def _entry_points_from_pyproject() -> str:
    import tomllib

    eps = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]["entry-points"]
    lines = ["[posttrain.domains]"] + [f"{k} = {v}" for k, v in eps["posttrain.domains"].items()]
    return "\n".join(lines) + "\n"


def _fake_install(site: Path, module: str = "posttrain_example_plugin") -> Path:
    dist = site / "posttrain_example_plugin-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: posttrain-example-plugin\n"
                                   "Version: 0.1.0\n")
    eps = _entry_points_from_pyproject().replace("posttrain_example_plugin", module)
    (dist / "entry_points.txt").write_text(eps)
    return site




_SCRIPT = """
import json, sys
from typer.testing import CliRunner
from posttrain.cli.domains_cmd import app
out = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, args)
    out.append({"code": r.exit_code, "stdout": r.stdout})
print("RESULT" + json.dumps(out))
"""


def _env(site: Path, extra_path=(EXAMPLE,)) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *map(str, extra_path), str(ROOT)])
    env["POSTTRAIN_SANDBOX_QUIET"] = "1"
    return env


def _domains_cli(commands, site: Path) -> list[dict]:
    """Run ``posttrain domains <args>`` for each args list, in one fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(commands)],
                          capture_output=True, text=True, env=_env(site), timeout=300)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(line[-1][len("RESULT"):])


def test_entry_point_plugin_is_listed_and_checked(tmp_path):
    site = _fake_install(tmp_path / "site")
    listed, checked, sampled = _domains_cli(
        [["list", "--json"], ["check", DOMAIN, "--json", "--workers", "1"],
         ["sample", "games.nim_move", "--seed", "3", "--json"]], site)
    assert listed["code"] == 0, listed
    rows = {r["id"]: r for r in json.loads(listed["stdout"])}
    assert DOMAIN in rows
    assert rows[DOMAIN]["native"] is False and rows[DOMAIN]["family"] == "games"
    assert rows["math.add-v1"]["native"] is True
    assert checked["code"] == 0, checked
    (rep,) = json.loads(checked["stdout"])
    assert rep["id"] == DOMAIN and rep["ok"] and rep["failures"] == []
    task = json.loads(sampled["stdout"])
    assert task["domain"] == DOMAIN and "Nim heaps" in task["prompt"][-1]["content"]


def test_module_on_path_without_entry_point_is_not_registered(tmp_path, monkeypatch):
    from posttrain.core.registry import Registry

    monkeypatch.syspath_prepend(str(EXAMPLE))
    reg = Registry("domain", entry_point_group="posttrain.domains")
    assert DOMAIN not in reg.ids() and "example" not in reg.discovery_errors


def test_broken_entry_point_is_recorded_not_raised(tmp_path, monkeypatch):
    import importlib

    from posttrain.core.registry import Registry

    site = _fake_install(tmp_path / "site", module="posttrain_no_such_plugin_module")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    reg = Registry("domain", entry_point_group="posttrain.domains")
    assert reg.ids() == [] or DOMAIN not in reg.ids()
    assert "ModuleNotFoundError" in reg.discovery_errors["example"]


@pytest.mark.slow
def test_pip_install_into_a_fresh_venv(tmp_path):
    """The real thing: ``pip install examples/plugin_example`` next to posttrain, then list."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # posttrain and its dependencies come from this interpreter's site-packages (a .pth file),
    # so the test installs only the plugin, offline, with the same pip.
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    import sysconfig

    (site / "host.pth").write_text(sysconfig.get_paths()["purelib"] + "\n" + str(ROOT) + "\n")
    pip = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                          "--no-index", str(EXAMPLE)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    cli = [str(py), "-m", "posttrain.cli.main", "domains"]
    env = _env(site, extra_path=())
    listed = subprocess.run(cli + ["list", "--json"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert listed.returncode == 0, listed.stderr
    rows = {r["id"]: r for r in json.loads(listed.stdout)}
    assert rows[DOMAIN]["native"] is False
    checked = subprocess.run(cli + ["check", DOMAIN, "--json", "--workers", "1"],
                             capture_output=True, text=True, env=env, timeout=600)
    assert checked.returncode == 0 and json.loads(checked.stdout)[0]["ok"]


def test_docs_show_the_plugin_verbatim():
    """docs/plugins.md carries the example's module and entry point exactly (no drift)."""
    doc = (ROOT / "docs" / "plugins.md").read_text()
    module = (EXAMPLE / "posttrain_example_plugin" / "__init__.py").read_text()
    assert f"```python\n{module}```" in doc
    assert '[project.entry-points."posttrain.domains"]\nexample = "posttrain_example_plugin"' in doc
    assert len(module.splitlines()) <= 40
