"""Calendar domains: days between dates, weekday names, adding days, date-format conversion.

Reference answers come from :mod:`datetime` (proleptic Gregorian calendar).

Not covered: time zones, times of day, non-Gregorian calendars, locale month names.
"""

from __future__ import annotations

import datetime as dt
import random

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score, make_task
from posttrain.verifiers.structured import parse_int, parse_word_list, sequence_score
from posttrain.domains.base import register_domain

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def rand_date(rng: random.Random, lo: int = 1900, hi: int = 2099) -> dt.date:
    return dt.date(lo, 1, 1) + dt.timedelta(days=rng.randrange((dt.date(hi, 12, 31) - dt.date(lo, 1, 1)).days))


def long_form(d: dt.date) -> str:
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


class _Base:
    family = "text_data"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    id = ""

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])


@register_domain
class DaysBetween(_Base):
    """Number of days from one date to a later one (leap years included).

    Exact integer. Not covered: business days. Probes: off-by-one (counting both ends),
    the 30-day-month / 365-day-year approximation when it differs.
    """

    id = "text_data.days_between-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        a = rand_date(rng)
        b = a + dt.timedelta(days=rng.randint(1, [40, 800, 20000][difficulty - 1]))
        approx = (b.year - a.year) * 365 + (b.month - a.month) * 30 + (b.day - a.day)
        prompt = (f"How many days are there from {a.isoformat()} to {b.isoformat()} (the second date minus the first)? "
                  "Answer with one integer.")
        return make_task(self.id, difficulty, prompt, answer=(b - a).days, hidden={"approx": approx})

    def score(self, task: Task, answer: str) -> Score:
        v = 1.0 if parse_int(answer) == task.hidden["answer"] else 0.0
        return Score(v, components={"exact": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        a = task.hidden["answer"]
        out = {"inclusive": str(a + 1), "minus_one": str(a - 1)}
        if task.hidden["approx"] != a:
            out["approx"] = str(task.hidden["approx"])
        return out


@register_domain
class Weekday(_Base):
    """Day of the week of a date.

    Exact weekday name. Not covered: other calendars. Probes: the next and previous day.
    """

    id = "text_data.weekday-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        d = rand_date(rng, *[(2000, 2030), (1950, 2050), (1600, 2400)][difficulty - 1])
        text = d.isoformat() if difficulty < 3 else long_form(d)
        prompt = f"What day of the week is {text}? Answer with the English weekday name only."
        return make_task(self.id, difficulty, prompt, answer=DAYS[d.weekday()])

    def score(self, task: Task, answer: str) -> Score:
        return exact_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, str]:
        i = DAYS.index(task.hidden["answer"])
        return {"next_day": DAYS[(i + 1) % 7], "previous_day": DAYS[(i - 1) % 7]}


@register_domain
class AddDays(_Base):
    """The date a given number of days after (or before) a date, in ISO format.

    Exact ISO date. Not covered: adding months/years. Probes: one day off, the start date.
    """

    id = "text_data.add_days-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        d = rand_date(rng)
        n = rng.randint(1, [30, 400, 5000][difficulty - 1]) * (1 if difficulty < 3 or rng.random() < 0.5 else -1)
        word = f"{n} days after" if n > 0 else f"{-n} days before"
        prompt = f"What date is {word} {d.isoformat()}? Answer in YYYY-MM-DD format only."
        return make_task(self.id, difficulty, prompt, answer=(d + dt.timedelta(days=n)).isoformat(),
                         public={"start": d.isoformat()})

    def score(self, task: Task, answer: str) -> Score:
        return exact_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, str]:
        a = dt.date.fromisoformat(task.hidden["answer"])
        return {"plus_one": (a + dt.timedelta(days=1)).isoformat(), "start": task.public["start"]}


FORMATS = [lambda d: long_form(d), lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
           lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}", lambda d: f"{d.year}{d.month:02d}{d.day:02d}"]
FORMAT_NAMES = ["'Month D, YYYY'", "'DD/MM/YYYY' (day first)", "'D Mon YYYY'", "'YYYYMMDD'"]


@register_domain
class DateFormat(_Base):
    """Convert dates written in mixed formats to ISO YYYY-MM-DD.

    Partial credit per date (the list length must match). Not covered: ambiguous
    month-first formats (the prompt says day-first). Probes: the inputs unchanged,
    day and month swapped (when that differs).
    """

    id = "text_data.date_format-v1"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        ds = [rand_date(rng) for _ in range(1 + 2 * difficulty)]
        fmts = [rng.randrange(len(FORMATS)) for _ in ds]
        items = [FORMATS[f](d) for f, d in zip(fmts, ds)]
        prompt = (f"Formats used: {', '.join(FORMAT_NAMES)}.\nDates: " + "; ".join(items)
                  + "\nConvert each to YYYY-MM-DD, in order, separated by '; ', nothing else.")
        swapped = [f"{d.year}-{d.day:02d}-{d.month:02d}" for d in ds]
        return make_task(self.id, difficulty, prompt, answer=[d.isoformat() for d in ds],
                         public={"items": items}, hidden={"swapped": swapped})

    def solve(self, task: Task) -> str:
        return "; ".join(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        got = parse_word_list(answer, ";")
        v = sequence_score(got, task.hidden["answer"])
        return Score(v, components={"dates": (v, 1.0)}, verifier_version=self.id)

    def probes(self, task: Task) -> dict[str, str]:
        exp, sw = task.hidden["answer"], task.hidden["swapped"]
        out = {"unchanged": "; ".join(task.public["items"])}
        if all(a != b for a, b in zip(exp, sw)):
            out["day_month_swapped"] = "; ".join(sw)
        return out
