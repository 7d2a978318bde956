"""Shared plumbing of the real-tier filing domains: a plan → task → env (document tools) → score.

What it is: :class:`DocDomain`, a frozen record of one domain's parts (composition, DESIGN.md
§8: each domain module builds one with its ``plan(rng, difficulty) -> DocPlan`` and registers
it). A :class:`DocPlan` names the documents (path → spec of :mod:`.filings_sections`), the
asked fields (each with the page the reference reads it from), the consistency checks and the
traps (complete wrong answers: another year's values...). The env is a
:class:`~posttrain.envs.tool_env.ToolEnv` over the four tools of
:mod:`posttrain.tools.document_tool` on a pooled sandbox whose ``/work`` receives the PDFs at
setup; the verifier is :func:`posttrain.verifiers.fields_checks.score_document_fields` on the
final turn, which must be exactly one ``<answer>`` block (:func:`strict_answer`).

Guarantees: the task is plain JSON (the document specs, not the bytes, travel in ``hidden``;
the PDF is rendered again where the env is built — deterministic, cached per spec — and the
tools refuse any other bytes); the reference trajectory opens every document, reads exactly
the pages the plan names (extract_tables or read_page, or a search first for long documents)
and answers; probes (each must score at the floor): every amount ×1000 and ÷1000 (the right
number at the wrong scale), the plan's traps (kept only when every field is wrong), padded
candidates per field, an empty object, and the reference's tool calls followed by a padded
answer. Does not: grade the route (an answer right without opening a document scores 1; the
numbers are nowhere but in the PDFs).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.finance import _kit
from posttrain.domains.finance.filings_sections import build_layout, build_pdf
from posttrain.envs.tool_env import ToolEnv, format_answer, format_calls, pool_lease
from posttrain.tools.document_tool import document_tools
from posttrain.verifiers.fields import FieldSpec
from posttrain.verifiers.fields_checks import Check, correct, score_document_fields

SYSTEM = ("You are a financial analyst with document tools: open_document, read_page, search_document and "
          "extract_tables. Call them as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call> (several "
          "per turn allowed), read what you need, then reply with <answer>{one JSON object}</answer>.")


@dataclass(frozen=True)
class DocField:
    """An asked field, its expected value (in the asked unit), its question, and where the
    reference reads it: ``(tool, path, page)`` with tool ``extract_tables`` or ``read_page``."""

    spec: FieldSpec
    value: Any
    question: str
    read: tuple[str, str, int]


@dataclass(frozen=True)
class DocPlan:
    docs: Mapping[str, Mapping[str, Any]]
    fields: Sequence[DocField]
    intro: str
    scale: float | None
    checks: Sequence[Check] = ()
    traps: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    gates: Mapping[str, str] = field(default_factory=dict)
    searches: Sequence[tuple[str, str]] = ()  # (path, query) the reference searches first


def _plain(v: Any) -> Any:
    return v if isinstance(v, str) else round(float(v), 6)


def build_task(domain_id: str, difficulty: int, plan: DocPlan) -> Task:
    pages = {path: build_layout(spec).page_count for path, spec in plan.docs.items()}
    specs = [f.spec for f in plan.fields]
    exp = {f.spec.name: _plain(f.value) for f in plan.fields}
    listing = "\n".join(f"- {p} ({n} pages)" for p, n in pages.items())
    qs = "\n".join(f"- {f.spec.name}: {f.question}" for f in plan.fields)
    prompt = (f"{plan.intro}\n\nDocuments in /work:\n{listing}\n\nQuestions:\n{qs}\n\n"
              f"{_kit.instructions(plan.scale, [s.name for s in specs])}")
    traps = {}
    for name, trap in plan.traps.items():
        t = {s.name: _plain(trap.get(s.name, "none")) for s in specs}
        ok = {s.name: correct(t[s.name], exp[s.name], s) for s in specs}
        for f, needs in plan.gates.items():  # a gated field counts only with the field it needs
            ok[f] = ok[f] and ok[needs]
        if not any(ok.values()):  # a trap with some right fields is partial credit, not a probe
            traps[name] = t
    reads = sorted({f.read for f in plan.fields}, key=lambda r: (r[1], r[2], r[0]))
    hidden = {"docs": {p: dict(s) for p, s in plan.docs.items()}, "fields": [s.to_dict() for s in specs],
              "expected": exp, "checks": [c.to_dict() for c in plan.checks], "gates": dict(plan.gates),
              "traps": traps, "reads": [list(r) for r in reads], "searches": [list(s) for s in plan.searches]}
    return make_task(domain_id, difficulty, prompt, system=SYSTEM, hidden=hidden,
                     public={"documents": pages, "keys": [s.name for s in specs]},
                     metadata={"pages": sum(pages.values()), "documents": len(pages)})


def specs_of(task: Task) -> list[FieldSpec]:
    return [FieldSpec.from_dict(d) for d in task.hidden["fields"]]


def strict_answer(text: str) -> str:
    """The JSON of a final turn that is exactly one ``<answer>`` block (or bare JSON); else ``""``.

    Anything around the block — candidates listed before it, a second block, the block
    repeated — makes the answer empty: padding must never reach the field scorer, which would
    otherwise read the one well-formed block among the guesses."""
    t = (text or "").strip()
    if t.startswith("<answer>") and t.endswith("</answer>"):
        inner = t[len("<answer>"):-len("</answer>")]
        return "" if "<answer>" in inner or "</answer>" in inner else inner.strip()
    return "" if "<answer>" in t or "</answer>" in t else t


def score_answer(task: Task, answer: str, version: str) -> Score:
    """The reward of a final turn's text (see :func:`strict_answer`)."""
    return score_document_fields(strict_answer(answer), specs_of(task), task.hidden["expected"],
                                 [Check.from_dict(c) for c in task.hidden["checks"]], version,
                                 task.hidden.get("gates"))


