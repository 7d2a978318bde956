"""Screen state, form: fill a web form seen only as screenshots (``tools.screen_form-v1``).

Visual, multi-turn (env kind ``tool``): every observation is a *new* screenshot of the form.
The text gives the data to enter; the screenshot alone shows each field's id (random per
task), the date format the form wants, the options and their prices, and — after a submit —
the errors. Tools: ``fill(field, value)`` (by id) and ``submit()``; a turn without a tool
call ends the episode (``<answer>done</answer>``).

Levels: 1 = name and email; 2 = four fields: + a date (in the format the placeholder shows)
and a plan (the cheapest or the dearest of the options shown); 3 = + a quantity whose limit
the form reveals only as an error after a submit ("at most N per order"): the policy must
look at the error and correct the value ("look and correct").

Score: 0 unless the form was accepted; then 1 when every submitted field is right, else
``0.5 × (right / fields)²``. Probes: submit at once, stop at once, made-up ids, the date as
written in the text, and (level 3) ignoring the quantity error.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains._vision_kit import LookDomain
from posttrain.domains.base import register_domain
from posttrain.domains.tools._api import FunctionTool
from posttrain.domains.tools._screens import FieldView, FormView, form_png
from posttrain.envs.tool_env import format_answer, format_call, format_calls

DOMAIN = "tools.screen_form-v1"
DONE = format_answer("done")
FIRST = ("Ada", "Bruno", "Chiara", "Dev", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas")
LAST = ("Moreau", "Okafor", "Lindqvist", "Tanaka", "Silva", "Novak", "Haddad", "Brennan")
PLANS = ("Basic", "Plus", "Pro", "Team", "Starter", "Max")
DATE_FORMATS = {"YYYY-MM-DD": "%Y-%m-%d", "DD/MM/YYYY": "%d/%m/%Y", "MM/DD/YYYY": "%m/%d/%Y"}
TITLES = ("Order form", "Subscription", "Booking request", "Account set-up")
KINDS = {1: ("name", "email"), 2: ("name", "email", "date", "plan"),
         3: ("name", "email", "date", "plan", "quantity")}
LABELS = {"name": "Full name", "email": "Email", "date": "Start date", "plan": "Plan",
          "quantity": "Quantity"}


def _ids(rng: random.Random, n: int) -> list[str]:
    pool = [f"{c}{d}" for c in "abcdefghjkmnpqrstuvwxyz" for d in range(1, 10)]
    return rng.sample(pool, n)


def build(rng: random.Random, level: int) -> Task:
    kinds = list(KINDS[level])
    rng.shuffle(kinds)
    ids = dict(zip(kinds, _ids(rng, len(kinds))))
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    email = f"{name.split()[0].lower()}.{rng.randint(10, 99)}@example.org"
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(700))
    fmt = rng.choice(sorted(DATE_FORMATS))
    plans = rng.sample(PLANS, 2 + level)
    prices = rng.sample(range(5, 80), len(plans))
    cheapest = rng.random() < 0.5
    pick = plans[prices.index(min(prices) if cheapest else max(prices))]
    asked, limit = rng.randint(6, 12), rng.randint(2, 5)
    fields = {k: {"fid": ids[k], "label": LABELS[k]} for k in kinds}
    if "date" in fields:
        fields["date"]["placeholder"] = fmt
    if "plan" in fields:
        fields["plan"]["options"] = [[p, f"${c} / month"] for p, c in zip(plans, prices)]
    expected = {"name": name, "email": email, "date": day.strftime(DATE_FORMATS[fmt]),
                "plan": pick, "quantity": str(min(asked, limit))}
    data = {"name": f"name {name}", "email": f"email {email}",
            "date": f"start date {f'{day:%B} {day.day}, {day.year}'} (as the form asks)",
            "plan": f"the {'cheapest' if cheapest else 'most expensive'} plan",
            "quantity": f"quantity {asked}, or the most the form allows if that is fewer"}
    text = (f"Fill in the form in the screenshot and submit it. Data: "
            f"{'; '.join(data[k] for k in KINDS[level])}. Use fill(field, value) with the field "
            f"ids shown on the form and submit(); every call shows the form again. When the form "
            f"is accepted, reply {DONE} without a tool call.")
    return make_task(DOMAIN, level, text, hidden={
        "title": rng.choice(TITLES), "order": kinds, "fields": fields,
        "expected": {k: expected[k] for k in kinds}, "asked": str(asked), "limit": limit,
        "written_date": f"{day:%B} {day.day}, {day.year}"})


def _start(task: Task) -> dict[str, Any]:
    return {"values": {}, "errors": {}, "banner": "", "ok": False, "submitted": None,
            "form": task.hidden}


def _check(form: dict[str, Any], kind: str, value: str) -> str:
    """The form's own validation message for one field ("" when valid)."""
    if not value.strip():
        return "This field is required."
    if kind == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", value.strip()):
        return "Enter a valid email address."
    if kind == "date":
        fmt = DATE_FORMATS[form["fields"]["date"]["placeholder"]]
        try:
            dt.datetime.strptime(value.strip(), fmt)
        except ValueError:
            return f"Use the format {form['fields']['date']['placeholder']}."
    if kind == "quantity":
        if not value.strip().isdigit() or int(value) < 1:
            return "Enter a whole number of at least 1."
        if int(value) > int(form["limit"]):
            return f"At most {form['limit']} per order."
    return ""


