"""Long-context domains over long structured documents: joins, contradictions, cross-references,
overrides.

- ``long_context.table_join-v1`` — a customer register at the top, an order ledger far below
  it; total the orders of one region's customers (a join across distant sections). From d3
  cancelled orders are excluded; at d4 a corrections notice at the end moves some customers
  to another region.
- ``long_context.contradiction-v1`` — a long list of numbered statements where some facts are
  restated (consistently, in other words) and exactly one later statement contradicts an
  earlier one; answer the two statement numbers, earlier first (half credit each).
- ``long_context.crossref-v1`` — a regulation with numbered sections; a record class's
  retention rule is reached through a chain of "see §X" references (one hop at d1, four at
  d4); look-alike class codes and (d3+) superseded references lead to other values.
- ``long_context.kv_override-v1`` — a defaults table, then a long change log of ``set``,
  (d2+) ``increase ... by`` and (d3+) ``reset ... to default`` operations applied in document
  order; the final values of several keys as JSON (field scoring).

Difficulty is length (~3k to ~90k characters) and trap density. What they train: holding
two distant parts of a document together, consistency checking, following references,
state tracking. Not covered: natural prose, contradictions that need arithmetic, unanswerable
questions.

The crossref answer is a number of years written in the document by design (exempt from the
answer-in-prompt heuristic). Probes: all orders / cancelled included / register uncorrected;
a consistent restatement pair, first and last statements; the look-alike class's and the
superseded reference's values, every value listed; first values set, last ``set`` ignoring
later operations, the defaults (kept when every field is wrong).
"""

from __future__ import annotations

import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import numeric_score
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, exact_check
from posttrain.domains.long_context import _kit as K
from posttrain.domains.long_context._corpus import CITIES, DEPTS, filler, make_people
from posttrain.verifiers.fields import FieldSpec, field_correct
from posttrain.verifiers.structured import answer_text

SCALE = {1: 1, 2: 4, 3: 12, 4: 30}
REGIONS = ["North", "South", "East", "West", "Central"]


ID_TABLE_JOIN = "long_context.table_join-v1"


def _table_join_draw(rng: random.Random, difficulty: int) -> Draft:
    s = SCALE[difficulty]
    cust = {f"C-{i}": rng.choice(REGIONS) for i in rng.sample(range(1000, 9999), 10 * s)}
    region = rng.choice(REGIONS)
    moved = {}
    if difficulty == 4:
        for c in rng.sample(sorted(cust), 6):
            moved[c] = rng.choice([r for r in REGIONS if r != cust[c]])
    final = {**cust, **moved}
    orders = [(f"O-{i}", rng.choice(sorted(cust)), rng.randint(50, 9000),
               "cancelled" if difficulty >= 3 and rng.random() < 0.2 else "shipped")
              for i in rng.sample(range(10000, 99999), 22 * s)]
    total = sum(a for _, c, a, st in orders if final[c] == region and st == "shipped")
    reg = "\n".join(f"  {c}  region: {r}" for c, r in cust.items())
    led = "\n".join(f"  {o}  customer {c}  amount ${a:,}  {st}" for o, c, a, st in orders)
    middle = "\n\n".join(filler(rng) for _ in range(6 * s))
    doc = f"SECTION A — CUSTOMER REGISTER\n{reg}\n\nSECTION B — NOTICES\n{middle}\n\nSECTION C — ORDER LEDGER\n{led}"
    if moved:
        doc += "\n\nSECTION D — CORRECTIONS TO THE REGISTER\n" + "\n".join(
            f"  {c} is in region {r} (the register entry is wrong)." for c, r in moved.items())
    rule = " Cancelled orders do not count." if difficulty >= 3 else ""
    q = (f"{doc}\n\nQuestion: what is the total amount of the orders placed by customers in the {region} region?"
         f"{rule} Answer with a single integer number of dollars.")
    alt = {"all_orders": sum(a for _, _, a, _ in orders),
           "with_cancelled": sum(a for _, c, a, _ in orders if final[c] == region),
           "uncorrected": sum(a for _, c, a, st in orders if cust[c] == region and st == "shipped")}
    return Draft(q, answer=str(total),
                 hidden={"alt": {k: v for k, v in alt.items() if v != total}})


def _table_join_check(task: Task, answer: str) -> Score:
    return numeric_score(task, answer, task.domain, rel_tol=0.0, abs_tol=0.5)


def _table_join_probes(task: Task) -> dict[str, str]:
    a = int(task.hidden["answer"])
    return {**{k: str(v) for k, v in task.hidden["alt"].items()}, "off_by_100": str(a + 100), "zero": "0"}


FACTS = [  # (subject kind, attribute, value range, two phrasings)
    ("city", "loading docks", (4, 60), ["The {s} warehouse has {v} loading docks.",
                                         "There are {v} loading docks at the warehouse in {s}."]),
    ("dept", "budget", (100, 990), ["The {s} budget for next year is {v} thousand dollars.",
                                     "Next year {s} will spend {v} thousand dollars."]),
    ("person", "floor", (1, 40), ["{s}'s desk is on floor {v}.", "You will find {s} on floor {v}."]),
]