def reference_json(task: Task) -> str:
    return json.dumps(task.hidden["expected"])


def _chunks(calls: list[tuple[str, dict]], n: int = 8) -> list[str]:
    return [format_calls(*calls[i:i + n]) for i in range(0, len(calls), n)]


def tool_turns(task: Task) -> list[str]:
    """The reference's tool turns: open every document (and search), then read the pages."""
    first = [("open_document", {"path": p}) for p in task.hidden["docs"]]
    first += [("search_document", {"path": p, "query": q}) for p, q in task.hidden["searches"]]
    reads = [(tool, {"path": p, "page": page}) for tool, p, page in task.hidden["reads"]]
    return _chunks(first) + _chunks(reads)


def _mapped(task: Task, f: Callable[[float], float]) -> dict[str, Any]:
    exp = task.hidden["expected"]
    return {s.name: ("none" if s.kind == "choice" else _plain(f(float(exp[s.name])))) for s in specs_of(task)}


def probes(task: Task) -> dict[str, Any]:
    exp = task.hidden["expected"]
    padded = {s.name: exp[s.name] if s.kind == "choice" else
              ", ".join(str(_plain(float(exp[s.name]) * k)) for k in (0.001, 0.5, 1, 2, 1000)) for s in specs_of(task)}
    out: dict[str, Any] = {
        "wrong_scale_up": json.dumps(_mapped(task, lambda x: x * 1000)),
        "wrong_scale_down": json.dumps(_mapped(task, lambda x: x / 1000)),
        "padded_candidates": json.dumps(padded),
        "empty_object": format_answer("{}"),
        "tools_then_padding": tool_turns(task) + [format_answer(json.dumps(padded))],
    }
    for name, vals in task.hidden["traps"].items():
        out[f"trap_{name}"] = format_answer(json.dumps(vals))
    return out


def make_env(task: Task, domain_id: str, max_turns: int) -> ToolEnv:
    import hashlib

    data = {path: build_pdf(spec) for path, spec in task.hidden["docs"].items()}
    tools = document_tools({path: hashlib.sha256(b).hexdigest() for path, b in data.items()})

    def setup(sb: Any) -> None:
        for path, b in data.items():
            sb.write_file(path, b)

    def verify(env: ToolEnv, trajectory: Any) -> Score:
        turns = getattr(trajectory, "turns", ())
        final = turns[-1].action.text if turns and env.answer is not None else ""
        return score_answer(env.task, final, domain_id)

    # the tools cap their own output (6000 characters, with a note); the env's clip is a backstop
    return ToolEnv(task, tools, pool_lease(), verify, max_turns=max_turns, setup=setup,
                   max_output_chars=8000, verifier_version=domain_id)


@dataclass(frozen=True)
class DocDomain:
    """One real-tier filing domain assembled from its plan function (see the module docstring)."""

    id: str
    plan: Callable[[random.Random, int], DocPlan]
    family: str = "finance"
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "sandbox"  # the PDFs live in the episode's sandbox (/work)
    tier: str = "real"
    max_turns: int = 8
    description: str = ""  # one line: the skill (``domains list``, the catalogue)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return build_task(self.id, difficulty, self.plan(rng, difficulty))

    def make_env(self, task: Task) -> ToolEnv:
        return make_env(task, self.id, self.max_turns)

    def solve(self, task: Task) -> str:
        return format_answer(reference_json(task))

    def reference_actions(self, task: Task) -> list[str]:
        return tool_turns(task) + [self.solve(task)]

    def score(self, task: Task, answer: str) -> Score:
        return score_answer(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, Any]:
        return probes(task)