def _tools(state: dict[str, Any]) -> list[FunctionTool]:
    form = state["form"]
    kind_of = {f["fid"]: k for k, f in form["fields"].items()}

    def fill(st: dict[str, Any], field: str, value: str) -> dict[str, str]:
        if field not in kind_of:
            raise ValueError(f"no field {field!r} on this form")
        opts = [o[0] for o in form["fields"][kind_of[field]].get("options", [])]
        if opts and value not in opts:
            raise ValueError(f"{value!r} is not one of this field's options")
        st["values"][field] = value
        st["errors"].pop(field, None)
        st["banner"] = ""
        return {"field": field, "value": value}

    def submit(st: dict[str, Any]) -> dict[str, Any]:
        st["errors"] = {fid: msg for fid, k in kind_of.items()
                        if (msg := _check(form, k, st["values"].get(fid, "")))}
        st["ok"] = not st["errors"]
        st["banner"] = "Thank you, the form was accepted." if st["ok"] else "Please correct the errors shown."
        if st["ok"]:
            st["submitted"] = {k: st["values"][fid] for fid, k in kind_of.items()}
        return {"accepted": st["ok"], "errors": len(st["errors"])}

    return [FunctionTool("fill", "Type a value into a form field (by its id), or pick an option.",
                         {"field": {"type": "string", "maxLength": 8},
                          "value": {"type": "string", "maxLength": 80}}, fill, state),
            FunctionTool("submit", "Press the form's Submit button.", {}, submit, state)]


def _draw(task: Task, state: dict[str, Any]) -> list[bytes]:
    form = task.hidden
    rows = []
    for k in form["order"]:
        f = form["fields"][k]
        rows.append(FieldView(f["fid"], f["label"], state["values"].get(f["fid"]),
                              f.get("placeholder", ""), tuple(tuple(o) for o in f.get("options", [])),
                              state["errors"].get(f["fid"], "")))
    return [form_png(FormView(form["title"], tuple(rows), state["banner"], state["ok"]))]


def _judge(task: Task, state: dict[str, Any], answer: str | None) -> Score:
    sub, want = state["submitted"], task.hidden["expected"]
    if not sub:
        return Score(0.0, components={"accepted": (0.0, 1.0)}, reason="the form was never accepted",
                     verifier_version=DOMAIN)
    right = sum(sub[k].strip().lower() == want[k].lower() for k in want)
    frac = right / len(want)
    value = 1.0 if right == len(want) else 0.5 * frac * frac
    return Score(value, components={"accepted": (1.0, 0.0), "fields_right": (frac, 1.0)},
                 reason=f"accepted; {right}/{len(want)} fields right", verifier_version=DOMAIN)


def _fills(task: Task, values: dict[str, str]) -> str:
    f = task.hidden["fields"]
    return format_calls(*[("fill", {"field": f[k]["fid"], "value": v}) for k, v in values.items()])


SUBMIT = format_call("submit", {})


def _reference(task: Task) -> list[str]:
    want = dict(task.hidden["expected"])
    if "quantity" not in want:
        return [_fills(task, want), SUBMIT, DONE]
    first = {**want, "quantity": task.hidden["asked"]}  # as asked; the form then shows the limit
    return [_fills(task, first), SUBMIT, _fills(task, {"quantity": want["quantity"]}), SUBMIT, DONE]


def _probes(task: Task) -> dict[str, list[str]]:
    want = dict(task.hidden["expected"])
    made_up = format_calls(*[("fill", {"field": f"q0{i}", "value": v}) for i, v in enumerate(want.values())])
    out = {"submit_at_once": [SUBMIT, DONE], "stop_at_once": [DONE],
           "made_up_ids": [made_up, SUBMIT, DONE]}
    if "date" in want:
        out["date_as_written"] = [_fills(task, {**want, "date": task.hidden["written_date"]}), SUBMIT, DONE]
    if "quantity" in want:
        out["ignore_error"] = [_fills(task, {**want, "quantity": task.hidden["asked"]}), SUBMIT, DONE]
    return out


register_domain(LookDomain(
    DOMAIN, "tools", build, _start, _tools, _draw, _judge, _reference, _probes, max_turns=8,
    description="Screen state (visual): fill a form seen only as screenshots, correcting errors it shows."))
