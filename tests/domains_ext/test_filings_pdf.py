"""The real-tier filing domains: references through the real document tools on the real PDFs,
a scale slip scoring lower, probes at the floor, what pdfplumber reads back from the PDF
(a table split across pages included), byte-identical PDFs per task, and long documents."""

import hashlib
import io
import json
import subprocess
import sys

import pytest

from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.domains.finance.filings_sections import build_layout, build_pdf
from posttrain.rollout.conformance import check_domain
from posttrain.rollout.scripted import replay, replay_score

load_builtin_domains()

IDS = sorted(i for i in DOMAINS.ids() if getattr(DOMAINS.get(i), "tier", "light") == "real"
             and type(DOMAINS.get(i)).__module__.endswith("filings_tasks"))
LONG = ["long_context.filing_needle-v1", "long_context.filing_statements-v1"]


def test_the_family_has_its_domains():
    assert len(IDS) >= 10, IDS
    assert set(LONG) <= set(IDS)
    assert {"finance.pdf_restatement-v1", "finance.pdf_two_companies-v1"} <= set(IDS)
    for did in IDS:
        dom = DOMAINS.get(did)
        assert dom.tier == "real" and len(dom.difficulties) >= 3


@pytest.mark.parametrize("did", IDS)
def test_reference_trajectory_scores_one_through_the_tools(did):
    dom = DOMAINS.get(did)
    d = dom.difficulties[IDS.index(did) % 3]
    task = sample_task(dom, 5, d)
    traj = replay(dom, task, dom.reference_actions(task))
    assert traj.score.value == 1.0, traj.score
    tool_turns = traj.turns[:-1]
    assert tool_turns and all(t.info["tool_calls"] >= 1 and t.info["tool_errors"] == 0 for t in tool_turns)
    # the answer's numbers were on the pages the reference read (the tools really returned them)
    seen = " ".join(str(m.get("content")) for t in traj.turns[1:] for m in t.observation.messages)
    for name, v in task.hidden["expected"].items():
        spec = next(f for f in task.hidden["fields"] if f["name"] == name)
        if spec["kind"] == "amount" and "change" not in name and "excluding" not in name \
                and "before" not in name and "combined" not in name and spec["scale"] >= 1e3:
            shown = f"{abs(v * spec['scale']):,.0f}"
            assert any(f"{abs(v * spec['scale'] / k):,.{p}f}" in seen for k, p in ((1e3, 0), (1e6, 0), (1e6, 1))), \
                (name, shown)


@pytest.mark.parametrize("did", IDS)
def test_probes_score_at_the_floor(did):
    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        task = sample_task(dom, 11, d)
        probes = dom.probes(task)
        assert {"wrong_scale_up", "wrong_scale_down", "padded_candidates", "empty_object"} <= set(probes)
        for name, p in probes.items():
            if isinstance(p, str):
                assert dom.score(task, p).value <= 0.05, (name, p)
        for bad in ("", "<answer></answer>", "<answer>{}</answer>"):
            assert dom.score(task, bad).value == 0.0
        # the reference block among other candidates is padding, not an answer
        assert dom.score(task, "0\n" + dom.solve(task) + "\n1").value == 0.0
        assert dom.score(task, dom.solve(task) * 2).value == 0.0


def test_wrong_year_probe_exists_where_years_differ():
    for did in IDS:
        if did == "long_context.filing_needle-v1":
            continue  # its facts are stated for one year only
        dom = DOMAINS.get(did)
        task = sample_task(dom, 2, 2)
        assert any(k.startswith("trap_wrong_year") for k in dom.probes(task)), did


def test_padding_after_real_tool_calls_scores_zero():
    dom = DOMAINS.get("finance.pdf_balance_check-v1")
    task = sample_task(dom, 4, 2)
    assert replay_score(dom, task, dom.probes(task)["tools_then_padding"]).value == 0.0


def _answer_with(task, **changes):
    ans = dict(task.hidden["expected"])
    ans.update(changes)
    return "<answer>" + json.dumps(ans) + "</answer>"


def test_one_field_at_the_wrong_scale_scores_measurably_lower():
    dom = DOMAINS.get("finance.pdf_line_items-v1")
    task = sample_task(dom, 3, 1)
    exp = task.hidden["expected"]
    name = next(iter(exp))
    full = dom.score(task, _answer_with(task)).value
    thousands_as_units = dom.score(task, _answer_with(task, **{name: exp[name] * 1000})).value
    assert full == 1.0 and thousands_as_units <= 1.0 - 1.0 / len(exp) + 1e-9
    # the same number written with its scale phrase is the right answer
    spec = next(f for f in task.hidden["fields"] if f["name"] == name)
    word = {1e3: "thousands", 1e6: "millions"}[spec["scale"]]
    assert dom.score(task, _answer_with(task, **{name: f"{exp[name]:,.0f} (in {word})"})).value == 1.0


