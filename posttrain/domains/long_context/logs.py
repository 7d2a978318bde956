"""Long-context domains over long machine logs: conditional counts, timelines, statistics.

- ``long_context.log_count-v1`` — an access log of 40 to 1,100 lines; count the events of one
  user with a status (d1), an action (d2), a region (d3) and a date window (d4). Users with
  near-miss names (same first or last name) and events matching all but one condition are
  planted. Exact integer.
- ``long_context.timeline-v1`` — incident reports scattered through a long report with dates
  in mixed formats (ISO, "March 4, 2021", day/month/year); order the asked incidents
  chronologically. Above d2 some reports also mention a date the incident was *originally
  scheduled* for (a trap). Scored by pairwise order agreement rescaled so that a random or
  reversed order earns 0 (2c - 1, clipped); the question lists the ids in an order, and the
  document mentions them in an order, that agree with about half the pairs (so neither that
  order nor its reverse earns more than 0.05).
- ``long_context.record_stats-v1`` — sensor readings; count, minimum, maximum and mean of one
  sensor's readings (JSON, field scoring); from d3 flagged-invalid readings must be excluded.
  Sensors with look-alike ids are present.

Difficulty is length (~3k to ~100k characters) and distractor density. What they train:
exhaustive scanning with conditions, date normalisation, aggregation without skipping.
Not covered: time zones, counting across several documents, missing-data imputation.

Probes: the count without the last condition, off by one, all of the user's events; the
reversed order, the question's order, the order of mention; statistics including invalid
readings or of the look-alike sensor (kept when every field is wrong).
"""

from __future__ import annotations

import json
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, exact_check
from posttrain.domains.long_context import _kit as K
from posttrain.domains.long_context._corpus import CITIES, filler, make_people
from posttrain.verifiers.fields import FieldSpec, field_correct

LINES = {1: 40, 2: 160, 3: 480, 4: 1100}
ACTIONS = ["login", "download", "upload", "delete", "share"]
STATUSES = ["OK", "FAIL", "DENIED"]
REGIONS = ["eu-west", "us-east", "ap-south", "sa-east"]


def _event(rng: random.Random, user: str) -> dict:
    return {"day": rng.randint(1, 90), "t": f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}", "user": user,
            "action": rng.choice(ACTIONS), "status": rng.choice(STATUSES), "region": rng.choice(REGIONS)}


ID_LOG_COUNT = "long_context.log_count-v1"


def _log_count_draw(rng: random.Random, difficulty: int) -> Draft:
    people = make_people(rng, 6 + 4 * difficulty, 0.5)
    users = [p["name"].lower().replace(" ", ".") for p in people]
    target = _event(rng, rng.choice(users))
    keys = ["user", "status", "action", "region"][: 1 + min(difficulty, 3)]
    lo, hi = sorted(rng.sample(range(1, 91), 2)) if difficulty == 4 else (1, 90)
    events = [_event(rng, rng.choice(users)) for _ in range(LINES[difficulty])]
    for _ in range(rng.randint(2, 6)):  # matches, and near matches missing exactly one condition
        events.append({**_event(rng, target["user"]), **{k: target[k] for k in keys}, "day": rng.randint(lo, hi)})
        miss = rng.choice(keys[1:])
        events.append({**_event(rng, target["user"]), **{k: target[k] for k in keys if k != miss}})
    events.sort(key=lambda e: (e["day"], e["t"]))

    def match(e: dict, ks: list[str], window: bool) -> bool:
        return all(e[k] == target[k] for k in ks) and (not window or lo <= e["day"] <= hi)

    n = sum(match(e, keys, difficulty == 4) for e in events)
    looser = sum(match(e, keys[:-1], False) for e in events) if difficulty < 4 else sum(
        match(e, keys, False) for e in events)
    log = "\n".join(f"day {e['day']:02d} {e['t']} user={e['user']} action={e['action']} status={e['status']} "
                    f"region={e['region']}" for e in events)
    cond = [f"by user {target['user']}", f"with status {target['status']}"]
    cond += [f"for action {target['action']}"] if "action" in keys else []
    cond += [f"in region {target['region']}"] if "region" in keys else []
    cond += [f"on days {lo} to {hi} inclusive"] if difficulty == 4 else []
    q = (f"ACCESS LOG (one event per line)\n{log}\n\nQuestion: how many events are there {', '.join(cond)}? "
         "Answer with a single integer.")
    return Draft(q, answer=str(n),
                 hidden={"looser": looser, "all_user": sum(e["user"] == target["user"] for e in events)})


