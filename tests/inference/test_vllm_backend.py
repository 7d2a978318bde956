"""VLLMBackend cannot run here (no GPU, no vllm): only its missing-extra error is checked.

The backend's sampling, logprob and weight-loading paths are untested on this machine; run
test_backend_conformance.py against it on a GPU host.
"""

from __future__ import annotations

import sys

import pytest

from posttrain.core.errors import MissingExtraError
from posttrain.inference import make_backend


def test_missing_vllm_raises_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError, installed or not
    with pytest.raises(MissingExtraError) as info:
        make_backend("vllm", model="/nonexistent")
    assert info.value.extra == "vllm" and "pip install 'posttrain[vllm]'" in str(info.value)
