"""``async_rl.work_store``: the config field, and the pipeline through the SQLite store vs in memory."""

import json

import pytest
import yaml

from posttrain.core.config import load_config
from posttrain.core.errors import ConfigError
from posttrain.scheduler.ledger import OutcomeLedger
from posttrain.scheduler.store import WorkStore
from posttrain.trainer.pipeline import run_pipeline

CFG = {
    "run_name": "store", "seed": 3,
    "model": {"tiny": {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64}},
    "domains": [{"id": "math.add-v1", "difficulties": [1]}, {"id": "math.compare-v1", "difficulties": [1]}],
    "sft": {"steps": 4, "batch_size": 8},
    "rl": {"steps": 4, "prompts_per_step": 2, "group_size": 4, "max_new_tokens": 4, "checkpoint_every": 2,
           "lr": 0.01, "filter_zero_variance": False, "max_policy_lag": 1},
    # one job out at a time: each samples with the newest weights, so both runs are deterministic
    "async_rl": {"max_inflight": 1},
    "eval": {"heldout_per_domain": 2, "max_new_tokens": 4},
}


def _config(tmp_path, **async_rl):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**CFG, "async_rl": {**CFG["async_rl"], **async_rl}}))
    return load_config(path)


def test_a_bad_work_store_names_the_field_and_what_is_allowed(tmp_path):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, work_store="redis")
    assert "async_rl.work_store" in str(err.value) and "'memory' or 'sqlite'" in str(err.value)
    lag0 = load_config(None, ["async_rl.work_store=sqlite", "rl.max_policy_lag=0"])
    with pytest.raises(ConfigError, match=r"async_rl.work_store: got \"sqlite\" with rl.max_policy_lag 0"):
        run_pipeline(lag0, tmp_path / "never", show_progress=False)
    assert not (tmp_path / "never").exists()  # refused before any work


def _metrics(out):
    return [{k: v for k, v in json.loads(ln).items() if not k.startswith(("time", "async/store"))}
            for ln in (out / "metrics.jsonl").read_text().splitlines()]


def _groups(out):
    """groups.jsonl without the wall-clock timings each trajectory carries."""
    rows = [json.loads(ln) for ln in (out / "groups.jsonl").read_text().splitlines()]
    for row in rows:
        for t in row["trajectories"]:
            assert set(t.pop("timings")) >= {"generate_s", "env_s", "verify_s", "wall_s"}
    return rows


def test_the_store_trains_what_the_memory_path_trains(tmp_path):
    mem, sql = tmp_path / "memory", tmp_path / "sqlite"
    a = run_pipeline(_config(tmp_path), mem, show_progress=False)
    b = run_pipeline(_config(tmp_path, work_store="sqlite"), sql, show_progress=False)
    assert _metrics(mem) == _metrics(sql)  # every step, every metric but time/ and the store's own
    assert a["heldout_after"] == b["heldout_after"]
    memory_rows = [json.loads(ln) for ln in (mem / "tasks.jsonl").read_text().splitlines()]
    store = WorkStore(sql / "work.sqlite")
    assert OutcomeLedger(store).rows == memory_rows  # same tasks, outcomes, reasons and rewards
    assert not (sql / "tasks.jsonl").exists()
    assert store.counts() == {"queued": 0, "running": 0, "done": 4, "failed": 0}
    assert store.results(unacked_only=True) == []  # the final checkpoint holds every result
    assert _groups(mem) == _groups(sql)