def _log_count_probes(task: Task) -> dict[str, str]:
    a = int(task.hidden["answer"])
    out = {"plus_one": str(a + 1), "minus_one": str(a - 1)}
    for k in ("looser", "all_user"):
        if task.hidden[k] != a:
            out[k] = str(task.hidden[k])
    return out


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
KINDS = ["power outage", "network partition", "chemical spill", "forklift collision", "server fire", "flooded basement"]


def _fmt_date(rng: random.Random, d: int) -> str:
    y, rest = 2015 + d // 336, d % 336
    m, day = rest // 28 + 1, rest % 28 + 1
    return rng.choice([f"{y}-{m:02d}-{day:02d}", f"{MONTHS[m - 1]} {day}, {y}", f"{day:02d}/{m:02d}/{y} (day/month/year)"])


def _neutral(order: list[str], chrono: list[str]) -> bool:
    """True when ``order`` and its reverse both earn at most 0.05 (|2c - 1| <= 0.05): a listing
    that neither gives the chronology away nor gives it away reversed."""
    return K.order_credit(order, chrono) <= 0.05 and K.order_credit(order[::-1], chrono) <= 0.05


ID_TIMELINE = "long_context.timeline-v1"
TIMELINE_PATTERN = r"INC-\d{4}"


def _timeline_draw(rng: random.Random, difficulty: int) -> Draft:
    k, n_all, n_fill = {1: (4, 8, 12), 2: (5, 30, 40), 3: (7, 90, 120), 4: (9, 220, 300)}[difficulty]
    ids = [f"INC-{i}" for i in rng.sample(range(1000, 9999), n_all)]
    dates = rng.sample(range(0, 336 * 10), n_all)
    asked = ids[:k]
    while True:  # the listed (sorted-id) order must not give the chronology away
        chrono = sorted(asked, key=lambda i: dates[ids.index(i)])
        if _neutral(sorted(asked), chrono):
            break
        rng.shuffle(dates)
    paras = []
    for i, d in zip(ids, dates):
        text = f"Incident {i} (a {rng.choice(KINDS)} at the {rng.choice(CITIES)} site) occurred on {_fmt_date(rng, d)}."
        if difficulty >= 3 and rng.random() < 0.5:
            text = (f"Incident {i} had originally been scheduled as a drill for {_fmt_date(rng, rng.randrange(3360))}; "
                    f"the real event occurred on {_fmt_date(rng, d)}.")
        paras.append(text)
    paras += [filler(rng) for _ in range(n_fill)]
    while True:
        rng.shuffle(paras)
        mention = [i for p in paras for i in asked if f"Incident {i} " in p]
        if _neutral(mention, chrono):
            break
    doc = "INCIDENT REVIEW — COLLECTED NOTES\n\n" + "\n\n".join(f"[{j + 1}] {p}" for j, p in enumerate(paras))
    q = (f"{doc}\n\nQuestion: put these incidents in chronological order of when they occurred, earliest first: "
         f"{', '.join(sorted(asked))}. Answer with the ids separated by commas on one line.")
    return Draft(q, hidden={"order": chrono, "mention": mention})


def _timeline_check(task: Task, answer: str) -> Score:
    got = K.parse_names(answer, TIMELINE_PATTERN)
    v = K.order_credit(got, task.hidden["order"]) if got is not None else 0.0
    return Score(v, components={"order": (v, 1.0)}, reason="pairwise order agreement (2c-1)" if got else
                 "not one line of distinct incident ids", verifier_version=task.domain)