def test_a_field_off_scale_also_breaks_the_consistency_check():
    dom = DOMAINS.get("finance.pdf_balance_check-v1")
    task = sample_task(dom, 3, 1)
    exp = task.hidden["expected"]
    s = dom.score(task, _answer_with(task, equity=exp["equity"] / 1000))
    assert s.components["check:balance_sheet_balances"][0] == 0.0
    assert s.value == pytest.approx(2 / 3 * 0.5)


def test_the_pdf_holds_the_split_table_pdfplumber_reads_back():
    import pdfplumber

    dom = DOMAINS.get("finance.pdf_balance_check-v1")
    task = sample_task(dom, 6, 3)  # d3: split, header not repeated
    spec = task.hidden["docs"]["filing.pdf"]
    layout = build_layout(spec)
    pages = layout.table_pages["balance"]
    assert len(pages) == 2
    cells = {}
    with pdfplumber.open(io.BytesIO(build_pdf(spec))) as pdf:
        first = pdf.pages[pages[0] - 1].extract_tables()[-1]
        second = pdf.pages[pages[1] - 1].extract_tables()[0]
    assert first[0][0] == "(fiscal year)" and second[0][0] != "(fiscal year)"  # no repeated header
    for row in first[1:] + second:
        cells[row[0]] = row[1:]
    co, year = spec["company"], spec["years"][0]
    mult = {"thousands": 1e3, "millions": 1e6}[co["unit"]]
    for f in task.hidden["fields"]:
        want = task.hidden["expected"][f["name"]] * f["scale"] / mult
        label = {"total_assets": "Total assets", "total_liabilities": "Total liabilities",
                 "equity": "Total shareholders' equity", "current_liabilities": "Total current liabilities",
                 "long_debt": "Long-term debt", "cash": "Cash and cash equivalents",
                 "receivables": "Accounts receivable", "inventory": "Inventories",
                 "current_assets": "Total current assets"}[f["name"]]
        assert cells[label][0].replace("$", "").strip() == f"{want:,.0f}", (label, cells[label])
    assert year == int(first[0][1])


def test_same_task_gives_the_same_pdf_bytes_in_another_process():
    dom = DOMAINS.get("finance.pdf_restatement-v1")
    task = sample_task(dom, 1, 2)
    digests = {p: hashlib.sha256(build_pdf(s)).hexdigest() for p, s in task.hidden["docs"].items()}
    code = ("import hashlib, json; from posttrain.domains.base import get_domain, sample_task; "
            "from posttrain.domains.finance.filings_sections import build_pdf; "
            "t = sample_task(get_domain('finance.pdf_restatement-v1'), 1, 2); "
            "print(json.dumps({p: hashlib.sha256(build_pdf(s)).hexdigest() for p, s in t.hidden['docs'].items()}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == digests
    other = sample_task(dom, 2, 2)
    assert {hashlib.sha256(build_pdf(s)).hexdigest() for s in other.hidden["docs"].values()}.isdisjoint(digests.values())


@pytest.mark.parametrize("did", LONG)
def test_long_documents_have_at_least_30_pages(did):
    import pypdf

    dom = DOMAINS.get(did)
    for d in dom.difficulties:
        for seed in (0, 7):
            task = sample_task(dom, seed, d)
            (spec,) = task.hidden["docs"].values()
            assert build_layout(spec).page_count >= 30
    assert len(pypdf.PdfReader(io.BytesIO(build_pdf(spec))).pages) == build_layout(spec).page_count


def test_restatement_needs_both_filings():
    dom = DOMAINS.get("finance.pdf_restatement-v1")
    task = sample_task(dom, 8, 3)
    assert len(task.hidden["docs"]) == 2
    assert {r[1] for r in task.hidden["reads"]} == set(task.hidden["docs"])
    exp = task.hidden["expected"]
    assert exp["revenue_restated"] - exp["revenue_original"] == pytest.approx(exp["revenue_change"])
    assert exp["revenue_change"] != 0
    assert dom.score(task, dom.probes(task)["trap_original_for_restated"]).value == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    report = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert report.ok, report.failures
