"""Instruction domains over fixed shapes: filling a form template and writing lines that match
given regular expressions.

- ``instructions.template_fill-v1`` — a form (a fixed title line, ``Label: [rule]`` lines and,
  from d2, a fixed closing line) to reproduce with every bracketed slot replaced by a value
  obeying its rule (a full name, an integer in a range, one of a list, a date in a year, a
  code, an e-mail address at a domain, a time window, a word with a given initial); d3 adds a
  slot that must equal the sum of two others. 3, 5 or 7 slots.
- ``instructions.line_regex-v1`` — exactly n lines, line i fully matching regular expression
  i (built from labels, separators, letter and digit runs, alternations; n = 3, 5, 7).

Reward: template — the fraction of slots whose value obeys its rule, 0 unless the answer
keeps every fixed line and label in order with one value per slot; line_regex — the fraction
of matching lines, 0 unless the line count is exact and the lines are distinct. What they train: following a given shape exactly. Not covered: semantic
checks of the filled values. Probes: the template unfilled, the rules pasted as values, the
regexes written as lines, labels only. (``instructions.combo-v1`` lives in :mod:`.prose`.)
"""

from __future__ import annotations

import random
import re
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.instructions import _kit as K
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import answer_text

FIRST = ["Lena", "Tomas", "Priya", "Kofi", "Aiko", "Mateo", "Sara", "Jonas"]
LAST = ["Hoffmann", "Vidal", "Nair", "Mensah", "Tanaka", "Silva", "Berg", "Okafor"]


def _slot(rng: random.Random, kind: str) -> tuple[dict[str, Any], str]:
    """A slot rule (JSON) and a value obeying it."""
    if kind == "name":
        return {"kind": kind, "regex": r"[A-Z][a-z]+ [A-Z][a-z]+", "text": "full name: first and last, capitalised"}, \
            f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    if kind == "int":
        lo = rng.randint(2, 40)
        hi = lo + rng.randint(5, 30)
        return {"kind": kind, "lo": lo, "hi": hi, "text": f"a whole number from {lo} to {hi}"}, str(rng.randint(lo, hi))
    if kind == "choice":
        opts = rng.sample(["red", "green", "blue", "amber", "violet", "white", "black"], 3)
        return {"kind": kind, "options": opts, "text": "one of: " + " / ".join(opts)}, rng.choice(opts)
    if kind == "date":
        y = rng.randint(2019, 2030)
        return {"kind": kind, "regex": rf"{y}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])",
                "text": f"a date in {y}, written YYYY-MM-DD"}, f"{y}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind == "code":
        k = rng.randint(2, 4)
        return {"kind": kind, "regex": f"[A-Z]{{{k}}}[0-9]{{{k}}}", "text": f"{k} capital letters then {k} digits"}, \
            "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(k)) + "".join(rng.choice("0123456789") for _ in range(k))
    if kind == "email":
        dom = rng.choice(["harbor.org", "mill.net", "club.example"])
        return {"kind": kind, "regex": rf"[a-z]+(\.[a-z]+)?@{re.escape(dom)}", "text": f"an e-mail address at {dom}"}, \
            f"{rng.choice(FIRST).lower()}@{dom}"
    if kind == "time":
        h0 = rng.randint(7, 12)
        h1 = h0 + rng.randint(3, 8)
        return {"kind": kind, "regex": "([01][0-9]|2[0-3]):[0-5][0-9]", "lo": h0 * 60, "hi": h1 * 60 - 1,
                "text": f"a 24-hour time HH:MM from {h0:02d}:00 to {h1 - 1:02d}:59"}, f"{rng.randint(h0, h1 - 1):02d}:{rng.randint(0, 59):02d}"
    letter = rng.choice(sorted(K.LEX))
    return {"kind": "initial", "regex": f"{letter}[a-z]+", "text": f"one lowercase word starting with \"{letter}\""}, \
        rng.choice(K.LEX[letter][0])


