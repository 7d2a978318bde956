"""The kit of visual domains: deterministic PNGs, visual tasks, and the two domain records.

What it is:
- drawing: :func:`chart_figure` / :func:`figure_png` (a matplotlib Agg figure at a fixed size,
  DPI and font, saved without metadata) and :func:`canvas` / :func:`image_png` (a Pillow RGB
  canvas with the DejaVu fonts matplotlib ships), :func:`b64` and :func:`png_size`;
- :func:`visual_task`: a Task whose images (base64 PNG) are in ``public["images"]``, which
  :class:`~posttrain.envs.base.SingleTurnEnv` shows with the prompt;
- :class:`SeeDomain`: a single-turn visual domain as a record of functions (the
  ``TreeDomain`` shape: composition, no hooks to override);
- :class:`LookDomain` and :class:`LookEnv`: a multi-turn "look and correct" domain: a
  :class:`~posttrain.envs.tool_env.ToolEnv` over simulated tools that change the episode's
  ``state``, and after every tool turn a *new* image drawn from that state
  (``Observation.images``); a turn without a tool call ends the episode.

Guarantees: the same ``(seed, level)`` gives byte-identical images in any process on a given
install (no wall clock, no hash-ordered iteration, fixed DPI and bundled fonts, PNGs written
without timestamps or software tags); every domain built here declares ``vision = True``.
Does not: decide what a task asks or how it is scored (each domain module does).
"""

from __future__ import annotations

import base64
import io
import random
import re
import struct
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Completion, Observation, Score, StepResult, Task, Trajectory
from posttrain.domains._helpers import make_task
from posttrain.envs.base import task_images
from posttrain.envs.tool_env import ToolEnv, spec_name

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- drawing
def b64(png: bytes) -> str:
    """Canonical base64 text of PNG bytes (the form ``Observation.images`` holds)."""
    return base64.b64encode(png).decode("ascii")


def png_size(image_b64: str) -> tuple[int, int]:
    """(width, height) of a base64 PNG; ValueError when it is not a PNG."""
    raw = base64.b64decode(image_b64, validate=True)
    if raw[:8] != PNG_MAGIC or raw[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    w, h = struct.unpack(">II", raw[16:24])
    return int(w), int(h)


def chart_figure(width_px: int, height_px: int, dpi: int = 100) -> Any:
    """A matplotlib Figure on its own Agg canvas (no pyplot state: safe in threads)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


# Bundled with matplotlib, so present wherever the domains run: system fonts would make the
# same task draw differently on two machines.
_RC = {"font.family": "DejaVu Sans", "font.size": 9.0, "axes.titlesize": 10.0,
       "svg.hashsalt": "posttrain", "path.simplify": False}


def figure_png(draw: Callable[[Any], None], width_px: int, height_px: int, dpi: int = 100) -> bytes:
    """PNG bytes of a figure ``draw(fig)`` fills, at exactly ``width_px`` × ``height_px``."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = chart_figure(width_px, height_px, dpi)
        draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


@lru_cache(maxsize=None)
def font(size: int, mono: bool = True, bold: bool = False) -> Any:
    """A DejaVu (Sans or Sans Mono) Pillow font from matplotlib's bundled files."""
    import matplotlib
    from PIL import ImageFont

    name = "DejaVuSans" + ("Mono" if mono else "") + ("-Bold" if bold else "") + ".ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


def canvas(width: int, height: int, color: tuple[int, int, int] = (255, 255, 255)) -> tuple[Any, Any]:
    """A Pillow RGB image and its ImageDraw."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), color)
    return img, ImageDraw.Draw(img)


def image_png(img: Any) -> bytes:
    """PNG bytes of a Pillow image (no metadata chunks: the bytes depend on the pixels only)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


# --------------------------------------------------------------------------- answers
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)
MAX_ANSWER_CHARS = 200


def one_answer(text: str) -> str | None:
    """The final answer: the one ``<answer>`` block, or the whole (short) text without tags.

    None for several blocks (hedging between candidates) or an answer longer than
    ``MAX_ANSWER_CHARS``: a visual answer is a number, a label or one command.
    """
    blocks = _ANSWER.findall(text or "")
    if len(blocks) > 1:
        return None
    got = (blocks[0] if blocks else (text or "")).strip()
    return got if len(got) <= MAX_ANSWER_CHARS else None


# --------------------------------------------------------------------------- tasks
def visual_task(domain_id: str, difficulty: int, prompt: str, images: Sequence[bytes], *,
                answer: Any = None, public: Mapping[str, Any] | None = None,
                hidden: Mapping[str, Any] | None = None) -> Task:
    """A Task whose PNG ``images`` (bytes) go in ``public["images"]`` as base64 strings."""
    pub = {"images": [b64(p) for p in images], **dict(public or {})}
    return make_task(domain_id, difficulty, prompt, answer=answer, public=pub, hidden=hidden,
                     metadata={"vision": True})


