"""The sharded entry's config rules and backend choice, before any process starts."""

from __future__ import annotations

import pytest

from posttrain.core.config import RunConfig
from posttrain.core.errors import ConfigError


def test_sharded_rules_listed_in_one_error():
    from posttrain.trainer.validate import check_run_config, check_sharded_config

    cfg = RunConfig.model_validate({"rl": {"max_policy_lag": 1}, "sft": {"steps": 3},
                                    "distributed": {"micro_batch_tokens": 64}})
    check_run_config(cfg)  # valid for the single-process pipeline
    with pytest.raises(ConfigError) as err:
        check_sharded_config(cfg)
    text = str(err.value)
    assert "rl.max_policy_lag: got 1" in text and "sft.steps/dpo.steps: got 3/0" in text
    ok = RunConfig.model_validate({"sft": {"steps": 0}, "distributed": {"backend": "gloo"}})
    assert check_sharded_config(ok) is ok


def test_distributed_fields_are_checked_on_load():
    from pydantic import ValidationError

    for bad in ({"backend": "mpi"}, {"micro_batch_tokens": -1}, {"ranks": 2}):
        with pytest.raises(ValidationError):
            RunConfig.model_validate({"distributed": bad})


def test_backend_choice_by_device():
    import torch

    from posttrain.trainer.fsdp.dist import choose_backend

    assert choose_backend("auto") == ("nccl" if torch.cuda.is_available() else "gloo")
    assert choose_backend("gloo") == "gloo"
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="CUDA is not available"):
            choose_backend("nccl")


def test_one_process_is_plain_rank_zero(monkeypatch):
    import torch

    from posttrain.trainer.fsdp.dist import init_distributed, shard_model

    for var in ("WORLD_SIZE", "MASTER_PORT", "RANK"):
        monkeypatch.delenv(var, raising=False)
    info = init_distributed("auto")
    assert (info.rank, info.world_size, info.backend) == (0, 1, None)
    m = torch.nn.Linear(2, 2)
    assert shard_model(m) is m  # no process group: the model is trained as it is