def _timeline_probes(task: Task) -> dict[str, str]:
    order = task.hidden["order"]
    return {"reversed": ", ".join(order[::-1]), "question_order": ", ".join(sorted(order)),
            "question_order_reversed": ", ".join(sorted(order)[::-1]),
            "mention_order": ", ".join(task.hidden["mention"]), "missing_one": ", ".join(order[:-1]),
            "repeated": ", ".join(order + order[:1])}


def _stats(vals: list[float]) -> dict[str, float]:
    return {"count": len(vals), "minimum": min(vals), "maximum": max(vals), "mean": round(sum(vals) / len(vals), 6)}


ID_RECORD_STATS = "long_context.record_stats-v1"


def _record_stats_draw(rng: random.Random, difficulty: int) -> Draft:
    nums = rng.sample(range(10, 99), 12)
    sensors = [f"TMP-{n}" for n in nums] + [f"TMP-{str(nums[0])[::-1]}{rng.randint(0, 9)}"]
    target, look = sensors[0], sensors[-1]
    rows = []
    for i in range(LINES[difficulty]):
        s = target if rng.random() < 0.12 else rng.choice(sensors)
        bad = difficulty >= 3 and rng.random() < 0.15
        rows.append((s, round(rng.uniform(10, 90), 1), bad))
    for s in (target, target, look):
        rows.insert(rng.randrange(len(rows)), (s, round(rng.uniform(10, 90), 1), False))
    lines = [f"#{i + 1:05d} sensor {s} day {rng.randint(1, 30)} {rng.randint(0, 23):02d}:00 reading {v} C"
             + (" [flagged invalid: exclude]" if bad else "") for i, (s, v, bad) in enumerate(rows)]
    good = [v for s, v, bad in rows if s == target and not bad]
    specs = [FieldSpec("count", "count")] + [FieldSpec(n, "ratio", rel_tol=0.0, abs_tol=0.006)
                                             for n in ("minimum", "maximum", "mean")]
    exp = _stats(good)
    traps = {"with_invalid": _stats([v for s, v, _ in rows if s == target]),
             "look_alike": _stats([v for s, v, bad in rows if s == look and not bad])}
    traps = {n: t for n, t in traps.items() if all(not field_correct(t[s.name], exp[s.name], s) for s in specs)}
    q = ("SENSOR READINGS LOG\n" + "\n".join(lines) + f"\n\nQuestion: over all valid readings of sensor {target}, "
         "give the count, minimum, maximum and mean (mean rounded to two decimals). Answer with one JSON object "
         "with exactly the keys count, minimum, maximum, mean.")
    return Draft(q, hidden={"fields": [s.to_dict() for s in specs], "expected": exp, "traps": traps})


def _record_stats_probes(task: Task) -> dict[str, str]:
    exp = task.hidden["expected"]
    return K.trap_probes(task, {"sensor": "all"}) | {"min_max_swapped": json.dumps(
        {**exp, "minimum": exp["maximum"], "maximum": exp["minimum"], "count": exp["count"] + 1,
         "mean": exp["mean"] + 1})}


register_domain(K.lc_domain(
    ID_LOG_COUNT, _log_count_draw, exact_check, _log_count_probes,
    description="Counting the events of a long access log that meet several conditions at once.\n\n"
                "40 to 1,100 lines; user and status (d1), action (d2), region (d3), a date window (d4); near-miss "
                "users and events missing one condition are planted. Exact integer."))
register_domain(K.lc_domain(
    ID_TIMELINE, _timeline_draw, _timeline_check, _timeline_probes, reference=K.joined_reference("order"),
    description="Ordering incidents scattered through a long report chronologically, normalising mixed date formats.\n\n"
                "Above d2 some reports also mention an originally scheduled date (a trap). Pairwise order credit "
                "rescaled so a random or reversed order earns 0."))
register_domain(K.lc_domain(
    ID_RECORD_STATS, _record_stats_draw, K.fields_check, _record_stats_probes, reference=K.expected_json,
    description="Summarising one sensor's readings in a long log: count, minimum, maximum and mean, as JSON.\n\n"
                "From d3 readings flagged invalid must be excluded; look-alike sensor ids are present."))
