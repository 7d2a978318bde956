"""Fixtures of the foundation tests: one real tiny build per session (foundation_helpers.TINY)."""

from __future__ import annotations

import pytest
from foundation_helpers import tiny_recipe


@pytest.fixture(scope="session")
def corpus_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus_cache")


@pytest.fixture(scope="session")
def tiny_build(tmp_path_factory, corpus_cache):
    """(out folder, foundation.json, registry path) of one real tiny build."""
    from posttrain.foundation.build import build_foundation

    root = tmp_path_factory.mktemp("tiny_build")
    out, registry = root / "foundation", root / "versions.sqlite"
    info = build_foundation(tiny_recipe(), out, cache_dir=corpus_cache, registry=registry,
                            progress=False)
    return out, info, registry
