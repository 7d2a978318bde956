"""A training run owns its sandbox pool: built from the ``sandbox:`` section, closed at the end."""

import pytest

from posttrain.core.config import load_config
from posttrain.core.errors import ConfigError
from posttrain.envs.tool_env import pool_lease, shared_pool
from posttrain.trainer.pipeline import _run_pool
from posttrain.trainer.validate import check_run_config


def test_the_run_pool_serves_the_run_and_is_closed_after():
    cfg = load_config(None, ["sandbox.pool_size=6", "sandbox.backend=process",
                             "episode.max_sandbox_episodes=3"])
    before = shared_pool()
    with _run_pool(cfg) as pool:
        assert shared_pool() is pool and pool.max_total == 6 and pool.backend == "process"
        with pool_lease()() as sb:  # what every domain's env leases through
            assert sb.exec("echo hi").stdout.strip() == "hi"
            assert pool.metrics()["sandbox/in_use"] == 1
    assert pool._closed and shared_pool() is before


def test_a_pool_too_small_for_the_admission_cap_is_a_config_error():
    cfg = load_config(None, ["sandbox.pool_size=8", "episode.max_sandbox_episodes=8"])
    with pytest.raises(ConfigError, match=r"sandbox.pool_size: got 8 .* allowed: >= 16"):
        check_run_config(cfg)
    with pytest.raises(ConfigError, match="sandbox.backend"):
        load_config(None, ["sandbox.backend=docker"])
