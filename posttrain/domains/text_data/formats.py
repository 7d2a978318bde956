"""Structured-data domains: CSV to JSON, JSON path lookup, JSON filtering, XML attribute
queries, JSON to XML, CSV group sums and pivots.

Verifiers parse the answer strictly (one JSON document, one XML element, a CSV table of the
exact shape) and compare field by field or row by row with :mod:`posttrain.verifiers.structured`.

Not covered: schema inference, CSV dialects, XML namespaces.
"""

from __future__ import annotations

import json
import random
from xml.etree import ElementTree as ET

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.domains.text_data import _kit as K
from posttrain.verifiers.structured import (answer_text, json_equal, parse_csv, parse_json, parse_word_list,
                                            parse_xml, records_score, xml_child_score)

FIRST = ["ana", "bo", "cid", "dee", "eli", "fay", "gus", "hal", "ida", "jay", "kai", "lu", "mo", "ned"]
CITIES = ["Oslo", "Lima", "Pune", "Kyiv", "Rome", "Doha", "Nice", "Bern"]


def _people(rng: random.Random, n: int) -> list[dict]:
    names = rng.sample(FIRST, n)
    return [{"name": nm, "age": rng.randint(18, 70), "city": rng.choice(CITIES),
             "score": round(rng.uniform(0, 100), 1)} for nm in names]


def _score(domain_id: str, v: float, why: str = "") -> Score:
    return Score(v, components={"match": (v, 1.0)}, reason=why, verifier_version=domain_id)


ID_CSV_TO_JSON = "text_data.csv_to_json-v1"
DOC_CSV_TO_JSON = """Convert a CSV table to a JSON array of objects with typed values.

Partial credit per field (numbers must be JSON numbers); the array must have one object
per row. Not covered: nested output, quoting edge cases. Probes: an array of arrays, the
header row included as a record.
"""


