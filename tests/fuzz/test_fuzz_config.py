"""Every config field, fuzzed: a bad value fails with exit status 2 and one message naming it.

The cases come from the pydantic schema (:mod:`fuzz_config`): for each field of
``RunConfig`` a wrong type, values past each bound, non-finite floats and booleans for
numbers; an unknown key in every section; and schema-valid configs with several fields at
their bounds, which the cross-field rules of ``check_run_config`` must reject by name or
accept. A field added to the schema is fuzzed without touching this file.

Tiers: the loader's validation (``validate_config`` + ``check_run_config``) takes every case; the real CLI (``posttrain train
CONFIG``, typer's runner in process) a stratified sample, and three real subprocesses; the
slow tier runs every case as a subprocess (also ``bench/fuzz.py --boundary config``).
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fuzz_config import combination_configs, leaf_fields, mutations
from posttrain.cli.main import app
from posttrain.core.config import RunConfig, validate_config
from posttrain.core.errors import ConfigError
from posttrain.trainer.validate import check_run_config

ROOT = Path(__file__).resolve().parents[2]
POSTTRAIN = str(Path(sys.executable).parent / "posttrain")
MUTATIONS = mutations()
KNOWN_PATHS = {lf.dotted for lf in leaf_fields()}


def _problems(exc: ConfigError) -> list[str]:
    lines = str(exc).split("\n")
    assert lines[0] == "invalid config:", str(exc)
    return [ln.strip() for ln in lines[1:]]


def _names_field(problem: str) -> str:
    return problem.split(":", 1)[0]


def test_the_schema_walk_sees_every_section_and_enough_cases():
    """A walk that silently missed sections would make the rest of this file vacuous."""
    sections = {p.split(".")[0] for p in KNOWN_PATHS}
    assert set(RunConfig.model_fields) <= sections | {"domains"}
    assert {"rl.lr", "domains.0.weight", "model.tiny.num_heads", "sandbox.pool_size"} <= KNOWN_PATHS
    kinds = {m.kind for m in MUTATIONS}
    assert kinds == {"wrong_type", "out_of_range", "unknown_key"}
    assert len(MUTATIONS) > 5 * len(KNOWN_PATHS) // 2


def test_every_field_mutation_is_rejected_naming_the_field():
    """All cases through the loader's validation (the YAML step is the CLI tests' part): each
    must fail, and every problem line must start with the mutated field's dotted path."""
    escapes = []
    for m in MUTATIONS:
        try:
            check_run_config(validate_config(m.data))
        except ConfigError as exc:
            problems = _problems(exc)
            if not problems or any(not p.startswith(m.path) for p in problems):
                escapes.append((m.name, problems))
            continue
        escapes.append((m.name, "accepted"))
    assert not escapes, escapes[:10]


def test_cross_field_rules_name_schema_fields(tmp_path):
    """Schema-valid configs at their bounds: accepted, or one ConfigError whose every line
    names a field of the schema; the rules must actually fire on some of them."""
    fired = set()
    for data in combination_configs(120, seed=1):
        try:
            check_run_config(RunConfig.model_validate(data))
        except ConfigError as exc:
            for p in _problems(exc):
                field = _names_field(p)
                assert field in KNOWN_PATHS, (field, p)
                assert "got " in p, p
                fired.add(field)
    assert len(fired) >= 4, fired


def _cli(tmp_path: Path, data: dict):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "run")])


def _sample(step: int):
    by_kind: dict[str, list] = {}
    for m in MUTATIONS:
        by_kind.setdefault(m.kind, []).append(m)
    return [m for ms in by_kind.values() for m in ms[::step]]


@pytest.mark.parametrize("m", _sample(12), ids=lambda m: m.name)
def test_cli_exit_2_one_message(tmp_path, m):
    res = _cli(tmp_path, m.data)
    err = res.stderr if hasattr(res, "stderr") else res.output
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert err.startswith("error: invalid config:"), err
    assert "Traceback" not in res.output
    assert all(ln.strip().startswith(m.path) for ln in err.splitlines()[1:] if ln.strip()), err
    assert not (tmp_path / "run").exists()


def _subprocess_case(tmp_path: Path, m) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(m.data))
    res = subprocess.run([POSTTRAIN, "train", str(path), "--out", str(tmp_path / "run")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, (m.name, res.returncode, res.stderr[-2000:])
    assert res.stderr.startswith("error: invalid config:"), res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    lines = [ln.strip() for ln in res.stderr.splitlines()[1:] if ln.strip()]
    assert lines and all(ln.startswith(m.path) for ln in lines), (m.name, res.stderr)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kind", ["wrong_type", "out_of_range", "unknown_key"])
def test_real_subprocess_sample(tmp_path, kind):
    _subprocess_case(tmp_path, next(m for m in MUTATIONS if m.kind == kind and "." in m.path))


@pytest.mark.slow
@pytest.mark.parametrize("m", MUTATIONS, ids=lambda m: m.name)
def test_real_subprocess_every_case(tmp_path, m):
    _subprocess_case(tmp_path, m)
