"""Lower layers never import higher ones (DESIGN.md §2): walk every module's imports."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "posttrain"

LAYER = {
    "core": 0, "sandbox": 1, "inference": 1, "verifiers": 2, "tools": 2, "envs": 3,
    "domains": 3, "rollout": 4, "scheduler": 5, "trainer": 6, "eval": 6, "models": 6,
    "distributed": 7, "serve": 7, "foundation": 7, "cli": 8, "vision": 6,
}
# Same-layer imports that DESIGN.md allows explicitly.
ALLOWED = {("domains", "envs"), ("domains", "tools"), ("verifiers", "sandbox"),
           ("tools", "sandbox"), ("envs", "sandbox"), ("envs", "tools"), ("envs", "verifiers"),
           ("domains", "verifiers"), ("eval", "models"), ("trainer", "models"),
           ("trainer", "eval"), ("vision", "models")}
FORBIDDEN = {("eval", "trainer"), ("models", "trainer"), ("models", "eval")}


def _imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def _pkg(path: Path) -> str:
    return path.relative_to(ROOT).parts[0]


@pytest.mark.parametrize("path", sorted(p for p in ROOT.rglob("*.py") if p.parent != ROOT),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_upward_imports(path):
    here = _pkg(path)
    if here not in LAYER:
        return
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "ray":
            assert here == "distributed", f"{path}: only posttrain.distributed may import ray"
        if parts[0] != "posttrain" or len(parts) < 2 or parts[1] not in LAYER:
            continue
        there = parts[1]
        if there == here:
            continue
        assert (here, there) not in FORBIDDEN, f"{path} imports {name}"
        ok = LAYER[there] < LAYER[here] or (here, there) in ALLOWED
        assert ok, f"{path} (layer {LAYER[here]}) imports {name} (layer {LAYER[there]})"