def slot_ok(rule: dict[str, Any], value: str, values: dict[str, str]) -> bool:
    k = rule["kind"]
    if k in ("int", "sum"):
        if not re.fullmatch(r"-?[0-9]+", value):
            return False
        if k == "sum":
            parts = [values.get(r, "") for r in rule["of"]]
            return all(re.fullmatch(r"-?[0-9]+", p) for p in parts) and int(value) == sum(int(p) for p in parts)
        return rule["lo"] <= int(value) <= rule["hi"]
    if k == "choice":
        return value in rule["options"]
    if not re.fullmatch(rule["regex"], value):
        return False
    if k == "time":
        return rule["lo"] <= int(value[:2]) * 60 + int(value[3:]) <= rule["hi"]
    return True


LABELS = ["Contact", "Guests", "Colour", "Date", "Reference", "Email", "Arrival", "Keyword"]
KINDS = ["name", "int", "choice", "date", "code", "email", "time", "initial"]


ID_TEMPLATE_FILL = "instructions.template_fill-v1"


def _template_fill_draw(rng: random.Random, difficulty: int) -> Draft:
    topic = rng.choice(sorted(K.TOPICS))
    n = 1 + 2 * difficulty
    picks = sorted(rng.sample(range(len(KINDS)), n - (1 if difficulty == 3 else 0)))
    lines, ref, slots = [f"=== {topic.capitalize()} club booking ==="], [], []
    ref.append(lines[0])
    values: dict[str, str] = {}
    for i in picks:
        rule, value = _slot(rng, KINDS[i])
        slots.append({"label": LABELS[i], **rule})
        values[LABELS[i]] = value
    if difficulty == 3:
        a, b = "Adults", "Children"
        for lab in (a, b):
            rule, value = _slot(rng, "int")
            slots.append({"label": lab, **rule})
            values[lab] = value
        slots.append({"label": "Total", "kind": "sum", "of": [a, b], "text": f"{a} plus {b}"})
        values["Total"] = str(int(values[a]) + int(values[b]))
    for s in slots:
        lines.append(f"{s['label']}: [{s['text']}]")
        ref.append(f"{s['label']}: {values[s['label']]}")
    if difficulty >= 2:
        closing = f"Thank you for booking with the {topic} club."
        lines.append(closing)
        ref.append(closing)
    prompt = ("Fill in this form. Reproduce every line exactly, replacing each bracketed slot (brackets included) "
              "with a value that obeys the rule written inside it. Answer with the filled form only.\n\n"
              + "\n".join(lines))
    return Draft(prompt, public={"topic": topic},
                 hidden={"template": lines, "slots": slots, "reference": "\n".join(ref)})


def _template_fill_check(task: Task, answer: str) -> Score:
    text = answer_text(answer or "") or ""
    got = [ln.strip() for ln in text.splitlines() if ln.strip()]
    tmpl, slots = task.hidden["template"], task.hidden["slots"]
    by_label = {s["label"]: s for s in slots}
    values, shape_ok = {}, len(got) == len(tmpl)
    for g, t in zip(got, tmpl):
        lab = t.split(":", 1)[0]
        if lab in by_label and t.startswith(f"{lab}: ["):
            shape_ok &= g.startswith(f"{lab}: ")
            values[lab] = g[len(lab) + 2:].strip() if g.startswith(f"{lab}: ") else ""
        else:
            shape_ok &= g == t
    comps = {f"slot:{s['label']}": (1.0 if slot_ok(s, values.get(s["label"], ""), values) else 0.0, 1.0)
             for s in slots}
    met = sum(v for v, _ in comps.values())
    if not shape_ok:
        return Score(0.0, components=comps, passed=int(met), total=len(comps),
                     reason="the fixed lines or labels do not match the template", verifier_version=task.domain)
    return Score.weighted(comps, passed=int(met), total=len(comps), reason=f"{met:.0f}/{len(comps)} slots valid",
                          verifier_version=task.domain)


def _template_fill_probes(task: Task) -> dict[str, str]:
    tmpl = task.hidden["template"]
    return {"template_verbatim": "\n".join(tmpl),
            "rules_as_values": "\n".join(t.replace("[", "").replace("]", "") for t in tmpl),
            "labels_only": "\n".join(t.split("[")[0].strip() for t in tmpl)}


