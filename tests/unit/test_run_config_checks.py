"""check_run_config: every registry-valued field and cross-field rule, in process (fast).

The command-line side (exit 2, one message, no traceback, under 5 s) is in
tests/cli/test_config_errors.py; here each rule gets a config that breaks only it.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.core.config import load_config
from posttrain.core.errors import ConfigError
from posttrain.trainer.validate import BUILTIN_POOLS, check_run_config, episode_limits

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([*ROOT.glob("configs/*.yaml"), ROOT / "posttrain/configs/quickstart.yaml"])


def _error(*sets: str) -> str:
    cfg = load_config(None, list(sets))
    with pytest.raises(ConfigError) as e:
        check_run_config(cfg)
    return str(e.value)


# Shipped configs whose model a documented command builds first (not there on a fresh clone):
# they are checked against a model of the same kind in its place.
BUILT_FIRST = {"models/vision-charts": "vlm"}  # posttrain foundation build-vision (vision-charts.yaml)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_passes(path, tmp_path):
    cfg = load_config(path)
    if cfg.model.path in BUILT_FIRST and not (ROOT / cfg.model.path).exists():
        from posttrain.models.loading import save_model
        from posttrain.vision.tiny_vlm import TinyVLMConfig, build_tiny_vlm

        model, processor = build_tiny_vlm(TinyVLMConfig(image_size=64))
        folder = save_model(model, processor.tokenizer, tmp_path / "vlm")
        cfg = load_config(path, [f"model.path={folder}"])
    check_run_config(cfg, registering=("ray",))


def test_the_check_does_not_import_torch():
    """What keeps a typo fast: loading and checking a config never imports torch."""
    code = ("import sys; from posttrain.core.config import load_config; "
            "from posttrain.trainer.validate import check_run_config; "
            "check_run_config(load_config('configs/example.yaml')); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("sets, needles", [
    (["rl.algorithm=grpoo"], ["rl.algorithm", "'grpoo'", "did you mean 'grpo'", "dapo"]),
    (["domains=[{id: math.ad-v1}]"], ["domains.0.id", "math.ad-v1", "did you mean 'math.add-v1'"]),
    (["domains=[{id: math.add-v1, difficulties: [1, 9]}]"], ["domains.0.difficulties", "[1, 9]", "[1, 2, 3, 4]"]),
    (["domains=[{id: math.add-v1, difficulties: [1, 1]}]"], ["domains.0.difficulties", "distinct"]),
    (["domains=[{id: math.add-v1}, {id: math.sub-v1}, {id: math.add}]"],
     ["domains.2.id", "same domain as domains.0.id"]),
    (["inference.backend=openai"], ["inference.backend", "\"openai\"", "allowed: hf, vllm"]),
    (["async_rl.executor=thred", "rl.max_policy_lag=1"], ["async_rl.executor", "thred", "did you mean 'thread'"]),
    (["curriculum.config={promote_att: 0.9}"], ["curriculum.config.promote_att", "did you mean 'promote_at'"]),
    (["curriculum.config={demote_at: 0.9, promote_at: 0.5}"], ["curriculum.config", "demote_at (0.9)"]),
    (["curriculum.config={domains: {math.sub-v1: {weight: 2}}}"],
     ["curriculum.config.domains", "math.sub-v1", "math.add-v1"]),
])
def test_registry_fields_name_field_value_and_allowed(sets, needles):
    msg = _error(*sets)
    for needle in needles:
        assert needle in msg, (needle, msg)


@pytest.mark.parametrize("sets, needles", [
    (["async_rl.work_store=sqlite"], ["async_rl.work_store", "rl.max_policy_lag 0"]),
    (["async_rl.executor=process"], ["async_rl.executor", "\"process\" with rl.max_policy_lag 0"]),
    (["rl.max_policy_lag=1", "async_rl.max_inflight=3"], ["async_rl.max_inflight", "got 3", "allowed 1..2"]),
    (["rl.max_policy_lag=1", "async_rl.partial_rollouts=true"], ["async_rl.partial_rollouts", "free_running"]),
    (["async_rl.worker_imports=[no_such_module_xyz]"], ["async_rl.worker_imports.0", "no_such_module_xyz"]),
    (["model.path=/no/such/folder"], ["model.path", "/no/such/folder", "existing local folder"]),
    (["model.tiny.num_heads=5"], ["model.tiny.hidden_size", "192", "num_heads 5"]),
    (["model.dtype=bfloat16"], ["model.dtype", "\"bfloat16\"", "tiny model"]),
    (["model.tiny.hidden_size=24", "model.tiny.num_heads=8"], ["even head size"]),
    (["rl.max_new_tokens=300"], ["rl.max_new_tokens", "300", "max_position_embeddings 256"]),
    (["eval.max_new_tokens=256"], ["eval.max_new_tokens", "256"]),
    (["rl.group_size=1"], ["rl.group_size", "got 1", ">= 2"]),
    (["rl.group_size=1", "rl.filter_zero_variance=false", "rl.algorithm=grpo", "dpo.steps=3"],
     ["dpo.steps", "rl.group_size 1"]),
    (["eval.every_steps=11", "rl.steps=10"], ["eval.every_steps", "got 11", "1..10"]),
])
def test_cross_field_rules(sets, needles):
    msg = _error(*sets)
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_rules_that_must_not_fire():
    """The near misses of each rule are valid configs."""
    for sets in (["rl.max_policy_lag=1", "async_rl.work_store=sqlite", "async_rl.max_inflight=1"],
                 ["rl.max_policy_lag=2", "async_rl.max_inflight=3", "async_rl.executor=process"],
                 ["rl.max_policy_lag=1", "async_rl.partial_rollouts=true", "async_rl.schedule=free_running"],
                 ["rl.group_size=1", "rl.filter_zero_variance=false"],
                 ["eval.every_steps=10", "rl.steps=10"],
                 ["domains=[{id: math.add, difficulties: [2, 1]}]"],
                 ["async_rl.worker_imports=[json]"]):
        check_run_config(load_config(None, sets))


def test_model_path_folder_without_config_json(tmp_path):
    msg = _error(f"model.path={tmp_path}")
    assert "model.path" in msg and "config.json" in msg
    (tmp_path / "config.json").write_text("{}")
    check_run_config(load_config(None, [f"model.path={tmp_path}"]))


def test_every_problem_in_one_message():
    msg = _error("rl.algorithm=ppo9", "inference.backend=tpu", "domains=[{id: nope.nope-v1}]")
    assert msg.startswith("invalid config:")
    assert all(f in msg for f in ("rl.algorithm", "inference.backend", "domains.0.id"))


def test_ray_unregistered_says_what_to_do():
    if "posttrain.trainer.producers" in sys.modules:
        from posttrain.trainer.producers import POOLS
        if "ray" in POOLS:
            pytest.skip("ray already registered in this process")
    msg = _error("rl.max_policy_lag=1", "async_rl.executor=ray")
    assert "async_rl.executor" in msg and ("register()" in msg or "posttrain[ray]" in msg)
    check_run_config(load_config(None, ["rl.max_policy_lag=1", "async_rl.executor=ray"]),
                     registering=("ray",))


def test_builtin_pools_are_the_registered_ones():
    from posttrain.trainer.producers import POOLS

    assert set(BUILTIN_POOLS) <= set(POOLS.ids())


def test_algorithm_ids_are_registered():
    from posttrain.trainer.advantages import ADVANTAGES
    from posttrain.trainer.algorithms import ALGORITHMS
    from posttrain.trainer.losses import LOSSES

    for algo in ALGORITHMS.values():
        assert algo.advantage in ADVANTAGES and algo.loss in LOSSES, algo


@pytest.mark.parametrize("old, hint", [
    ("agent.max_turns=3", "renamed to 'episode'"),
    ("async_rl.max_turns=3", "renamed to 'episode.max_turns'"),
    ("async_rl.env_workers=3", "renamed to 'episode.env_workers'"),
    ("async_rl.verify_workers=3", "removed"),
    ("inference.base_url=http://x", "removed"),
])
def test_old_fields_say_where_they_went(old, hint):
    with pytest.raises(ConfigError) as e:
        load_config(None, [old])
    assert "unknown field" in str(e.value) and hint in str(e.value)


def test_episode_section_becomes_the_rollout_limits():
    cfg = load_config(None, ["episode.max_turns=3", "episode.max_total_tokens=77", "episode.timeout_s=9",
                             "episode.env_workers=5", "episode.max_context_chars=1234",
                             "episode.keep_recent_tool_outputs=1", "episode.old_tool_output_chars=50",
                             "episode.summary=false", "episode.working_memory=false"])
    lim = episode_limits(cfg.episode)
    assert (lim.max_turns, lim.max_total_tokens, lim.timeout_s, lim.env_workers) == (3, 77, 9.0, 5)
    ctx = lim.context
    assert (ctx.max_context_chars, ctx.keep_recent_tool_outputs, ctx.old_tool_output_chars,
            ctx.summary, ctx.working_memory) == (1234, 1, 50, False, False)
    default = episode_limits(load_config().episode)
    assert (default.max_turns, default.max_total_tokens, default.timeout_s) == (8, 4096, 300.0)