# --------------------------------------------------------------------------- single turn
@dataclass(frozen=True)
class SeeDomain:
    """A single-turn visual domain: read the image(s), give one answer."""

    id: str
    family: str
    build: Callable[[random.Random, int], Task]
    answer: Callable[[Task], str]
    scorer: Callable[[Task, str], Score]
    own_probes: Callable[[Task], dict[str, str]]
    difficulties: tuple[int, ...] = (1, 2, 3)
    description: str = ""
    env_kind: str = "single_turn"
    vision: bool = True

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return self.build(rng, difficulty)

    def solve(self, task: Task) -> str:
        return self.answer(task)

    def score(self, task: Task, answer: str) -> Score:
        return self.scorer(task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return self.own_probes(task)


# --------------------------------------------------------------------------- multi turn
class LookEnv:
    """A ToolEnv whose observations carry a new image of its ``state`` after every tool turn.

    ``draw(task, state) -> list[bytes]`` renders the current state; the first observation
    shows the task's own images (``public["images"]``: :class:`LookDomain` puts the drawing
    of the initial state there, so ``domains sample`` shows what the policy first sees).
    Everything else (the tool-call format, ``info``, checkpoints, ``verify``) is the inner
    ToolEnv's, reached through attribute delegation.
    """

    def __init__(self, inner: ToolEnv, draw: Callable[[Task, dict[str, Any]], Sequence[bytes]],
                 retool: Callable[[dict[str, Any]], list[Any]] | None = None):
        self.inner = inner
        self._draw = draw
        self._retool = retool

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copy/unpickle): no delegation loop
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _images(self) -> tuple[str, ...]:
        return tuple(b64(p) for p in self._draw(self.inner.task, self.inner.state))

    def reset(self) -> Observation:
        return replace(self.inner.reset(), images=task_images(self.inner.task))

    def step(self, action: Completion) -> StepResult:
        res = self.inner.step(action)
        if res.observation is None:
            return res
        return replace(res, observation=replace(res.observation, images=self._images()))

    def verify(self, trajectory: Trajectory) -> Score:
        return self.inner.verify(trajectory)

    def close(self) -> None:
        self.inner.close()

    def restore_state(self, saved: dict[str, Any]) -> None:
        # the tools hold the state dict they mutate: rebind them to the restored copy
        self.inner.restore_state(saved)
        if self._retool is not None:
            self.inner.tools = {spec_name(t.spec): t for t in self._retool(self.inner.state)}


@dataclass(frozen=True)
class LookDomain:
    """A multi-turn visual domain assembled from its parts.

    ``build(rng, d) -> Task``; ``start(task) -> state`` (a fresh dict per episode, built from
    public *and* hidden data: the env is trusted, the policy sees only the drawings);
    ``tools(state) -> [FunctionTool]`` (tools mutate ``state``); ``draw(task, state) -> [PNG
    bytes]``; ``judge(task, state, answer) -> Score`` on the final state (``answer`` is the
    final turn's text); ``reference(task) -> [action texts]`` ending with the final answer.
    """

    id: str
    family: str
    build: Callable[[random.Random, int], Task]
    start: Callable[[Task], dict[str, Any]]
    tools: Callable[[dict[str, Any]], list[Any]]
    draw: Callable[[Task, dict[str, Any]], Sequence[bytes]]
    judge: Callable[[Task, dict[str, Any], str | None], Score]
    reference: Callable[[Task], list[str]]
    own_probes: Callable[[Task], dict[str, list[str] | str]]
    max_turns: int = 8
    difficulties: tuple[int, ...] = (1, 2, 3)
    description: str = ""
    env_kind: str = "tool"
    vision: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        task = self.build(rng, difficulty)
        first = [b64(p) for p in self.draw(task, self.start(task))]
        return replace(task, public={**dict(task.public), "images": first},
                       metadata={**dict(task.metadata), "vision": True})

    def make_env(self, task: Task) -> LookEnv:
        state = self.start(task)

        def verify(env: ToolEnv, trajectory: Trajectory) -> Score:
            return self.judge(env.task, env.state, env.answer)

        inner = ToolEnv(task, self.tools(state), None, verify, max_turns=self.max_turns,
                        state=state, verifier_version=self.id)
        return LookEnv(inner, self.draw, self.tools)

    def reference_actions(self, task: Task) -> list[str]:
        return list(self.reference(task))

    def solve(self, task: Task) -> str:
        return self.reference(task)[-1]

    def probes(self, task: Task) -> dict[str, list[str] | str]:
        return self.own_probes(task)