def _csv_to_json_draw(rng: random.Random, difficulty: int) -> Draft:
    rows = _people(rng, 1 + 2 * difficulty)
    cols = list(rows[0])[: 2 + difficulty] if difficulty < 2 else list(rows[0])
    recs = [{c: r[c] for c in cols} for r in rows]
    csv_text = "\n".join([",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in recs])
    prompt = (f"Convert this CSV to a JSON array with one object per row, keys from the header, numbers as JSON "
              f"numbers and text as strings:\n{csv_text}\nAnswer with the JSON only.")
    return Draft(prompt, answer=recs, public={"csv": csv_text})


def _csv_to_json_check(task: Task, answer: str) -> Score:
    ok, got = parse_json(answer)
    return _score(task.domain, records_score(got, task.hidden["answer"]) if ok else 0.0)


def _csv_to_json_probes(task: Task) -> dict[str, str]:
    recs = task.hidden["answer"]
    return {"arrays": json.dumps([list(r.values()) for r in recs]),
            "with_header": json.dumps([{k: k for k in recs[0]}] + recs)}


register_domain(SingleTurnDomain(
    ID_CSV_TO_JSON, _csv_to_json_draw, _csv_to_json_check, _csv_to_json_probes,
    reference=K.json_answer, description=DOC_CSV_TO_JSON))


def _doc(rng: random.Random, difficulty: int) -> dict:
    people = _people(rng, 2 + difficulty)
    return {"team": rng.choice(["red", "blue", "green"]), "members": [
        {"name": p["name"], "age": p["age"], "address": {"city": p["city"], "zip": f"{rng.randint(10000, 99999)}"},
         "tags": rng.sample(["admin", "dev", "ops", "qa", "ml"], rng.randint(1, 3))} for p in people]}


def _paths(doc: dict) -> list[tuple[str, object]]:
    out = [("team", doc["team"])]
    for i, m in enumerate(doc["members"]):
        out += [(f"members[{i}].name", m["name"]), (f"members[{i}].age", m["age"]),
                (f"members[{i}].address.city", m["address"]["city"]), (f"members[{i}].address.zip", m["address"]["zip"])]
        out += [(f"members[{i}].tags[{j}]", t) for j, t in enumerate(m["tags"])]
    return out


ID_JSON_PATH = "text_data.json_path-v1"
DOC_JSON_PATH = """Read the value at a dotted/indexed path in a JSON document.

Exact, type-sensitive (``"12345"`` is not ``12345``; a bare string is accepted for string
values). Not covered: wildcards and filters. Probes: the value at a neighbouring path.
"""


def _json_path_draw(rng: random.Random, difficulty: int) -> Draft:
    doc = _doc(rng, difficulty)
    paths = [p for p in _paths(doc) if p[0].count(".") + p[0].count("[") >= difficulty]
    path, val = rng.choice(paths)
    other = next((v for p, v in _paths(doc)[::-1] if not json_equal(v, val) and type(v) is type(val)), None)
    prompt = (f"JSON document:\n{json.dumps(doc, indent=1)}\nWhat is the value at path `{path}` (indices start at 0)? "
              "Answer with the value as JSON (strings in double quotes), nothing else.")
    return Draft(prompt, answer=val, hidden={"other": other})


def _json_path_check(task: Task, answer: str) -> Score:
    ok, got = parse_json(answer)
    exp = task.hidden["answer"]
    if not ok and isinstance(exp, str):
        ok, got = True, (answer_text(answer) or "").strip()
    return _score(task.domain, 1.0 if ok and json_equal(got, exp) else 0.0)


def _json_path_probes(task: Task) -> dict[str, str]:
    other = task.hidden["other"]
    return {} if other is None else {"neighbour": json.dumps(other)}


register_domain(SingleTurnDomain(
    ID_JSON_PATH, _json_path_draw, _json_path_check, _json_path_probes,
    reference=K.json_answer, description=DOC_JSON_PATH))


ID_JSON_FILTER = "text_data.json_filter-v1"
DOC_JSON_FILTER = """Filter and sort records: the names of people matching a condition, in a given order.

Exact JSON list. Not covered: aggregation. Probes: every name, the matching names
in document order when that differs from the asked order.
"""


def _json_filter_draw(rng: random.Random, difficulty: int) -> Draft:
    while True:
        recs = _people(rng, 4 + 2 * difficulty)
        cut = rng.randint(25, 60)
        hit = [r for r in recs if r["age"] > cut]
        if 2 <= len(hit) < len(recs):
            break
    key, rev = rng.choice([("age", True), ("score", False), ("name", False)])
    ans = [r["name"] for r in sorted(hit, key=lambda r: (r[key], r["name"]), reverse=rev)]
    order = f"by {key} {'descending' if rev else 'ascending'}"
    prompt = (f"Records:\n{json.dumps(recs)}\nList the names of the people older than {cut}, sorted {order}. "
              "Answer with a JSON array of strings, nothing else.")
    return Draft(prompt, answer=ans, public={"records": recs, "cut": cut})


def _json_filter_check(task: Task, answer: str) -> Score:
    ok, got = parse_json(answer)
    return _score(task.domain, 1.0 if ok and json_equal(got, task.hidden["answer"]) else 0.0)


def _json_filter_probes(task: Task) -> dict[str, str]:
    recs, ans = task.public["records"], task.hidden["answer"]
    out = {"everyone": json.dumps([r["name"] for r in recs])}
    doc_order = [r["name"] for r in recs if r["age"] > task.public["cut"]]
    if doc_order != ans:
        out["document_order"] = json.dumps(doc_order)
    return out


register_domain(SingleTurnDomain(
    ID_JSON_FILTER, _json_filter_draw, _json_filter_check, _json_filter_probes,
    reference=K.json_answer, description=DOC_JSON_FILTER))


ID_XML_QUERY = "text_data.xml_query-v1"
DOC_XML_QUERY = """List the ids of XML elements whose attributes meet a condition, in document order.

Exact list. Not covered: XPath syntax, namespaces. Probes: every id, the ids matching
only the category.
"""


def _xml_query_draw(rng: random.Random, difficulty: int) -> Draft:
    cats = ["tool", "toy", "food"]
    while True:
        items = [{"id": f"i{rng.randint(100, 999)}", "category": rng.choice(cats),
                  "price": str(rng.randint(1, 60))} for _ in range(4 + 3 * difficulty)]
        if len({i["id"] for i in items}) < len(items):
            continue
        cat, cut = rng.choice(cats), rng.randint(10, 50)
        in_cat = [i["id"] for i in items if i["category"] == cat]
        ans = [i["id"] for i in items if i["category"] == cat and int(i["price"]) > cut]
        if ans and ans != in_cat:
            break
    root = ET.Element("catalog")
    for it in items:
        ET.SubElement(root, "item", it).text = rng.choice(["widget", "gadget", "thing"])
    xml = ET.tostring(root, encoding="unicode").replace("><item", ">\n  <item").replace("</catalog>", "\n</catalog>")
    prompt = (f"{xml}\nList the id of every item with category \"{cat}\" and price greater than {cut}, in document "
              "order, comma-separated, nothing else.")
    return Draft(prompt, answer=ans, hidden={"all": [i["id"] for i in items], "in_cat": in_cat})


def _xml_query_reference(task: Task) -> str:
    return ", ".join(task.hidden["answer"])


def _xml_query_check(task: Task, answer: str) -> Score:
    return _score(task.domain, 1.0 if parse_word_list(answer) == task.hidden["answer"] else 0.0)


def _xml_query_probes(task: Task) -> dict[str, str]:
    return {"all_ids": ", ".join(task.hidden["all"]), "category_only": ", ".join(task.hidden["in_cat"])}


register_domain(SingleTurnDomain(
    ID_XML_QUERY, _xml_query_draw, _xml_query_check, _xml_query_probes,
    reference=_xml_query_reference, description=DOC_XML_QUERY))


def _person_xml(p: dict, tags: list[str]) -> ET.Element:
    root = ET.Element("person", {"name": p["name"]})
    ET.SubElement(root, "age").text = str(p["age"])
    ET.SubElement(root, "city").text = p["city"]
    t = ET.SubElement(root, "tags")
    for tag in tags:
        ET.SubElement(t, "tag").text = tag
    return root


ID_JSON_TO_XML = "text_data.json_to_xml-v1"
DOC_JSON_TO_XML = """Render a JSON record as XML following a stated schema.

Partial credit per child element of the root (root tag and attribute must be right and
the child count exact); attribute order and whitespace are ignored.
Not covered: namespaces, mixed content. Probes: the JSON itself, the name as a child
element instead of an attribute.
"""


def _json_to_xml_draw(rng: random.Random, difficulty: int) -> Draft:
    p = _people(rng, 1)[0]
    tags = rng.sample(["admin", "dev", "ops", "qa", "ml", "pm"], difficulty)
    rec = {"name": p["name"], "age": p["age"], "city": p["city"], "tags": tags}
    prompt = (f"JSON: {json.dumps(rec)}\nWrite it as XML: a root <person> element with a name attribute, then child "
              "elements <age>, <city> and <tags> (in that order), where <tags> holds one <tag> element per tag, "
              "in order. Answer with the XML only.")
    xml = ET.tostring(_person_xml(p, tags), encoding="unicode")
    return Draft(prompt, public={"record": rec}, hidden={"xml": xml})


def _json_to_xml_reference(task: Task) -> str:
    return task.hidden["xml"]


def _json_to_xml_check(task: Task, answer: str) -> Score:
    return _score(task.domain, xml_child_score(parse_xml(answer), ET.fromstring(task.hidden["xml"])))


def _json_to_xml_probes(task: Task) -> dict[str, str]:
    rec = task.public["record"]
    el = ET.fromstring(task.hidden["xml"])
    el.attrib.clear()
    ET.SubElement(el, "name").text = rec["name"]
    return {"json": json.dumps(rec), "name_as_child": ET.tostring(el, encoding="unicode")}


register_domain(SingleTurnDomain(
    ID_JSON_TO_XML, _json_to_xml_draw, _json_to_xml_check, _json_to_xml_probes,
    reference=_json_to_xml_reference, description=DOC_JSON_TO_XML))


def _csv_reference(task: Task) -> str:
    return "\n".join(",".join(r) for r in task.hidden["answer"])


def _csv_check(task: Task, answer: str) -> Score:
    return row_score(task.domain, parse_csv(answer), task.hidden["answer"])


def row_score(domain_id: str, got: list[list[str]] | None, exp: list[list[str]]) -> Score:
    """Fraction of data rows exactly right; 0 unless the header and the row count match."""
    bad = got is None or len(got) != len(exp) or got[0] != exp[0]
    v = 0.0 if bad else sum(g == e for g, e in zip(got[1:], exp[1:])) / (len(exp) - 1)
    return Score(v, components={"rows": (v, 1.0)}, verifier_version=domain_id,
                 reason="shape mismatch" if not v and (got is None or len(got) != len(exp)) else f"{v:.2f} rows right")


SALES_REGIONS = ["north", "south", "east", "west"]


ID_CSV_GROUP_SUM = "text_data.csv_group_sum-v1"
DOC_CSV_GROUP_SUM = """Group CSV rows by a key and sum a numeric column; output a sorted CSV.

Partial credit per output row (key and total both right); the row count must match.
Not covered: averages, multiple keys. Probes: totals of zero, row counts instead of sums.
"""


def _csv_group_sum_draw(rng: random.Random, difficulty: int) -> Draft:
    regions = rng.sample(SALES_REGIONS, 1 + difficulty)
    rows = [[rng.choice(regions), rng.choice(["pens", "ink", "pads"]), str(rng.randint(1, 50))]
            for _ in range(4 + 4 * difficulty)]
    tot: dict[str, int] = {}
    cnt: dict[str, int] = {}
    for r, _, a in rows:
        tot[r] = tot.get(r, 0) + int(a)
        cnt[r] = cnt.get(r, 0) + 1
    exp = [["region", "total"]] + [[r, str(tot[r])] for r in sorted(tot)]
    csv_text = "\n".join(["region,product,amount"] + [",".join(r) for r in rows])
    prompt = (f"{csv_text}\nSum amount per region. Answer with a CSV with header region,total and one row per region "
              "sorted by region name, nothing else.")
    return Draft(prompt, answer=exp, hidden={"counts": cnt})


def _csv_group_sum_probes(task: Task) -> dict[str, str]:
    exp = task.hidden["answer"]
    zeros = [exp[0]] + [[r, "0"] for r, _ in exp[1:]]
    counts = [exp[0]] + [[r, str(task.hidden["counts"][r])] for r, _ in exp[1:]]
    return {k: "\n".join(",".join(r) for r in rows) for k, rows in (("zeros", zeros), ("counts", counts))
            if all(a != b for a, b in zip(rows[1:], exp[1:]))}


register_domain(SingleTurnDomain(
    ID_CSV_GROUP_SUM, _csv_group_sum_draw, _csv_check, _csv_group_sum_probes,
    reference=_csv_reference, description=DOC_CSV_GROUP_SUM))


ID_CSV_PIVOT = "text_data.csv_pivot-v1"
DOC_CSV_PIVOT = """Pivot long-format CSV (name, quarter, sales) into a wide table, missing cells as 0.

Partial credit per output row; header and row count must match exactly.
Not covered: aggregation functions other than sum. Probes: the table with all zeros,
the transposed table.
"""


def _csv_pivot_draw(rng: random.Random, difficulty: int) -> Draft:
    names = sorted(rng.sample(FIRST, 1 + difficulty))
    qs = ["Q1", "Q2", "Q3", "Q4"][: 2 + difficulty // 2]
    cells = {(n, q): rng.randint(1, 90) for n in names for q in qs if rng.random() < 0.75}
    for n in names:
        cells.setdefault((n, rng.choice(qs)), rng.randint(1, 90))
    long = [[n, q, str(v)] for (n, q), v in cells.items()]
    rng.shuffle(long)
    exp = [["name"] + qs] + [[n] + [str(cells.get((n, q), 0)) for q in qs] for n in names]
    prompt = ("\n".join(["name,quarter,sales"] + [",".join(r) for r in long]) + f"\nPivot to one row per name "
              f"(sorted by name) and one column per quarter ({', '.join(qs)}), header name,{','.join(qs)}; use 0 "
              "where there is no sale. Answer with the CSV only.")
    return Draft(prompt, answer=exp)


def _csv_pivot_probes(task: Task) -> dict[str, str]:
    exp = task.hidden["answer"]
    zeros = [exp[0]] + [[r[0]] + ["0"] * (len(r) - 1) for r in exp[1:]]
    transposed = [list(c) for c in zip(*exp)]
    return {"zeros": "\n".join(",".join(r) for r in zeros),
            "transposed": "\n".join(",".join(r) for r in transposed)}


register_domain(SingleTurnDomain(
    ID_CSV_PIVOT, _csv_pivot_draw, _csv_check, _csv_pivot_probes,
    reference=_csv_reference, description=DOC_CSV_PIVOT))
