"""Calendar domains: days between dates, weekday names, adding days, date-format conversion.

Reference answers come from :mod:`datetime` (proleptic Gregorian calendar).

Not covered: time zones, times of day, non-Gregorian calendars, locale month names.
"""

from __future__ import annotations

import datetime as dt
import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score
from posttrain.verifiers.structured import parse_int, parse_word_list, sequence_score
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def rand_date(rng: random.Random, lo: int = 1900, hi: int = 2099) -> dt.date:
    return dt.date(lo, 1, 1) + dt.timedelta(days=rng.randrange((dt.date(hi, 12, 31) - dt.date(lo, 1, 1)).days))


def long_form(d: dt.date) -> str:
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


ID_DAYS_BETWEEN = "text_data.days_between-v1"
DOC_DAYS_BETWEEN = """Number of days from one date to a later one (leap years included).

Exact integer. Not covered: business days. Probes: off-by-one (counting both ends),
the 30-day-month / 365-day-year approximation when it differs.
"""


def _days_between_draw(rng: random.Random, difficulty: int) -> Draft:
    a = rand_date(rng)
    b = a + dt.timedelta(days=rng.randint(1, [40, 800, 20000][difficulty - 1]))
    approx = (b.year - a.year) * 365 + (b.month - a.month) * 30 + (b.day - a.day)
    prompt = (f"How many days are there from {a.isoformat()} to {b.isoformat()} (the second date minus the first)? "
              "Answer with one integer.")
    return Draft(prompt, answer=(b - a).days, hidden={"approx": approx})


def _days_between_check(task: Task, answer: str) -> Score:
    v = 1.0 if parse_int(answer) == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _days_between_probes(task: Task) -> dict[str, str]:
    a = task.hidden["answer"]
    out = {"inclusive": str(a + 1), "minus_one": str(a - 1)}
    if task.hidden["approx"] != a:
        out["approx"] = str(task.hidden["approx"])
    return out


register_domain(SingleTurnDomain(
    ID_DAYS_BETWEEN, _days_between_draw, _days_between_check, _days_between_probes,
    description=DOC_DAYS_BETWEEN))


ID_WEEKDAY = "text_data.weekday-v1"
DOC_WEEKDAY = """Day of the week of a date.

Exact weekday name. Not covered: other calendars. Probes: the next and previous day.
"""


def _weekday_draw(rng: random.Random, difficulty: int) -> Draft:
    d = rand_date(rng, *[(2000, 2030), (1950, 2050), (1600, 2400)][difficulty - 1])
    text = d.isoformat() if difficulty < 3 else long_form(d)
    prompt = f"What day of the week is {text}? Answer with the English weekday name only."
    return Draft(prompt, answer=DAYS[d.weekday()])


def _weekday_check(task: Task, answer: str) -> Score:
    return exact_score(task, answer, task.domain)


def _weekday_probes(task: Task) -> dict[str, str]:
    i = DAYS.index(task.hidden["answer"])
    return {"next_day": DAYS[(i + 1) % 7], "previous_day": DAYS[(i - 1) % 7]}


register_domain(SingleTurnDomain(
    ID_WEEKDAY, _weekday_draw, _weekday_check, _weekday_probes, description=DOC_WEEKDAY))


ID_ADD_DAYS = "text_data.add_days-v1"
DOC_ADD_DAYS = """The date a given number of days after (or before) a date, in ISO format.

Exact ISO date. Not covered: adding months/years. Probes: one day off, the start date.
"""


def _add_days_draw(rng: random.Random, difficulty: int) -> Draft:
    d = rand_date(rng)
    n = rng.randint(1, [30, 400, 5000][difficulty - 1]) * (1 if difficulty < 3 or rng.random() < 0.5 else -1)
    word = f"{n} days after" if n > 0 else f"{-n} days before"
    prompt = f"What date is {word} {d.isoformat()}? Answer in YYYY-MM-DD format only."
    return Draft(prompt, answer=(d + dt.timedelta(days=n)).isoformat(),
                 public={"start": d.isoformat()})


def _add_days_check(task: Task, answer: str) -> Score:
    return exact_score(task, answer, task.domain)


def _add_days_probes(task: Task) -> dict[str, str]:
    a = dt.date.fromisoformat(task.hidden["answer"])
    return {"plus_one": (a + dt.timedelta(days=1)).isoformat(), "start": task.public["start"]}


register_domain(SingleTurnDomain(
    ID_ADD_DAYS, _add_days_draw, _add_days_check, _add_days_probes,
    description=DOC_ADD_DAYS))


FORMATS = [lambda d: long_form(d), lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
           lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}", lambda d: f"{d.year}{d.month:02d}{d.day:02d}"]
FORMAT_NAMES = ["'Month D, YYYY'", "'DD/MM/YYYY' (day first)", "'D Mon YYYY'", "'YYYYMMDD'"]


ID_DATE_FORMAT = "text_data.date_format-v1"
DOC_DATE_FORMAT = """Convert dates written in mixed formats to ISO YYYY-MM-DD.

Partial credit per date (the list length must match). Not covered: ambiguous
month-first formats (the prompt says day-first). Probes: the inputs unchanged,
day and month swapped (when that differs).
"""


def _date_format_draw(rng: random.Random, difficulty: int) -> Draft:
    ds = [rand_date(rng) for _ in range(1 + 2 * difficulty)]
    fmts = [rng.randrange(len(FORMATS)) for _ in ds]
    items = [FORMATS[f](d) for f, d in zip(fmts, ds)]
    prompt = (f"Formats used: {', '.join(FORMAT_NAMES)}.\nDates: " + "; ".join(items)
              + "\nConvert each to YYYY-MM-DD, in order, separated by '; ', nothing else.")
    swapped = [f"{d.year}-{d.day:02d}-{d.month:02d}" for d in ds]
    return Draft(prompt, answer=[d.isoformat() for d in ds],
                 public={"items": items}, hidden={"swapped": swapped})


def _date_format_reference(task: Task) -> str:
    return "; ".join(task.hidden["answer"])


def _date_format_check(task: Task, answer: str) -> Score:
    got = parse_word_list(answer, ";")
    v = sequence_score(got, task.hidden["answer"])
    return Score(v, components={"dates": (v, 1.0)}, verifier_version=task.domain)


def _date_format_probes(task: Task) -> dict[str, str]:
    exp, sw = task.hidden["answer"], task.hidden["swapped"]
    out = {"unchanged": "; ".join(task.public["items"])}
    if all(a != b for a, b in zip(exp, sw)):
        out["day_month_swapped"] = "; ".join(sw)
    return out


register_domain(SingleTurnDomain(
    ID_DATE_FORMAT, _date_format_draw, _date_format_check, _date_format_probes,
    reference=_date_format_reference, description=DOC_DATE_FORMAT))