ID_CONTRADICTION = "long_context.contradiction-v1"


def _contradiction_draw(rng: random.Random, difficulty: int) -> Draft:
    s = SCALE[difficulty]
    people = [p["name"] for p in make_people(rng, 8 * s, 0.4)]
    subjects = {"city": CITIES, "dept": DEPTS, "person": people}
    facts = []
    for kind, _, (lo, hi), forms in FACTS:
        for subj in subjects[kind]:
            facts.append((subj, rng.randint(lo, hi), forms))
    rng.shuffle(facts)
    facts = facts[: 10 * s]
    items: list[tuple[str, tuple[int, int] | None]] = [(f[2][0].format(s=f[0], v=f[1]), (i, 0))
                                                      for i, f in enumerate(facts)]
    items += [(filler(rng), None) for _ in range(8 * s)]
    rng.shuffle(items)
    restated = rng.sample(range(len(facts)), 3 + s)
    bad = restated[0]
    for i in restated:  # later restatements: consistent, except the first one picked
        subj, v, forms = facts[i]
        pos = next(j for j, (_, tag) in enumerate(items) if tag == (i, 0))
        nv = v if i != bad else v + rng.choice([-1, 1]) * rng.randint(1, 3)
        items.insert(rng.randint(pos + 1, len(items)), (forms[1].format(s=subj, v=nv), (i, 1)))
    num = {tag: j + 1 for j, (_, tag) in enumerate(items) if tag}
    pair = [num[(bad, 0)], num[(bad, 1)]]
    ok_pairs = [[num[(i, 0)], num[(i, 1)]] for i in restated[1:]]
    doc = "\n".join(f"S{j + 1}. {t}" for j, (t, _) in enumerate(items))
    q = (f"STATEMENTS (numbered)\n{doc}\n\nQuestion: exactly one statement contradicts an earlier statement. "
         "Give the two statement numbers, earlier first, as two integers separated by a comma (for example: 3, 17).")
    return Draft(q, hidden={"pair": pair, "consistent": ok_pairs, "n": len(items)})


def _contradiction_reference(task: Task) -> str:
    return ", ".join(map(str, task.hidden["pair"]))


def _contradiction_check(task: Task, answer: str) -> Score:
    t = answer_text(answer) or ""
    m = re.fullmatch(r"S?(\d+)\s*,\s*S?(\d+)", t.strip())
    pair = task.hidden["pair"]
    a, b = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    if a is not None and a == b:
        a = b = None
    comps = {"earlier": (float(a == pair[0]), 0.5), "later": (float(b == pair[1]), 0.5)}
    return Score.weighted(comps, reason="statement pair" if m else "not two statement numbers",
                          verifier_version=task.domain)


def _contradiction_probes(task: Task) -> dict[str, str]:
    pair = task.hidden["pair"]
    out = {f"consistent_{k}": f"{a}, {b}" for k, (a, b) in enumerate(task.hidden["consistent"])
           if a not in pair and b not in pair}
    if 1 not in pair and task.hidden["n"] not in pair:
        out["first_last"] = f"1, {task.hidden['n']}"
    out["reversed"] = f"{pair[1]}, {pair[0]}"
    return out


ID_CROSS_REF = "long_context.crossref-v1"


def _cross_ref_draw(rng: random.Random, difficulty: int) -> Draft:
    s = SCALE[difficulty]
    n = 14 * s
    nums = rng.sample(range(11, 99), 6)
    classes = [f"K-{x}" for x in nums]
    look = f"K-{str(nums[0])[::-1]}" if str(nums[0])[::-1] not in map(str, nums) else f"K-{nums[0]}0"
    classes.append(look)
    values = rng.sample(range(2, 60), len(classes) + 1)
    free = rng.sample(range(1, n + 1), n)
    text: dict[int, str] = {}
    answer = {}
    for ci, cls in enumerate(classes):
        hops = difficulty if ci == 0 else rng.randint(1, max(1, difficulty))
        chain = [free.pop() for _ in range(hops + 1)]
        old = ""
        if ci == 0 and difficulty >= 3:
            stale = free.pop()
            text[stale] = f"(Repealed.) Records referred to here were kept for {values[-1]} years."
            old = f" (before the 2020 revision: §{stale})"
        text[chain[0]] = f"Records of class {cls}: the retention rule is set out in §{chain[1]}{old}."
        for a, b in zip(chain[1:-1], chain[2:]):
            text[a] = f"For the records referred to in §{chain[chain.index(a) - 1]}, see §{b}."
        text[chain[-1]] = f"The records referred to in §{chain[-2]} are kept for {values[ci]} years."
        answer[cls] = values[ci]
    for k in range(1, n + 1):
        text.setdefault(k, filler(rng))
    doc = "RECORDS MANAGEMENT REGULATION\n\n" + "\n\n".join(f"§{k}. {text[k]}" for k in range(1, n + 1))
    q = (f"{doc}\n\nQuestion: for how many years are records of class {classes[0]} kept under the current "
         "regulation? Answer with the number only.")
    return Draft(q, answer=str(answer[classes[0]]),
                 hidden={"look_alike": answer[look], "stale": values[-1], "all": values})


