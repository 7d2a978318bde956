"""Test reports to per-test results: pytest JUnit XML, TAP, and a simple line format.

What it is: :func:`parse_junit` (JUnit XML as written by ``pytest --junitxml``),
:func:`parse_tap` (Test Anything Protocol, any language) and :func:`parse_lines` (one
``PASS name`` / ``FAIL name`` / ``ok name`` / ``not ok name`` per line), each returning a
:class:`TestReport` with per-test outcomes and ``passed``/``total``; :func:`parse_report`
sniffs the format.

Guarantees: a report that cannot be parsed gives ``TestReport(error=...)`` with
``total == 0``, never an exception and never a fake pass; skipped tests are counted apart and
are not in ``total``; a TAP plan (``1..N``) larger than the results seen counts the missing
tests as failed (a crashed run cannot pass); XML entity expansion is refused.

Does not: run the tests (run them in a sandbox and parse the file or stdout it produced).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TestCase:
    name: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""


@dataclass(frozen=True)
class TestReport:
    cases: tuple[TestCase, ...] = ()
    error: str | None = None
    missing: int = field(default=0)  # planned tests that never reported

    @property
    def passed(self) -> int:
        return sum(c.outcome == "passed" for c in self.cases)

    @property
    def skipped(self) -> int:
        return sum(c.outcome == "skipped" for c in self.cases)

    @property
    def total(self) -> int:
        return sum(c.outcome != "skipped" for c in self.cases) + self.missing

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_dict(self) -> dict:
        return {"passed": self.passed, "total": self.total, "skipped": self.skipped,
                "error": self.error,
                "cases": [{"name": c.name, "outcome": c.outcome, "message": c.message}
                          for c in self.cases]}


def parse_junit(text: str | bytes) -> TestReport:
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "<!ENTITY" in raw or "<!DOCTYPE" in raw:
        return TestReport(error="refusing XML with a DTD or entities")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        return TestReport(error=f"invalid JUnit XML: {exc}")
    cases = []
    for tc in root.iter("testcase"):
        name = "::".join(x for x in (tc.get("classname"), tc.get("name")) if x)
        outcome, message = "passed", ""
        for child in tc:
            tag = child.tag
            if tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                message = (child.get("message") or child.text or "")[:500]
                break
        cases.append(TestCase(name, outcome, message))
    if not cases and root.tag not in ("testsuites", "testsuite"):
        return TestReport(error=f"no testcase elements under <{root.tag}>")
    return TestReport(tuple(cases))


_TAP = re.compile(r"^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*?)\s*(#\s*(SKIP|TODO)\S*.*)?$", re.I)
_PLAN = re.compile(r"^1\.\.(\d+)")


def parse_tap(text: str) -> TestReport:
    cases, plan = [], None
    for line in text.splitlines():
        line = line.strip()
        m = _PLAN.match(line)
        if m:
            plan = int(m.group(1))
            continue
        m = _TAP.match(line)
        if not m:
            continue
        ok = m.group(1).lower() == "ok"
        name = m.group(3) or f"test {m.group(2) or len(cases) + 1}"
        directive = (m.group(5) or "").upper()
        outcome = "skipped" if directive == "SKIP" else ("passed" if ok else "failed")
        cases.append(TestCase(name, outcome))
    if plan is None and not cases:
        return TestReport(error="no TAP plan or results found")
    missing = max(0, (plan or 0) - len(cases))
    return TestReport(tuple(cases), missing=missing)


_LINE = re.compile(r"^(PASS|PASSED|OK|FAIL|FAILED|ERROR|SKIP|SKIPPED)\s*[:\-]?\s+(.+)$", re.I)


def parse_lines(text: str) -> TestReport:
    cases = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            word = m.group(1).upper()
            outcome = ("passed" if word in ("PASS", "PASSED", "OK") else
                       "skipped" if word.startswith("SKIP") else "failed")
            cases.append(TestCase(m.group(2).strip(), outcome))
    if not cases:
        return TestReport(error="no PASS/FAIL lines found")
    return TestReport(tuple(cases))


def parse_report(text: str | bytes) -> TestReport:
    """Sniff the format (JUnit XML, TAP, or PASS/FAIL lines) and parse it."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    head = raw.lstrip()[:200]
    if head.startswith("<"):
        return parse_junit(raw)
    if _PLAN.search(raw[:2000]) or re.search(r"^(not )?ok\b", raw, re.M):
        return parse_tap(raw)
    return parse_lines(raw)