PIECES = [(r"[A-Z]{3}", lambda r: "".join(r.choice("ABCDEFGHKLMNPRSTW") for _ in range(3))),
          (r"[0-9]{4}", lambda r: f"{r.randint(0, 9999):04d}"),
          (r"[a-z]+", lambda r: r.choice(K.LEX[r.choice(sorted(K.LEX))][1])),
          (r"(alpha|beta|gamma)", lambda r: r.choice(["alpha", "beta", "gamma"])),
          (r"([01][0-9]|2[0-3]):[0-5][0-9]", lambda r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"),
          (r"[A-Z][a-z]+", lambda r: r.choice(FIRST)),
          (r"[0-9]+\.[0-9]{2}", lambda r: f"{r.randint(0, 999)}.{r.randint(0, 99):02d}"),
          (r"(yes|no)", lambda r: r.choice(["yes", "no"]))]
SEPS = [": ", " - ", "=", " / ", " #"]
TAGS = ["ID", "REF", "TAG", "LOT", "BIN", "KEY", "ROW", "SET", "JOB"]


ID_LINE_REGEX = "instructions.line_regex-v1"


def _line_regex_draw(rng: random.Random, difficulty: int) -> Draft:
    n = 1 + 2 * difficulty
    regexes, ref = [], []
    for tag in rng.sample(TAGS, n):
        k = rng.randint(1, 1 + difficulty)
        rx, txt = re.escape(tag), tag
        for _ in range(k):
            sep = rng.choice(SEPS)
            pat, gen = rng.choice(PIECES)
            rx, txt = rx + re.escape(sep) + pat, txt + sep + gen(rng)
        regexes.append(rx)
        ref.append(txt)
    listed = "\n".join(f"line {i + 1}: {rx}" for i, rx in enumerate(regexes))
    prompt = (f"Write exactly {n} lines. Line i must fully match regular expression i (Python syntax, the whole "
              f"line):\n{listed}\nAnswer with the {n} lines only.")
    return Draft(prompt, public={"n": n},
                 hidden={"regexes": regexes, "reference": "\n".join(ref)})


def _line_regex_check(task: Task, answer: str) -> Score:
    text = answer_text(answer or "") or ""
    got = [ln.strip() for ln in text.splitlines() if ln.strip()]
    rx = task.hidden["regexes"]
    comps = {f"line{i + 1}": (1.0 if i < len(got) and len(got[i]) <= 200 and re.fullmatch(r, got[i]) else 0.0, 1.0)
             for i, r in enumerate(rx)}
    met = int(sum(v for v, _ in comps.values()))
    tags = [re.match(r"[A-Z]+", r).group(0) for r in rx]
    if len(got) != len(rx) or len(set(got)) != len(got) or not all(g.startswith(t) for g, t in zip(got, tags)):
        return Score(0.0, components=comps, passed=met, total=len(rx), verifier_version=task.domain,
                     reason=f"{len(got)} lines (distinct: {len(set(got))}), {len(rx)} asked, each opening with its label")
    return Score.weighted(comps, passed=met, total=len(rx), reason=f"{met}/{len(rx)} lines match",
                          verifier_version=task.domain)


def _line_regex_probes(task: Task) -> dict[str, str]:
    rx = task.hidden["regexes"]
    return {"regexes_as_lines": "\n".join(rx), "unescaped": "\n".join(r.replace("\\", "") for r in rx),
            "tags_only": "\n".join(re.match(r"[A-Z]+", r).group(0) for r in rx)}


register_domain(SingleTurnDomain(
    ID_TEMPLATE_FILL, _template_fill_draw, _template_fill_check, _template_fill_probes, reference=K.stored_reference,
    description="Filling a form template: every fixed line kept, every slot a value obeying its rule.\n\n"
                "3, 5 or 7 slots (names, ranged integers, choices, dates, codes, e-mail addresses, time windows, "
                "initials); a fixed closing line from d2, a slot equal to the sum of two others at d3."))
register_domain(SingleTurnDomain(
    ID_LINE_REGEX, _line_regex_draw, _line_regex_check, _line_regex_probes, reference=K.stored_reference,
    description="Writing lines that each fully match a given regular expression.\n\n"
                "Exactly n lines (3, 5, 7), line i matching regular expression i, distinct, each opening with its label."))
