"""Instruction domains over structured output: the same kind of inventory records written as
CSV, a markdown table, JSON Lines, XML and YAML.

- ``instructions.csv_table-v1`` — a header in a given column order and exactly n rows.
- ``instructions.markdown_table-v1`` — a pipe table with a separator row, columns in order.
- ``instructions.jsonl-v1`` — exactly n JSON objects, one per line, with typed fields.
- ``instructions.xml_records-v1`` — a named root whose children carry some fields as
  attributes and the others as child elements.
- ``instructions.yaml_doc-v1`` — a mapping with a ``meta`` block of given values and a list
  of entries under a named key.

Every task draws columns (an ``id`` numbering the records, a unique capitalised ``name``, a
bounded integer ``qty``, and 1-3 of: an enum ``category``, a patterned ``code``, a ``price``),
and the value rules: d1 ranges, enums, patterns and uniqueness; d2 also records sorted by
``qty``; d3 also ``qty`` summing to a given total. Reward: fraction of rules met, gated on the
answer parsing strictly in its format, the exact record count, the exact fields, every value
filled and no duplicate record, at least three records and no prompt echo
(:func:`posttrain.verifiers.constraints_more.score_any`, ``gate="structured"``). What they
train: emitting well-formed structured data under constraints. Not covered: nesting beyond
one level, escaping corner cases, schema languages. Probes: the header or skeleton alone, the
records as a JSON array (wrong format), one record repeated, every value blanked, prose.
"""

from __future__ import annotations

import functools
import json
import random
from typing import Any, Callable

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _kit as K
from posttrain.domains.kit.single_turn import Draft

Render = Callable[[list[dict], dict], str]  # (records, task.hidden) -> the text in the format
Extra = Callable[[str, str], list[dict]]  # (fmt, root/list key) -> the format's own constraints
CATEGORIES = ["tools", "garden", "kitchen", "outdoor", "office", "toys", "books"]


def _rows(rng: random.Random, topic: str, n: int, difficulty: int, fmt: str) -> tuple[list[dict], list[dict]]:
    """Records and their value rules (``fmt`` decides whether numbers stay typed)."""
    typed = fmt in ("jsonl", "yaml")
    extra = rng.sample(["category", "code", "price"], difficulty)
    cols = ["id", "name", "qty"] + [c for c in ("category", "code", "price") if c in extra]
    lo = rng.randint(1, 20)
    hi = lo + rng.randint(20, 60)
    cats = rng.sample(CATEGORIES, 3)
    letters = "".join(rng.sample("ABCDEFGHKMNPRSTW", 3))
    names = rng.sample(K.TOPICS[topic]["nouns"] + [a + n for a in ("Old", "New") for n in ("mill", "yard")], n)
    codes = rng.sample(range(100, 1000), n)
    rows = []
    for i in range(n):
        rows.append({"name": names[i].capitalize(), "qty": rng.randint(lo, hi), "category": rng.choice(cats),
                     "code": f"{letters}-{codes[i]}", "price": round(rng.uniform(1, 99), 2)})
    if difficulty >= 2:
        rows.sort(key=lambda r: r["qty"])
    out = []
    for i, r in enumerate(rows, 1):
        rec = {"id": i, **r}
        if not typed:
            rec = {k: (f"{v:.2f}" if k == "price" else str(v)) for k, v in rec.items()}
        out.append({k: rec[k] for k in cols})
    f = {"fmt": fmt}
    rules: list[dict[str, Any]] = [{"kind": "rec_seq", "key": "id", **f},
                                   {"kind": "rec_pattern", "key": "name", "regex": "^[A-Z][a-z]+$", **f},
                                   {"kind": "rec_unique", "key": "name", **f},
                                   {"kind": "rec_int_range", "key": "qty", "lo": lo, "hi": hi, **f}]
    if "category" in cols:
        rules.append({"kind": "rec_enum", "key": "category", "values": cats, **f})
    if "code" in cols:
        rules.append({"kind": "rec_pattern", "key": "code", "regex": f"^{letters}-[0-9]{{3}}$", **f})
    if "price" in cols:
        rules.append({"kind": "rec_type", "key": "price", "type": "number", **f} if typed else
                     {"kind": "rec_pattern", "key": "price", "regex": r"^[0-9]+\.[0-9]{2}$", **f})
    if difficulty >= 2:
        rules.append({"kind": "rec_sorted", "key": "qty", **f})
    if difficulty == 3:
        rules.append({"kind": "rec_sum", "key": "qty", "total": sum(int(r["qty"]) for r in out), **f})
    return out, rules


