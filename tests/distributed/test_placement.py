"""The disaggregated placement on a real local Ray cluster (custom ``sandbox`` resource):
config errors exit 2 naming the field, engine actors sample like one in-process engine and
stamp every completion with the synced version over both transports, sandbox hosts run the
episodes' sandbox calls (slow tier: the engine test), and a placed run (2 FSDP ranks, an
engine actor, a sandbox host) trains.

The kill -9 / resume run is tests/distributed/test_placement_resume.py (slow tier).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch

ray = pytest.importorskip("ray")

from async_helpers import warm_policy  # noqa: E402

from posttrain.core.config import load_config  # noqa: E402
from posttrain.core.errors import ConfigError  # noqa: E402
from posttrain.distributed import placement  # noqa: E402

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "scale" / "cpu-placement.yaml"
WARM_DOMAINS = "domains=[{id: math.add-v1, difficulties: [1]}, {id: math.compare-v1, difficulties: [1]}]"


@pytest.fixture(scope="module")
def cluster():
    from posttrain.distributed.ray_pool import ensure_ray

    ensure_ray(None, num_cpus=8, resources={"sandbox": 2})
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def warm_dir(tmp_path_factory):
    """The SFT-ed tiny policy as an HF folder (a random one gets reward 0: no gradient)."""
    from posttrain.models.loading import save_model

    model, tok = warm_policy()
    return save_model(model, tok, tmp_path_factory.mktemp("warm") / "model")


@pytest.mark.parametrize("override, field", [
    ("placement.engines.count=0", "placement.engines.count"),
    ("placement.weight_transport=nccl", "placement.weight_transport"),
    ("placement.cluster_cpus=3", "placement.cluster_cpus"),
    ("placement.cluster_resources={}", "placement.cluster_resources"),
    ("distributed.backend=nccl", "placement.trainer.num_gpus"),
    ("rl.max_policy_lag=1", "rl.max_policy_lag"),
    ("placement.trainer.resources={gpu_node: -1}", "placement.trainer.resources"),
])
def test_bad_placement_exits_2_naming_the_field(override, field, tmp_path):
    from typer.testing import CliRunner

    from posttrain.cli.main import app

    res = CliRunner().invoke(app, ["train", str(CONFIG), "--out", str(tmp_path / "run"),
                                   "--set", override])
    err = res.stderr if hasattr(res, "stderr") else res.output
    assert res.exit_code == 2 and f"\n  {field}: got " in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing written, no cluster started


def test_actors_that_do_not_fit_the_running_cluster_are_refused(cluster):
    cfg = load_config(CONFIG, ["placement.ray_address=auto",
                               "placement.sandboxes.resources={sandbox: 3}"])
    with pytest.raises(ConfigError, match="3 'sandbox' in all, the cluster has 2"):
        placement.check_fits(cfg, ray.cluster_resources())


def _prompts():
    from posttrain.trainer.tasks import TaskStream

    tasks = TaskStream(load_config(CONFIG, [WARM_DOMAINS]).domains, seed=5).next(3)
    return [t.prompt for t in tasks]


def _params():
    from posttrain.inference.base import SamplingParams

    return SamplingParams(n=2, max_new_tokens=5, temperature=1.5, seed=11, prompt_seeds=(4, 5, 6))


@pytest.mark.slow  # 2 more engine processes: ~40 s at load 10
def test_engine_group_samples_like_one_engine_over_both_transports(cluster, warm_dir):
    from posttrain.distributed.engine_group import EngineGroup, start_engines
    from posttrain.inference.hf import HFBackend

    cfg = load_config(CONFIG, [f"model.path={warm_dir}", WARM_DOMAINS])
    model, tok = warm_policy()
    engines = start_engines(cfg.placement.engines, cfg, "/nonexistent")  # 2 HF engines
    local = HFBackend(copy.deepcopy(model).eval(), tok, policy_version=0)
    for transport, version in (("object_store", 4), ("broadcast", 7)):
        group = EngineGroup(engines, model, tok, transport=transport)
        state = {k: v + 0.01 * version for k, v in model.state_dict().items()}
        group.load_weights(version, state)
        local.load_weights(version, state)
        assert group.versions() == [version, version]
        got, want = group.generate(_prompts(), _params()), local.generate(_prompts(), _params())
        assert [[c.policy_version for c in row] for row in got] == [[version] * 2] * 3
        # per-prompt seeds: the samples do not depend on how the prompts were split
        assert [[c.token_ids_T for c in row] for row in got] == [[c.token_ids_T for c in row] for row in want]
        group.close()
    for e in engines:
        ray.kill(e)


def test_sandbox_hosts_run_the_leased_sandboxes(cluster):
    from posttrain.core.config import ActorGroupSpec
    from posttrain.distributed.sandbox_hosts import RemoteSandboxPool, start_sandbox_hosts
    from posttrain.envs.tool_env import pool_lease, use_pool

    hosts = start_sandbox_hosts(ActorGroupSpec(count=1, resources={"sandbox": 1}), pool_size=2)
    pool = RemoteSandboxPool(hosts)
    with use_pool(pool), pool_lease()() as sb:  # what every tool env and sandboxed verifier does
        sb.write_file("x.txt", "placed")
        res = sb.exec(["cat", "x.txt"])
        assert res.status == "ok" and res.stdout.strip() in ("placed", b"placed")
        assert sb.read_file("x.txt") == b"placed"
        with pytest.raises(Exception):
            sb.read_file("missing.txt")  # the host's error comes back to the caller
    host_pid = ray.get(hosts[0].__ray_call__.remote(lambda self: __import__("os").getpid()))
    assert host_pid != __import__("os").getpid()
    m = pool.metrics()
    assert m["sandbox/remote_calls"] >= 4 and m["sandbox/hosts"] == 1 and m["sandbox/in_use"] == 0
    ray.kill(hosts[0])


def test_placed_run_trains_on_two_ranks_with_engine_actors(cluster, warm_dir, tmp_path):
    from safetensors.torch import load_file

    cfg = load_config(CONFIG, [f"model.path={warm_dir}", WARM_DOMAINS, "rl.steps=2", "rl.temperature=1.0",
                               "rl.lr=0.01", "placement.engines.count=1"])
    summary = placement.run_placement(cfg, tmp_path / "run")
    assert summary["rl_steps"] == 2 and summary["world_size"] == 2 and summary["backend"] == "gloo"
    placed = summary["placement"]
    assert placed["trainer"]["count"] == 2 and placed["engines"]["count"] == 1
    assert placed["sandboxes"]["resources"] == {"sandbox": 1.0} and len(placed["sandboxes"]["nodes"]) == 1
    rows = [json.loads(ln) for ln in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and all(r["dist/world_size"] == 2.0 for r in rows)
    assert any(r["loss/grad_norm"] > 0 for r in rows)  # rewards varied: a real policy gradient
    assert [r["rollout/policy_version"] for r in rows] == [1.0, 2.0]
    files = (tmp_path / "run" / "model").glob("*.safetensors")
    trained = {k: v for f in files for k, v in load_file(f).items()}
    start, _ = warm_policy()
    assert any(not torch.equal(v, trained[k]) for k, v in start.state_dict().items() if k in trained)
    assert (tmp_path / "run" / "dcp" / "step-2").is_dir()


@pytest.mark.parametrize("name", ["one-gpu-node", "multi-node", "cpu-placement"])
def test_shipped_placement_configs_validate(name):
    """The GPU configs (not yet run on GPUs) pass every check but the vLLM install here."""
    from posttrain.trainer.validate import check_run_config

    cfg = load_config(ROOT / "configs" / "scale" / f"{name}.yaml")
    assert cfg.placement.enabled
    try:
        check_run_config(cfg)
    except ConfigError as exc:
        lines = str(exc).splitlines()[1:]
        assert cfg.inference.backend == "vllm" and len(lines) == 1, str(exc)
        assert lines[0].strip().startswith('inference.backend: got "vllm"; vllm is not importable')
    check_run_config(load_config(ROOT / "configs" / "scale" / f"{name}.yaml", ["inference.backend=hf"]))


@pytest.mark.slow  # a second placed run (~40-60 s at load 10)
def test_placed_episodes_run_their_sandboxes_on_the_sandbox_actors(cluster, tmp_path):
    """Terminal episodes lease a sandbox each: in a placed run they are made and used on the
    sandbox host, not in trainer rank 0 (the random tiny model needs 2k positions for them)."""
    cfg = load_config(CONFIG, ["domains=[{id: terminal.line_endings-v1, difficulties: [1]}]",
                               "model.tiny.max_position_embeddings=4096", "rl.steps=1",
                               "rl.prompts_per_step=2", "rl.group_size=2", "episode.max_turns=2",
                               "placement.engines.count=1"])
    summary = placement.run_placement(cfg, tmp_path / "run")
    assert summary["rl_steps"] == 1
    hosts = summary["placement"]["sandboxes"]
    assert hosts["count"] == 1 and hosts["metrics"]["sandbox/hosts"] == 1
    assert hosts["metrics"]["sandbox/created"] >= 1 and hosts["metrics"]["sandbox/remote_calls"] >= 4
