"""Small HTML building blocks for the reports: escaped text, numeric cells, tables, the page.

Every number a report shows is a ``<td>`` (or ``<span>``) with ``data-path`` — the
``/``-separated path of that number in the JSON document embedded in the page (and written
next to it) — and ``data-value`` (the full-precision value). A test (and a reader) can check
every figure on the page against the data. The page has no external resources: inline CSS,
images as ``data:`` URIs, the data as an inline ``application/json`` script.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any, Iterable, Sequence

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1180px;
color:#1b1f24;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;
padding-bottom:4px}.muted{color:#57606a}.meta{font-size:12px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:right}th{background:#f6f8fa}
td.l,th.l{text-align:left}td.total{font-weight:700}.ci{color:#57606a;font-size:11px}
.bad{background:#ffebe9}.good{background:#dafbe1}.warn{background:#fff8c5}
.flag{font-weight:600;color:#cf222e}.okflag{font-weight:600;color:#1a7f37}
img{max-width:100%;border:1px solid #d0d7de;margin:6px 0}
pre{background:#f6f8fa;padding:8px;white-space:pre-wrap;max-height:180px;overflow:auto;font-size:12px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;margin:8px 0}
"""

# Sets data-images-ok on <body> once every figure has decoded (checked by the browser test).
IMG_CHECK = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.every(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute('data-images-ok', ok ? String(imgs.length) : 'no');
});
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def fmt(value: Any, digits: int = 3) -> str:
    """How a number is shown: fixed ``digits`` decimals for floats, plain ints, '—' for None."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}f}"


def num(value: Any, path: str, digits: int = 3, cls: str = "", tag: str = "td") -> str:
    """A numeric cell tied to ``path`` in the embedded JSON."""
    attrs = f' data-path="{esc(path)}"'
    if value is not None:
        attrs += f' data-value="{esc(repr(value) if isinstance(value, float) else value)}"'
    if cls:
        attrs += f' class="{esc(cls)}"'
    return f"<{tag}{attrs}>{fmt(value, digits)}</{tag}>"


def interval_cell(iv: dict | None, path: str, cls: str = "") -> str:
    """Point estimate with its interval underneath; all three numbers tied to the JSON."""
    if iv is None:
        return '<td class="muted">—</td>'
    inner = (num(iv["value"], f"{path}/value", tag="span")
             + '<br><span class="ci">[' + num(iv["low"], f"{path}/low", tag="span") + ", "
             + num(iv["high"], f"{path}/high", tag="span") + "]</span>")
    return f'<td class="{esc(cls)}">{inner}</td>'


def text(value: Any, cls: str = "l") -> str:
    return f'<td class="{esc(cls)}">{esc(value)}</td>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], first_left: bool = True) -> str:
    head = "".join(f'<th class="{"l" if i == 0 and first_left else ""}">{esc(h)}</th>'
                   for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(png_b64: str | None, alt: str) -> str:
    if png_b64 is None:
        return f'<p class="muted">({esc(alt)}: no data)</p>'
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{png_b64}">'


def section(title: str, body: str, anchor: str) -> str:
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def page(title: str, subtitle: str, sections: Sequence[str], data: Any, script: str = "") -> str:
    """The whole document; ``data`` is embedded as ``<script id="report-data">``."""
    blob = json.dumps(data, sort_keys=True, allow_nan=False).replace("</", "<\\/")
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width\"><title>{esc(title)}</title>"
        f"<style>{CSS}</style></head><body data-images-ok=\"pending\">"
        f"<h1>{esc(title)}</h1><p class=\"muted meta\">{esc(subtitle)}</p>"
        + "".join(sections)
        + f'<script type="application/json" id="report-data">{blob}</script>'
        + f"<script>{IMG_CHECK}{script}</script></body></html>"
    )


def clean(data: Any) -> Any:
    """JSON-safe copy: non-finite floats become None (a page must not embed NaN)."""
    if isinstance(data, dict):
        return {str(k): clean(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [clean(v) for v in data]
    if isinstance(data, float) and not math.isfinite(data):
        return None
    return data
