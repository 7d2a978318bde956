"""The document tools on a real PDF in a real sandbox: what they return, that every bad
argument or tampered file comes back as an error observation, and that outputs are capped."""

import hashlib

import pytest

from posttrain.domains.base import get_domain, sample_task
from posttrain.domains.finance.filings_sections import build_layout, build_pdf
from posttrain.envs.tool_env import ToolEnv, format_call, pool_lease
from posttrain.core.types import Completion
from posttrain.tools import ToolSet, document_tools

PATH = "filing.pdf"


@pytest.fixture(scope="module")
def doc():
    task = sample_task(get_domain("finance.pdf_balance_check-v1"), 2, 2)
    spec = task.hidden["docs"][PATH]
    return spec, build_pdf(spec)


@pytest.fixture()
def sandbox(doc):
    with pool_lease()() as sb:
        sb.write_file(PATH, doc[1])
        yield sb


def _tools(data: bytes, **kw) -> ToolSet:
    return ToolSet(document_tools({PATH: hashlib.sha256(data).hexdigest()}, **kw))


def test_open_read_search_and_tables(doc, sandbox):
    spec, data = doc
    layout = build_layout(spec)
    ts = _tools(data)
    opened = ts.call(sandbox, "open_document", {"path": PATH})
    assert opened.ok and opened.data["pages"] == layout.page_count
    assert f"{PATH}: {layout.page_count} pages" in opened.content
    page = layout.table_pages["balance"][-1]
    text = ts.call(sandbox, "read_page", {"path": PATH, "page": page})
    assert text.ok and "Total liabilities and shareholders' equity" in text.content
    hit = ts.call(sandbox, "search_document", {"path": PATH, "query": "total LIABILITIES and"})
    assert hit.ok and page in hit.data["pages"] and f"page {page}:" in hit.content
    tables = ts.call(sandbox, "extract_tables", {"path": PATH, "page": page})
    co, year = spec["company"], spec["years"][0]
    total = co["balance"][str(year)]["liabilities_equity"]
    assert tables.ok and f"$ {total:,}" in tables.content
    none = ts.call(sandbox, "search_document", {"path": PATH, "query": "no such phrase anywhere"})
    assert none.ok and none.data["matches"] == 0
    many = ts.call(sandbox, "search_document", {"path": PATH, "query": "the"})
    assert many.data["matches"] > 12 and "(first 12 shown)" in many.content
    assert sum(line.startswith("page ") for line in many.content.splitlines()) == 12
    prose = ts.call(sandbox, "extract_tables", {"path": PATH, "page": 1})
    assert prose.ok and prose.data["tables"] == 0 and "no table on page 1" in prose.content


@pytest.mark.parametrize("name,args,kind", [
    ("read_page", {"path": PATH, "page": 0}, "invalid_arguments"),
    ("read_page", {"path": PATH, "page": 999}, "invalid_arguments"),
    ("read_page", {"path": PATH, "page": "2"}, "invalid_arguments"),
    ("read_page", {"path": "../../etc/passwd", "page": 1}, "invalid_arguments"),
    ("extract_tables", {"path": PATH}, "invalid_arguments"),
    ("extract_tables", {"path": PATH, "page": 1, "strategy": "text"}, "invalid_arguments"),
    ("search_document", {"path": PATH, "query": "x"}, "invalid_arguments"),
    ("search_document", {"path": PATH, "query": "  \t "}, "invalid_arguments"),
    ("search_document", {"path": PATH, "query": "y" * 500}, "invalid_arguments"),
    ("open_document", "{not json", "bad_json"),
])
def test_bad_arguments_are_observations(doc, sandbox, name, args, kind):
    r = _tools(doc[1]).call(sandbox, name, args)
    assert not r.ok and r.content.startswith("Error:") and r.data["kind"] == kind, r


def test_a_changed_or_missing_file_is_refused_not_parsed(doc, sandbox):
    ts = _tools(doc[1])
    sandbox.write_file(PATH, doc[1][:-100] + b"%%EOF\n")
    r = ts.call(sandbox, "read_page", {"path": PATH, "page": 1})
    assert not r.ok and r.data["kind"] == "refused" and "changed" in r.content
    sandbox.exec("rm -f /work/filing.pdf", timeout=10)
    gone = ts.call(sandbox, "open_document", {"path": PATH})
    assert not gone.ok and gone.data["kind"] == "tool_error"


def test_outputs_are_capped_with_a_note(doc, sandbox):
    spec, data = doc
    page = build_layout(spec).table_pages["balance"][0]
    ts = _tools(data, max_chars=120)
    for name, args in (("read_page", {"path": PATH, "page": page}), ("extract_tables", {"path": PATH, "page": page}),
                       ("open_document", {"path": PATH})):
        r = ts.call(sandbox, name, args)
        assert r.ok and "cut; narrow the request" in r.content and len(r.content) < 240, (name, r.content)


def test_a_bad_call_inside_an_episode_is_an_observation_and_the_episode_goes_on():
    dom = get_domain("finance.pdf_line_items-v1")
    task = sample_task(dom, 0, 1)
    env = dom.make_env(task)
    assert isinstance(env, ToolEnv)
    try:
        env.reset()
        step = env.step(Completion(format_call("read_page", {"path": PATH, "page": 10_000})))
        assert not step.done and step.info["tool_errors"] == 1
        assert "out of range" in step.observation.messages[0]["content"]
        step = env.step(Completion(format_call("read_page", {"path": "other.pdf", "page": 1})))
        assert not step.done and step.info["invalid_calls"] == 1
        step = env.step(Completion(dom.solve(task)))
        assert step.done
    finally:
        env.close()
