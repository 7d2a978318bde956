"""Screenshots for the screen-state domains: a terminal window and a web form.

What it is: :func:`terminal_png` (lines of text on a dark terminal, monospaced, a title bar)
and :func:`form_png` (a form: a title, one row per field with its label, its id tag, its
current value or placeholder, options with their notes, error lines in red, a Submit button
and a status banner), both at a fixed size through :mod:`posttrain.domains._vision_kit`.

Guarantees: fixed pixel sizes (:data:`TERMINAL_SIZE`, :data:`FORM_SIZE`); deterministic
(bundled DejaVu fonts, no anti-aliasing settings that vary); text that does not fit is cut at
the window edge, never wrapped into another row (a row is one line of the screen).
Does not: decide what is on the screen (the domain modules do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from posttrain.domains._vision_kit import canvas, font, image_png

TERMINAL_SIZE = (680, 420)
FORM_SIZE = (560, 440)
TERM_ROWS = 24
_LINE = 16
_BG, _FG, _DIM = (24, 26, 33), (220, 222, 228), (140, 200, 140)


def terminal_png(lines: Sequence[str], title: str = "terminal") -> bytes:
    """The last ``TERM_ROWS`` lines on a terminal; lines starting with ``$`` in green."""
    w, h = TERMINAL_SIZE
    img, d = canvas(w, h, _BG)
    d.rectangle([0, 0, w, 22], fill=(58, 60, 68))
    for k, colour in enumerate(((237, 95, 87), (245, 190, 80), (98, 197, 84))):
        d.ellipse([8 + 18 * k, 6, 18 + 18 * k, 16], fill=colour)
    d.text((70, 4), title, fill=(230, 230, 230), font=font(12, mono=False))
    mono = font(13)
    for r, line in enumerate(list(lines)[-TERM_ROWS:]):
        d.text((8, 28 + r * _LINE), line, fill=_DIM if line.startswith("$") else _FG, font=mono)
    return image_png(img)


@dataclass(frozen=True)
class FieldView:
    """One form row as drawn: ``value`` (None: show the placeholder), options (name, note)."""

    fid: str
    label: str
    value: str | None = None
    placeholder: str = ""
    options: tuple[tuple[str, str], ...] = ()
    error: str = ""


@dataclass(frozen=True)
class FormView:
    title: str
    fields: tuple[FieldView, ...]
    banner: str = ""  # shown above the button: success (green) or a form-level error (red)
    ok: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def form_png(view: FormView) -> bytes:
    """A screenshot of ``view`` (fixed size; rows with options are taller)."""
    w, h = FORM_SIZE
    img, d = canvas(w, h, (242, 243, 246))
    d.rectangle([0, 0, w, 30], fill=(44, 62, 92))
    d.text((12, 7), view.title, fill=(255, 255, 255), font=font(14, mono=False, bold=True))
    sans, small, mono = font(12, mono=False), font(10, mono=False), font(12)
    y = 42
    for f in view.fields:
        d.text((14, y + 4), f.label, fill=(20, 20, 20), font=sans)
        d.text((14, y + 20), f"id: {f.fid}", fill=(120, 120, 120), font=small)
        if f.options:
            for k, (name, note) in enumerate(f.options):
                yy = y + 2 + 18 * k
                chosen = f.value == name
                d.ellipse([170, yy + 3, 180, yy + 13], outline=(60, 60, 60),
                          fill=(44, 62, 92) if chosen else (255, 255, 255))
                d.text((188, yy), f"{name}  {note}", fill=(20, 20, 20), font=sans)
            rows = max(2, len(f.options))
            y_next = y + 18 * rows + 8
        else:
            d.rectangle([170, y, 530, y + 26], fill=(255, 255, 255), outline=(150, 150, 160))
            shown, colour = (f.value, (10, 10, 10)) if f.value else (f.placeholder, (160, 160, 160))
            d.text((176, y + 6), shown[:40], fill=colour, font=mono)
            y_next = y + 38
        if f.error:
            d.text((170, y_next - 8), f.error, fill=(200, 30, 30), font=small)
            y_next += 8
        y = y_next
    for note in view.notes:
        d.text((14, y), note, fill=(80, 80, 80), font=small)
        y += 14
    if view.banner:
        d.text((14, y + 4), view.banner, fill=(30, 140, 60) if view.ok else (200, 30, 30), font=sans)
    d.rectangle([w - 110, h - 44, w - 14, h - 14], fill=(44, 62, 92))
    d.text((w - 86, h - 37), "Submit", fill=(255, 255, 255), font=font(13, mono=False, bold=True))
    return image_png(img)
