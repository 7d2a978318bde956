"""Shared set-up for the serve tests: two tiny models saved to disk and a version registry.

Two versions with different weights (seeds 0 and 1) saved with ``save_pretrained``; the
tests start a real uvicorn server in a thread on a free loopback port (``serve_helpers``),
the same app ``posttrain serve`` runs.
"""

from __future__ import annotations

import pytest
import torch

from posttrain.core.config import TinyModelConfig
from posttrain.models.loading import load_model, save_model
from posttrain.models.tiny import build_tiny_model
from posttrain.models.versions import VersionRegistry

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def folders(tmp_path_factory):
    """``{"v1": folder of seed 0, "v2": folder of seed 1}``: two versions, different weights."""
    root = tmp_path_factory.mktemp("serve_models")
    out = {}
    for name, seed in (("v1", 0), ("v2", 1)):
        # 1024 positions: a tool episode's prompt (tool specs included) is ~550 tokens.
        model, tok = build_tiny_model(TinyModelConfig(max_position_embeddings=1024), seed=seed)
        out[name] = str(save_model(model, tok, root / name))
    return out


@pytest.fixture(scope="session")
def local(folders):
    """In-process HF backends over the same folders: what the server must reproduce."""
    from posttrain.inference.hf import HFBackend

    return {name: HFBackend(*load_model(path)) for name, path in folders.items()}


@pytest.fixture
def registry(tmp_path, folders):
    """A registry with foundation ``base`` and post-training versions v1 and v2 (same base)."""
    path = tmp_path / "versions.sqlite"
    with VersionRegistry(path) as reg:
        reg.register_foundation("base", folders["v1"])
        for vid in ("v1", "v2"):
            reg.register_posttrain(folders[vid], base_id="base", run_id=f"run-{vid}",
                                   config_hash="c0", version_id=vid)
    return path
