"""One extension mechanism (issue 19, item 3): every pluggable kind is a registry with an
entry-point group, listed by ``posttrain plugins list``.

A throwaway package is "installed" the way pip does it (the module on the path plus a
``*.dist-info`` with ``entry_points.txt``) and the real CLI runs in a subprocess, so discovery
goes through ``importlib.metadata`` exactly as for an installed plugin.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.cli.plugins_cmd import KINDS, registry

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''
from posttrain.trainer.algorithms import ALGORITHM_REGISTRY, Algorithm
from posttrain.sandbox.factory import SANDBOX_BACKENDS
from posttrain.tools.registry import TOOLS

ALGORITHM_REGISTRY.add("halfway", Algorithm("halfway", "rloo", "grpo", False))

@SANDBOX_BACKENDS.register("echo_backend")
def echo_backend(**kwargs):
    return "an echo sandbox"

class Echo:
    name = "echo"
    spec = {"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}
    def __call__(self, sandbox, **arguments):
        return arguments

TOOLS.add("echo", Echo)

from posttrain.inference import INFERENCE_BACKENDS
INFERENCE_BACKENDS.add_lazy("echo_llm", "pt_kinds_plugin:Echo")
'''

GROUPS = ["posttrain.algorithms", "posttrain.sandbox_backends", "posttrain.tools",
          "posttrain.inference_backends"]


def _install(site: Path) -> dict:
    (site / "pt_kinds_plugin.py").write_text(PLUGIN)
    dist = site / "pt_kinds_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pt-kinds-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "".join(f"[{g}]\nkinds = pt_kinds_plugin\n\n" for g in GROUPS)
        + "[posttrain.losses]\nbroken = pt_kinds_plugin_missing\n")
    return {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"}


def _run(env, *args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_plugins_of_every_kind_are_discovered_listed_and_validated(tmp_path):
    env = _install(tmp_path)
    kinds = ["algorithm", "sandbox_backend", "tool", "inference_backend", "reward_source"]
    r = _run(env, "-m", "posttrain", "plugins", "list", *kinds, "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    plugins = {(p["kind"], p["id"]) for p in doc["plugins"] if p["plugin"]}
    assert {("algorithm", "halfway"), ("sandbox_backend", "echo_backend"), ("tool", "echo"),
            ("inference_backend", "echo_llm")} <= plugins
    assert not any(p["plugin"] for p in doc["plugins"] if p["kind"] == "reward_source")
    assert doc["groups"]["tool"] == "posttrain.tools"
    r = _run(env, "-m", "posttrain", "plugins", "list", "loss", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    losses = json.loads(r.stdout)
    assert [e["entry_point"] for e in losses["errors"]] == ["broken"]  # reported, not fatal
    assert "grpo" in {p["id"] for p in losses["plugins"]}
    # config validation and the factories accept the plugin ids and name them when wrong
    code = ("from posttrain.trainer.algorithms import get_algorithm\n"
            "from posttrain.sandbox import make_sandbox\n"
            "from posttrain.tools.registry import make_tools\n"
            "assert get_algorithm('halfway').advantage == 'rloo'\n"
            "assert make_sandbox('echo_backend') == 'an echo sandbox'\n"
            "assert 'echo' in make_tools(['echo']).tools\n"
            "from posttrain.inference import make_backend\n"
            "assert make_backend('echo_llm').name == 'echo'\n"
            "try:\n    make_sandbox('nope')\nexcept Exception as e:\n    print(e)\n"
            "try:\n    get_algorithm('halfwy')\nexcept Exception as e:\n    print(e)\n")
    r = _run(env, "-c", code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "echo_backend" in r.stdout and "did you mean 'halfway'" in r.stdout


def test_every_kind_is_a_registry_with_its_own_group():
    groups = set()
    for kind in KINDS:
        if kind == "domain":
            continue  # loading 500 domains is the domains tests' job
        reg = registry(kind)
        assert reg.entry_point_group and reg.entry_point_group.startswith("posttrain.")
        assert reg.ids(), kind
        groups.add(reg.entry_point_group)
    assert len(groups) == len(KINDS) - 1


def test_unknown_kind_exits_2_naming_the_kinds():
    from typer.testing import CliRunner

    from posttrain.cli.main import app

    r = CliRunner().invoke(app, ["plugins", "list", "widgets"])
    assert r.exit_code == 2 and "sandbox_backend" in r.output