def _gates(fmt: str, n: int, cols: list[str], ordered: bool, arg: str = "") -> list[dict]:
    f = {"fmt": fmt, "arg": arg, "gate": True}
    return [{"kind": "rec_count", "n": n, **f}, {"kind": "rec_keys", "keys": cols, "ordered": ordered, **f},
            {"kind": "rec_filled", **f}]


def _format_draw(rng: random.Random, difficulty: int, *, fmt: str, what: str, render: Render,
                 extra: Extra) -> Draft:
    """Records, their rules and the reference rendered in ``fmt`` (``what`` phrases the format)."""
    topic = rng.choice(sorted(K.TOPICS))
    n = rng.randint(2 + difficulty, 3 + 2 * difficulty)
    rows, rules = _rows(rng, topic, n, difficulty, fmt)
    arg = rng.choice(["items", "stock", "entries"]) if fmt == "yaml" else \
        rng.choice(["inventory", "catalog", "store"]) if fmt == "xml" else ""
    for r in rules:
        r["arg"] = arg
    cols = list(rows[0])
    cons = _gates(fmt, n, cols, fmt in ("csv", "md"), arg) + extra(fmt, arg) + rules
    hidden = {"arg": arg, "meta": {"title": f"{topic.capitalize()} stock", "version": rng.randint(2, 9)}}
    text = render(rows, hidden)
    intro = f"List inventory records for a shop about {topic} {what.format(arg=arg)}"
    return K.constraint_draft(intro + " Answer with the data only.", topic,
                              [c if c["kind"] != "yaml_meta" else {**c, "values": hidden["meta"]} for c in cons],
                              text, **hidden)


def _no_extra(fmt: str, arg: str) -> list[dict]:
    return []


