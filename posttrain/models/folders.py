"""What kind of model a local folder holds, read from its ``config.json`` (no torch import).

Why a module of its own: the config check (:mod:`posttrain.trainer.validate`) must tell a
vision-language ``model.path`` from a causal LM before any work starts, and it never imports
torch (a typo must fail in well under a second).
"""

from __future__ import annotations

import json
from pathlib import Path


def is_vision_folder(path: str | Path) -> bool:
    """True when the folder's ``config.json`` describes a vision-language model (it has a
    ``vision_config``: LLaVA, Idefics3, Qwen2-VL and the built-in tiny VLM all do)."""
    cfg = Path(path).expanduser() / "config.json"
    try:
        return "vision_config" in json.loads(cfg.read_text())
    except (OSError, ValueError):
        return False
