"""Which backends read images, and the error a text-only model gives on an image prompt.

A backend that reads images declares ``vision = True`` (the vision-language backend
``vlm``, the OpenAI-compatible backend — the server's model decides —, the fake backend and
the scripted policy, which read nothing). Any other backend (the text ``hf`` backend, the
``vllm`` backend over a text model) is text-only: the episode engine calls
:func:`check_images` before each policy call, so an image observation fails the episode
with an :class:`~posttrain.core.errors.InferenceError` naming the domain and the model,
instead of a chat template silently rendering the image parts as text.

Light module: no torch import.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from posttrain.core.errors import InferenceError
from posttrain.core.images import prompt_images


def reads_images(backend: Any) -> bool:
    """Whether ``backend`` declares that it reads image parts."""
    return bool(getattr(backend, "vision", False))


def model_label(backend: Any) -> str:
    """A name for the backend's model: its folder, else its class and model type."""
    name = getattr(backend, "model_name", None)
    if isinstance(name, str) and name:
        return name
    model = getattr(backend, "model", None)
    if isinstance(model, str) and model:
        return model
    config = getattr(model, "config", None)
    path = getattr(config, "_name_or_path", "") or getattr(config, "name_or_path", "")
    if path:
        return str(path)
    kind = getattr(config, "model_type", None)
    return f"{type(model).__name__}({kind})" if kind else type(model).__name__


def check_images(backend: Any, domain: str, messages: Sequence[Mapping[str, Any]]) -> None:
    """Raise when ``messages`` hold images and ``backend`` reads text only."""
    if reads_images(backend):
        return
    n = len(prompt_images(messages))
    if n:
        raise InferenceError(
            f"domain {domain!r} sends {n} image(s), but model {model_label(backend)!r} reads "
            f"text only (backend {type(backend).__name__}); use a vision-language model "
            "(backend 'vlm' over a folder with a processor, e.g. `posttrain foundation "
            "build-vision`) or an OpenAI-compatible server of one")