def _format_probes(task: Task, *, fmt: str, render: Render) -> dict[str, str]:
    ref = task.hidden["reference"]
    cons = task.hidden["constraints"]
    cols = next(c["keys"] for c in cons if c["kind"] == "rec_keys")
    n = next(c["n"] for c in cons if c["kind"] == "rec_count")
    blank = [{k: "" for k in cols}] * n
    first = [{k: "x" for k in cols}] * n
    return {"json_array": json.dumps([dict(zip(cols, range(len(cols))))] * n),
            "blank_values": render(blank, task.hidden),
            "repeated_record": render(first, task.hidden),
            "header_only": render([], task.hidden) if fmt != "md" else "| " + " | ".join(cols) + " |",
            "prose": "Here is the data you asked for, with every record and field filled in correctly.",
            "constraint_list": "\n".join(K.describe_any(c) for c in cons),
            "half_reference": "\n".join(ref.splitlines()[: max(1, len(ref.splitlines()) // 2)])}


def _format_domain(dom_id: str, fmt: str, what: str, render: Render, skill: str, extra: Extra = _no_extra) -> None:
    """Register the records-in-``fmt`` domain: the shared draw and probes with its renderer."""
    register_domain(K.constraint_domain(
        dom_id, functools.partial(_format_draw, fmt=fmt, what=what, render=render, extra=extra),
        exploits=functools.partial(_format_probes, fmt=fmt, render=render), gate="structured", fmt=fmt,
        description=f"{skill}\n\nInventory records {what.format(arg='<root>')}"))


ID_CSV_TABLE = "instructions.csv_table-v1"
CSV_TABLE_WHAT = "as CSV: a header line, then one line per row, comma-separated."


def _csv_table_render(rows: list[dict], hidden: dict) -> str:
    cols = list(rows[0]) if rows else ["id", "name"]
    return "\n".join([",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in rows])


ID_MARKDOWN_TABLE = "instructions.markdown_table-v1"
MARKDOWN_TABLE_WHAT = "as a markdown table (header row, separator row of dashes, one row per record)."


def _markdown_table_render(rows: list[dict], hidden: dict) -> str:
    cols = list(rows[0]) if rows else ["id", "name"]
    line = lambda xs: "| " + " | ".join(str(x) for x in xs) + " |"  # noqa: E731
    return "\n".join([line(cols), "|" + "|".join("---" for _ in cols) + "|"] + [line(r[c] for c in cols) for r in rows])


ID_JSON_LINES = "instructions.jsonl-v1"
JSON_LINES_WHAT = "as JSON Lines: one JSON object per line; id and qty are integers."


def _json_lines_render(rows: list[dict], hidden: dict) -> str:
    return "\n".join(json.dumps(r) for r in rows)


def _json_lines_extra(fmt: str, arg: str) -> list[dict]:
    return [{"kind": "rec_type", "key": k, "type": "integer", "fmt": fmt} for k in ("id", "qty")]


ID_XML_RECORDS = "instructions.xml_records-v1"
XML_RECORDS_WHAT = "as XML: one root element <{arg}> with one <item> child per record."


def _xml_records_render(rows: list[dict], hidden: dict) -> str:
    out = [f"<{hidden['arg']}>"]
    for r in rows:
        subs = "".join(f"<{k}>{v}</{k}>" for k, v in r.items() if k not in ("id", "qty"))
        out.append(f'  <item id="{r.get("id", "")}" qty="{r.get("qty", "")}">{subs}</item>')
    return "\n".join(out + [f"</{hidden['arg']}>"])


def _xml_records_extra(fmt: str, arg: str) -> list[dict]:
    return [{"kind": "rec_tag", "tag": "item", "fmt": "xml", "arg": arg, "gate": True},
            {"kind": "rec_attrs", "names": ["id", "qty"], "fmt": "xml", "arg": arg}]


ID_YAML_DOC = "instructions.yaml_doc-v1"
YAML_DOC_WHAT = "as YAML: a mapping with a \"meta\" mapping and the list of entries under \"{arg}\"."


def _yaml_doc_render(rows: list[dict], hidden: dict) -> str:
    import yaml

    return yaml.safe_dump({"meta": hidden["meta"], hidden["arg"]: rows}, sort_keys=False).strip()


def _yaml_doc_extra(fmt: str, arg: str) -> list[dict]:
    return [{"kind": "yaml_top", "keys": ["meta", arg], "gate": True},
            {"kind": "yaml_meta", "key": "meta", "values": {}}]


_format_domain(ID_CSV_TABLE, "csv", CSV_TABLE_WHAT, _csv_table_render,
               "Writing CSV: a header in a given column order and exactly n rows obeying value rules.")
_format_domain(ID_MARKDOWN_TABLE, "md", MARKDOWN_TABLE_WHAT, _markdown_table_render,
               "Writing a markdown pipe table with columns in order and rows obeying value rules.")
_format_domain(ID_JSON_LINES, "jsonl", JSON_LINES_WHAT, _json_lines_render,
               "Writing JSON Lines: exactly n typed JSON objects obeying value rules.", _json_lines_extra)
_format_domain(ID_XML_RECORDS, "xml", XML_RECORDS_WHAT, _xml_records_render,
               "Writing XML records with some fields as attributes and the others as child elements.",
               _xml_records_extra)
_format_domain(ID_YAML_DOC, "yaml", YAML_DOC_WHAT, _yaml_doc_render,
               "Writing a YAML document: a meta block of given values and a list of entries under a named key.",
               _yaml_doc_extra)
