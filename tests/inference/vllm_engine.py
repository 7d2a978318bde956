"""One real vLLM engine per test process, serving the built-in tiny model from a saved folder.

Starting an engine costs 20-40 s on a 2-core machine, so every vLLM test in a process shares
one. Tests that depend on the weights call ``reset_to(backend, seed)`` first: the engine is
shared, and a test that loaded other weights must not leak them into the next one.
Callers skip (``pytest.importorskip("vllm")``) before asking for it: in the main venv vllm is
not installed and the vllm tier runs in ``.venv-vllm`` (``make test-vllm``).
"""

from __future__ import annotations

import tempfile

from inference_helpers import tiny

from posttrain.models.loading import save_model

_ENGINE: dict = {}
MAX_LOGPROBS = 128  # >= the tiny vocabulary (105), so a call can return whole distributions


def shared_backend():
    """The process's VLLMBackend over tiny(seed=0), started on first use."""
    if "backend" not in _ENGINE:
        from posttrain.inference import make_backend

        folder = tempfile.mkdtemp(prefix="posttrain-vllm-tiny-")
        save_model(*tiny(0), folder)
        _ENGINE["backend"] = make_backend("vllm", model=folder, dtype="float32",
                                          max_model_len=256, max_logprobs=MAX_LOGPROBS)
    return _ENGINE["backend"]


def reset_to(backend, seed: int):
    """Load tiny(seed)'s weights into the shared engine; returns that HF model (the reference)."""
    model, _ = tiny(seed)
    backend.load_weights(backend.policy_version + 1, model.state_dict())
    return model
