"""The report's "Images the policy saw" section: thumbnails of visual episodes' observations.

What it is: from ``samples.jsonl`` (each :class:`~posttrain.eval.samples.SampleRecord` lists
the ``sha256:`` references of the images its episode saw) and the evaluation's ``images/``
store, a JSON document (``thumbnails.json``: per shown sample its item, sample index, reward,
success and image references) and the HTML cards that show it — every image inline as a
``data:`` URI (the page stays self-contained), the reward a ``data-path`` cell like every
other number of the reports.

Guarantees: at most ``limit`` samples are shown, failures first (what a reviewer looks at),
then in file order; a missing or corrupted image file shows as a labelled placeholder, never
a broken ``<img>``; an evaluation without images has no section (None).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from posttrain.core.images import DATA_URL_PREFIX, ImageStore

from . import html as H
from .samples import SampleRecord

THUMB_CSS = ".thumbs img{width:96px;height:96px;object-fit:contain;image-rendering:pixelated;" \
            "margin:2px}.thumbs .card{display:inline-block;vertical-align:top;max-width:420px}"


def thumbnails_data(records: Sequence[SampleRecord], limit: int = 24) -> list[dict[str, Any]]:
    """The samples the section shows (failures first) with their image references."""
    visual = [r for r in records if r.images]
    shown = sorted(visual, key=lambda r: r.success)[:limit]  # stable: file order within each
    return [{"item": r.item, "sample": r.sample, "reward": r.reward, "success": r.success,
             "images": list(r.images)} for r in shown]


def _img(store: ImageStore, ref: str, alt: str) -> str:
    try:
        return f'<img alt="{H.esc(alt)}" data-image="{H.esc(ref)}" src="{DATA_URL_PREFIX}{store.get(ref)}">'
    except ValueError:
        return f'<span class="muted">({H.esc(alt)}: image {H.esc(ref[:19])} missing)</span>'


def thumbnails_section(data: list[dict[str, Any]], images_dir: str | Path) -> str | None:
    """The section's HTML (cards of thumbnails), or None when no sample saw an image."""
    if not data:
        return None
    store = ImageStore(images_dir)
    cards = []
    for i, s in enumerate(data):
        imgs = "".join(_img(store, ref, f"{s['item']} #{s['sample']} image {k + 1}")
                       for k, ref in enumerate(s["images"]))
        verdict = '<span class="okflag">passed</span>' if s["success"] else '<span class="flag">failed</span>'
        cards.append(f'<div class="card"><b>{H.esc(s["item"])}</b> sample {H.esc(s["sample"])} · '
                     f'reward {H.num(s["reward"], f"thumbnails/{i}/reward", tag="span")} · {verdict}'
                     f"<br>{imgs}</div>")
    note = (f'<p class="muted">{len(data)} visual samples, failures first; each image as the '
            "policy received it (scaled for display).</p>")
    return H.section("Images the policy saw", f"<style>{THUMB_CSS}</style>{note}"
                     f'<div class="thumbs">{"".join(cards)}</div>', "thumbnails")