def _cross_ref_probes(task: Task) -> dict[str, str]:
    out = {"look_alike": str(task.hidden["look_alike"]), "all_values": ", ".join(map(str, task.hidden["all"]))}
    if task.hidden.get("stale") is not None and "(before the 2020 revision" in str(task.prompt[-1]["content"]):
        out["superseded"] = str(task.hidden["stale"])
    return out


KEYS = ["max_connections", "cache_ttl", "retry_limit", "worker_threads", "queue_depth", "batch_size", "timeout_ms",
        "pool_size", "page_size", "max_upload_mb", "session_minutes", "replicas", "shard_count", "backoff_ms",
        "log_retention_days", "rate_limit", "heartbeat_s", "max_redirects", "buffer_kb", "gc_interval_s"]


def _apply(defaults: dict, ops: list[tuple], mode: str | None = None) -> dict:
    state, first = dict(defaults), {}
    for op, key, v in ops:
        if op == "set":
            first.setdefault(key, v)
            state[key] = v
        elif op == "inc" and mode != "sets_only":
            state[key] += v
        elif op == "reset" and mode != "sets_only":
            state[key] = defaults[key]
    return {**defaults, **first} if mode == "first" else state


ID_KV_OVERRIDE = "long_context.kv_override-v1"


def _kv_override_draw(rng: random.Random, difficulty: int) -> Draft:
    s = SCALE[difficulty]
    keys = [f"{k}.{svc}" for k in KEYS for svc in ("api", "db", "web")][: 6 + 2 * s]
    defaults = {k: rng.randint(1, 500) for k in keys}
    kinds = ["set"] + (["inc"] if difficulty >= 2 else []) + (["reset"] if difficulty >= 3 else [])
    ops = [(op := rng.choice(kinds), rng.choice(keys), rng.randint(1, 900) if op == "set" else rng.randint(1, 50))
           for _ in range(28 * s)]
    asked = rng.sample(keys, 1 + min(difficulty, 4))
    for k in asked:  # every asked key is touched twice at least: a set, then something else
        i = rng.randrange(len(ops))
        ops.insert(i, ("set", k, rng.randint(1, 900)))
        ops.insert(rng.randint(i + 1, len(ops)), (rng.choice(kinds), k, rng.randint(1, 50)))
    final = _apply(defaults, ops)
    lines = []
    for op, k, v in ops:
        lines.append({"set": f"set {k} = {v}", "inc": f"increase {k} by {v}", "reset": f"reset {k} to default"}[op])
        if rng.random() < 0.3:
            lines.append("# " + filler(rng))
    table = "\n".join(f"  {k} = {v}" for k, v in defaults.items())
    specs = [FieldSpec(k, "count") for k in asked]
    exp = {k: final[k] for k in asked}
    traps = {m: {k: _apply(defaults, ops, m)[k] for k in asked} for m in ("first", "sets_only")}
    traps["defaults"] = {k: defaults[k] for k in asked}
    traps = {n: t for n, t in traps.items() if all(not field_correct(t[sp.name], exp[sp.name], sp) for sp in specs)}
    q = (f"SERVICE CONFIGURATION\nDefaults:\n{table}\n\nCHANGE LOG (apply in order, top to bottom; '#' lines are "
         "comments)\n" + "\n".join(lines) + "\n\nQuestion: after the whole change log, what are the values of "
         + ", ".join(asked) + "? Answer with one JSON object with exactly these keys and integer values.")
    return Draft(q, hidden={"fields": [sp.to_dict() for sp in specs], "expected": exp, "traps": traps})


def _kv_override_probes(task: Task) -> dict[str, str]:
    return K.trap_probes(task, {"note": "final"})


register_domain(K.lc_domain(
    ID_TABLE_JOIN, _table_join_draw, _table_join_check, _table_join_probes,
    description="Joining a register and a ledger far apart in one long document to total one region's orders.\n\n"
                "From d3 cancelled orders are excluded; at d4 a corrections notice at the end moves customers to "
                "another region. Numeric match."))
register_domain(K.lc_domain(
    ID_CONTRADICTION, _contradiction_draw, _contradiction_check, _contradiction_probes,
    reference=_contradiction_reference,
    description="Finding the one statement in a long numbered list that contradicts an earlier one.\n\n"
                "Other facts are restated consistently in other words; the two statement numbers, half credit each."))
register_domain(K.lc_domain(
    ID_CROSS_REF, _cross_ref_draw, exact_check, _cross_ref_probes,
    exempt={"answer_in_prompt": "the number of years is written in the document by design"},
    description="Following chains of \"see §X\" references through a long regulation to a retention rule.\n\n"
                "One hop at d1 to four at d4; look-alike class codes and (d3+) superseded references. Exact match."))
register_domain(K.lc_domain(
    ID_KV_OVERRIDE, _kv_override_draw, K.fields_check, _kv_override_probes, reference=K.expected_json,
    description="Tracking key values through a long change log of set, increase and reset operations, as JSON.\n\n"
                "Increase from d2, reset to default from d3; field scoring of the asked keys' final values."))
