"""A small synthetic image-observation env for the vision tests (tests only, not a domain).

Each episode shows a filled circle of one colour on reset and, after the first answer, a
second image (a square of another colour) with a new question: two turns, a new image after
each step. ``verify`` scores whether the last answer names the last colour.
"""

import base64
import io

from PIL import Image, ImageDraw

from posttrain.core.types import Observation, Score, StepResult, Task

COLOURS = ("red", "green", "blue", "black")
DOMAIN = "test.vision_colours-v1"


def png(colour: str, shape: str = "circle", size: int = 40) -> str:
    im = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(im)
    box = (6, 6, size - 6, size - 6)
    (draw.ellipse if shape == "circle" else draw.rectangle)(box, fill=colour)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def task(seed: int) -> Task:
    first, second = COLOURS[seed % 4], COLOURS[(seed + 1) % 4]
    return Task(domain=DOMAIN, seed=seed, difficulty=1,
                prompt=({"role": "user", "content": "Colour?"},),
                public={"images": [png(first)]}, hidden={"answers": [first, second]})


class ColourEnv:
    """Two turns; each observation carries one new image (see the module docstring)."""

    def __init__(self, t: Task):
        self.task = t
        self.shown: list[str] = []

    def reset(self) -> Observation:
        self.shown = list(self.task.public["images"])
        return Observation(messages=tuple(self.task.prompt), images=tuple(self.shown))

    def step(self, action) -> StepResult:
        if len(self.shown) == 1:
            img = png(self.task.hidden["answers"][1], "square")
            self.shown.append(img)
            return StepResult(Observation(messages=({"role": "user", "content": "And now?"},),
                                          images=(img,)), 0.0, False)
        return StepResult(None, 0.0, True)

    def verify(self, trajectory) -> Score:
        answer = trajectory.turns[-1].action.text.strip() if trajectory.turns else ""
        return Score(float(answer == self.task.hidden["answers"][1]))
