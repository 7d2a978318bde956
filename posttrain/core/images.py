"""Images in observations and chat messages, and their content-addressed store on disk.

What it is: the one place that knows how an image travels through posttrain.

- In an :class:`~posttrain.core.types.Observation`, ``images`` are base64-encoded PNG
  strings that belong to the observation's newest message.
- In a chat prompt (what a backend receives), they are OpenAI-style content parts of that
  message: ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``,
  placed before its text (:func:`attach_images`). :func:`prompt_images` lists the images of
  a prompt in the order a processor sees them.
- On disk (``groups.jsonl`` and friends) an image is stored once, as ``<sha256>.png`` in an
  :class:`ImageStore`, and every place that held it holds ``"sha256:<hex>"`` instead
  (:func:`externalize` / :func:`internalize`).

Guarantees: ``internalize(externalize(d, store), store) == d`` for any JSON document ``d``
(bit for bit: the stored file is the decoded PNG, and base64 of canonical input is
canonical; non-canonical base64 is refused at :meth:`ImageStore.put` with a clear error);
an image is written once however many rows refer to it; message text is untouched.

What it does not do: decode or validate pixels (the processor does), or other formats than
PNG in ``Observation.images`` (a data URL of another type passes through parts unchanged).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

DATA_URL_PREFIX = "data:image/png;base64,"
REF_PREFIX = "sha256:"
# Record fields that hold a list of base64 PNGs (Observation.images, Completion.prompt_images).
IMAGE_LIST_KEYS = frozenset({"images", "prompt_images"})


def image_part(png_b64: str) -> dict[str, Any]:
    """The OpenAI-style content part of one base64 PNG."""
    return {"type": "image_url", "image_url": {"url": DATA_URL_PREFIX + png_b64}}


def part_image(part: Any) -> str | None:
    """The base64 PNG of an image content part, or None for any other part."""
    if not isinstance(part, Mapping) or part.get("type") != "image_url":
        return None
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else url
    if isinstance(url, str) and url.startswith(DATA_URL_PREFIX):
        return url[len(DATA_URL_PREFIX):]
    return None


def message_images(message: Mapping[str, Any]) -> list[str]:
    """The base64 PNGs of one message's image parts, in order."""
    content = message.get("content")
    if not isinstance(content, (list, tuple)):
        return []
    return [img for img in map(part_image, content) if img is not None]


def prompt_images(messages: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """Every image of a prompt, in message order then part order (the processor's order)."""
    return tuple(img for m in messages for img in message_images(m))


def content_text(content: Any) -> str:
    """The text of a message content: the string, or its text parts joined (images skipped)."""
    if isinstance(content, (list, tuple)):
        return "".join(str(p.get("text") or "") for p in content
                       if isinstance(p, Mapping) and p.get("type") == "text")
    return "" if content is None else str(content)


def attach_images(messages: Sequence[Mapping[str, Any]], images: Sequence[str]) -> list[dict[str, Any]]:
    """``messages`` with ``images`` as content parts of the newest message (before its text).

    No images: the messages unchanged (plain dicts). No message: a user message is made to
    carry them, so an image-only observation still reaches the policy."""
    out = [dict(m) for m in messages]
    if not images:
        return out
    if not out:
        out.append({"role": "user", "content": ""})
    last = out[-1]
    content = last.get("content")
    parts = list(content) if isinstance(content, (list, tuple)) else (
        [{"type": "text", "text": str(content)}] if content else [])
    last["content"] = [image_part(img) for img in images] + parts
    return out


def image_ref(png_b64: str) -> str:
    """``"sha256:<hex>"`` of a base64 PNG's bytes: its name in any :class:`ImageStore`."""
    return REF_PREFIX + hashlib.sha256(base64.b64decode(png_b64)).hexdigest()


def trajectory_images(trajectory: Any) -> tuple[str, ...]:
    """Every distinct image an episode's observations showed, in the order they came."""
    seen: dict[str, None] = {}
    for turn in trajectory.turns:
        obs = turn.observation
        for img in (*obs.images, *prompt_images(obs.messages)):
            seen.setdefault(img, None)
    return tuple(seen)


class ImageStore:
    """A folder of PNGs named by the sha256 of their bytes; each image is written once."""

    def __init__(self, root: str | Path):
        self.root = Path(root)  # created by the first put: a text-only run leaves no folder

    def path(self, digest: str) -> Path:
        return self.root / f"{digest}.png"

    def put(self, png_b64: str) -> str:
        """Store one base64 PNG; returns ``"sha256:<hex>"``."""
        try:
            raw = base64.b64decode(png_b64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"image is not valid base64 ({exc}); Observation.images holds "
                             "base64-encoded PNG bytes") from exc
        if base64.b64encode(raw).decode("ascii") != png_b64:
            raise ValueError("image base64 is not canonical (line breaks or stray padding); "
                             "encode with base64.b64encode(png_bytes).decode()")
        digest = hashlib.sha256(raw).hexdigest()
        path = self.path(digest)
        if not path.exists():  # content-addressed: an existing file already holds these bytes
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(raw)
            os.replace(tmp, path)
        return REF_PREFIX + digest

    def get(self, ref: str) -> str:
        """The base64 PNG of a ``"sha256:<hex>"`` reference (its bytes are checked)."""
        digest = ref[len(REF_PREFIX):] if ref.startswith(REF_PREFIX) else ref
        path = self.path(digest)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"image {ref} is not in the image store {self.root}") from exc
        if hashlib.sha256(raw).hexdigest() != digest:
            raise ValueError(f"image file {path} does not hash to its name (corrupted)")
        return base64.b64encode(raw).decode("ascii")


def _map_images(data: Any, entry, url, in_images: bool = False) -> Any:
    """``data`` with every ``images`` list entry mapped by ``entry`` and every image part's URL
    mapped by ``url`` (walks dicts and lists; everything else is kept as it is)."""
    if isinstance(data, Mapping):
        if data.get("type") == "image_url" and isinstance(data.get("image_url"), Mapping):
            return {**data, "image_url": {**data["image_url"], "url": url(data["image_url"].get("url"))}}
        return {k: _map_images(v, entry, url, in_images=(k in IMAGE_LIST_KEYS)) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        if in_images:
            return [entry(v) if isinstance(v, str) else v for v in data]
        return [_map_images(v, entry, url) for v in data]
    return data


def externalize(data: Any, store: ImageStore) -> Any:
    """A JSON document (e.g. ``to_dict(group)``) with every image replaced by its store reference."""
    def url(u: Any) -> Any:
        if isinstance(u, str) and u.startswith(DATA_URL_PREFIX):
            return store.put(u[len(DATA_URL_PREFIX):])
        return u
    return _map_images(data, store.put, url)


def internalize(data: Any, store: ImageStore) -> Any:
    """The inverse of :func:`externalize`: references replaced by the stored base64 PNGs."""
    def entry(v: str) -> str:
        return store.get(v) if v.startswith(REF_PREFIX) else v

    def url(u: Any) -> Any:
        if isinstance(u, str) and u.startswith(REF_PREFIX):
            return DATA_URL_PREFIX + store.get(u)
        return u
    return _map_images(data, entry, url)
