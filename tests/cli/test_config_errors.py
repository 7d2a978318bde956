"""A config typo fails from the shell at once: exit 2, one message, no traceback, no run folder.

Each registry-valued field gets a typo through ``posttrain train configs/example.yaml --set``
(a real subprocess, timed from the shell); the message must name the dotted field, the bad
value and the allowed values or a did-you-mean. The run folder must not exist afterwards.
The rules themselves are covered one by one in tests/unit/test_run_config_checks.py.
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
POSTTRAIN = str(Path(sys.executable).parent / "posttrain")
LIMIT_S = 5.0


def _run(argv: list[str], tmp_path: Path, python_prelude: str | None = None):
    out = tmp_path / "run"
    if python_prelude is None:
        cmd = [POSTTRAIN, *argv, "--out", str(out)]
    else:  # the same command line, after a prelude (e.g. hiding an installed extra)
        code = (f"{python_prelude}; import sys; sys.argv = ['posttrain', *{argv!r}, '--out', {str(out)!r}]; "
                "from posttrain.cli.main import main; main()")
        cmd = [sys.executable, "-c", code]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    return res, wall, out


def _assert_config_error(res, wall, out, needles):
    text = res.stdout + res.stderr
    assert res.returncode == 2, text
    assert "Traceback" not in text, text
    assert res.stderr.startswith("error: invalid config:"), res.stderr
    for needle in needles:
        assert needle in res.stderr, (needle, res.stderr)
    assert not out.exists(), "a config error must come before any work (run folder created)"
    assert wall < LIMIT_S, f"config error took {wall:.2f} s from the shell"


@pytest.mark.parametrize("override, needles", [
    ("rl.algorithm=grpoo", ["rl.algorithm", "'grpoo'", "did you mean 'grpo'", "allowed: ", "dapo, dr_grpo, grpo"]),
    ("domains=[{id: math.ad-v1}]", ["domains.0.id", "math.ad-v1", "did you mean 'math.add-v1'"]),
    ("domains=[{id: math.add-v1, difficulties: [7]}]", ["domains.0.difficulties", "[7]", "[1, 2, 3, 4]"]),
    ("inference.backend=openai", ["inference.backend", "\"openai\"", "allowed: hf, vllm"]),
    ("async_rl.executor=thred", ["async_rl.executor", "\"thred\"", "did you mean 'thread'"]),
    ("curriculum.config={promote_att: 0.9}", ["curriculum.config.promote_att", "did you mean 'promote_at'"]),
    ("agent={max_turns: 3}", ["agent", "renamed to 'episode'"]),
])
def test_train_typo_fails_fast(tmp_path, override, needles):
    res, wall, out = _run(["train", "configs/example.yaml", "--set", override], tmp_path)
    _assert_config_error(res, wall, out, needles)


def test_quickstart_cross_field_rule_fails_fast(tmp_path):
    res, wall, out = _run(["quickstart", "--set", "rl.max_policy_lag=0", "--set",
                           "async_rl.work_store=sqlite"], tmp_path)
    _assert_config_error(res, wall, out, ["async_rl.work_store", "\"sqlite\"", "rl.max_policy_lag >= 1"])


def test_missing_model_folder_fails_fast(tmp_path):
    res, wall, out = _run(["train", "configs/example.yaml", "--model", str(tmp_path / "nope")], tmp_path)
    _assert_config_error(res, wall, out, ["model.path", str(tmp_path / "nope"), "existing local folder"])


def test_ray_executor_without_the_extra_names_it(tmp_path):
    """``sys.modules['ray'] = None`` makes ``import ray`` fail as on a machine without it."""
    res, wall, out = _run(["train", "configs/ray_example.yaml"], tmp_path,
                          python_prelude="import sys; sys.modules['ray'] = None")
    _assert_config_error(res, wall, out, ["async_rl.executor", "\"ray\"", "pip install 'posttrain[ray]'"])
