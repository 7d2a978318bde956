"""Long-context domains that scan exhaustively for a relation: calls in a code base, duplicates in
a record list, differences between two configuration files.

- ``long_context.code_callers-v1`` — a code base of 20 to 550 small functions in many files;
  list every function that calls a target function directly. Distractors: functions that
  only mention the target in a comment or a string, and functions calling a look-alike
  (``<target>_legacy``). Set credit ``max(0, (right - wrong) / expected)``; the distractors
  outnumber the callers, so listing every mention earns 0.
- ``long_context.dedupe-v1`` — a long customer list where some records repeat an earlier
  customer with different formatting (e-mail case and spaces, phone punctuation, "LAST,
  First" names); list the ids of the records that duplicate an earlier one. Same-name
  records of different customers (other e-mail and phone) outnumber the duplicates.
- ``long_context.config_diff-v1`` — two versions of a long INI configuration; name the keys
  whose value changed, the keys added and the keys removed (``section.key``), as JSON; one
  component per category. From d2 the new version reorders keys and reformats whitespace
  (not changes); from d3 it also reorders sections.

Difficulty is length (~2k to ~90k characters) and distractor density. What they train:
exhaustive, precise scanning for a relation (calls, identity, difference) rather than a
string. Not covered: real programming languages' scoping, fuzzy duplicates (typos), nested
configuration formats.

Probes: every function mentioning the target, every function, the look-alike's callers;
every record id, the later same-name records, the originals instead of the duplicates;
every key in every category, the categories rotated.
"""

from __future__ import annotations

import json
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft
from posttrain.domains.long_context import _kit as K
from posttrain.domains.long_context._corpus import CITIES, FIRST, LAST, filler
from posttrain.verifiers.fields import parse_object

VERBS = ["load", "parse", "build", "send", "fetch", "merge", "check", "write", "scan", "emit", "split", "index",
         "encode", "decode", "flush", "render", "score", "sync", "patch", "trace"]
NOUNS = ["config", "header", "record", "batch", "token", "frame", "ledger", "cache", "route", "report", "schema",
         "packet", "profile", "queue", "metric", "bundle", "shard", "policy", "invoice", "session", "chunk", "event",
         "graph", "table", "manifest", "snapshot", "buffer", "digest"]
NAME = r"[a-z_][a-z0-9_]*"


def _body(rng: random.Random, pool: list[str], extra: list[str]) -> list[str]:
    lines = [f"    {v} = {rng.choice(pool)}({rng.choice(['x', 'y', 'data', 'ctx'])})"
             for v in rng.sample(["a", "b", "c", "d"], rng.randint(1, 3))]
    lines += [f"    {e}" for e in extra]
    rng.shuffle(lines)
    return lines + [f"    return {rng.choice(['x', 'None', 'ctx', 'data'])}"]


ID_CODE_CALLERS = "long_context.code_callers-v1"


def _code_callers_draw(rng: random.Random, difficulty: int) -> Draft:
    n, c = {1: (20, 2), 2: (70, 3), 3: (220, 5), 4: (550, 7)}[difficulty]
    names = rng.sample([f"{v}_{o}" for v in VERBS for o in NOUNS], n)
    target, rest = names[0], names[1:]
    near = f"{target}_legacy"
    callers = rest[:c]
    mention = rest[c:2 * c + 1]
    pool = rest + [near]
    extra: dict[str, list[str]] = {f: [f"r = {target}(data)"] for f in callers}
    forms = [f"# TODO: {target} could replace this", f"log('not calling {target} here')",
             f"z = {near}(data)", f"# see also {target}()"]
    for k, f in enumerate(mention):
        extra[f] = [forms[k % len(forms)]]
    defs = {f: [f"def {f}(x, y=None, data=None, ctx=None):"] + _body(rng, pool, extra.get(f, []))
            for f in names + [near]}
    order = list(defs)
    rng.shuffle(order)
    files = [order[i:i + 8] for i in range(0, len(order), 8)]
    src = "\n\n".join(f"# ===== file: pkg/mod_{k:03d}.py =====\n" + "\n\n".join("\n".join(defs[f]) for f in chunk)
                      for k, chunk in enumerate(files))
    q = (f"CODE BASE\n{src}\n\nQuestion: which functions call `{target}` directly (a call expression "
         f"`{target}(...)` in their body; comments, strings and other functions do not count)? Answer with the "
         "function names separated by commas on one line, in any order.")
    near_callers = [f for f in mention if f"z = {near}(data)" in extra[f]]
    return Draft(q, hidden={"callers": sorted(callers), "mention": sorted(callers + mention),
                            "near": near_callers, "all": sorted(rest)})


def _code_callers_probes(task: Task) -> dict[str, str]:
    out = {"every_mention": ", ".join(task.hidden["mention"]), "every_function": ", ".join(task.hidden["all"])}
    if task.hidden["near"]:
        out["look_alike_callers"] = ", ".join(task.hidden["near"])
    return out


def _phone(rng: random.Random, digits: str) -> str:
    d = digits
    return rng.choice([f"({d[:3]}) {d[3:6]}-{d[6:]}", f"{d[:3]}.{d[3:6]}.{d[6:]}", f"{d[:3]}-{d[3:6]}-{d[6:]}",
                       f"+1 {d[:3]} {d[3:6]} {d[6:]}"])


ID_DEDUPE = "long_context.dedupe-v1"
RECORD_ID = r"R-\d{5}"


def _dedupe_draw(rng: random.Random, difficulty: int) -> Draft:
    m, dups = {1: (15, 3), 2: (60, 6), 3: (180, 12), 4: (450, 20)}[difficulty]
    base = []
    for i in range(m):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        base.append({"first": first, "last": last, "email": f"{first}.{last}{i}@{rng.choice(['mail.test', 'corp.test'])}",
                     "phone": "".join(str(rng.randint(0, 9)) for _ in range(10)), "city": rng.choice(CITIES)})
    rows = [(b, "orig", i) for i, b in enumerate(base)]
    for kind, k in (("dup", dups), ("near", dups + 1)):
        for src in rng.sample(range(m), k):
            pos = rng.randint(next(j for j, r in enumerate(rows) if r[2] == src and r[1] == "orig") + 1, len(rows))
            b = dict(base[src])
            if kind == "near":
                b["email"] = b["email"].replace("@", f"{rng.randint(100, 999)}@")
                b["phone"] = "".join(str(rng.randint(0, 9)) for _ in range(10))
            rows.insert(pos, (b, kind, src))
    lines, dup_ids, near_ids, orig_ids = [], [], [], set()
    for j, (b, kind, src) in enumerate(rows):
        rid = f"R-{j + 1:05d}"
        name = f"{b['first']} {b['last']}"
        email = b["email"]
        if kind == "dup":
            name = rng.choice([f"{b['last'].upper()}, {b['first']}", name.upper(), name])
            email = rng.choice([email.upper(), f"  {email.capitalize()} ", email])
            dup_ids.append(rid)
            orig_ids.add(f"R-{next(i for i, r in enumerate(rows) if r[2] == src and r[1] == 'orig') + 1:05d}")
        elif kind == "near":
            near_ids.append(rid)
        lines.append(f"{rid} | {name} | email: {email} | phone: {_phone(rng, b['phone'])} | city: {b['city']}")
    q = ("CUSTOMER RECORDS\n" + "\n".join(lines) + "\n\nTwo records are the same customer when their e-mail "
         "addresses are equal ignoring case and surrounding spaces AND their phone numbers have the same digits "
         "(names may be written differently). Question: which records repeat a customer that already appeared in "
         "an earlier record? Answer with their ids separated by commas on one line, in any order.")
    return Draft(q, hidden={"dups": dup_ids, "near": near_ids, "orig": sorted(orig_ids), "n": len(rows)})


def _dedupe_probes(task: Task) -> dict[str, str]:
    h = task.hidden
    return {"every_id": ", ".join(f"R-{j + 1:05d}" for j in range(h["n"])),
            "same_name_later": ", ".join(sorted(h["dups"] + h["near"])), "originals": ", ".join(h["orig"])}


SECTIONS = ["server", "database", "cache", "auth", "logging", "metrics", "queue", "storage", "mail", "search",
            "billing", "cdn", "scheduler", "gateway", "backup", "audit", "ml", "export", "import", "webhooks"]
WORDS = ["on", "off", "eu-west", "us-east", "debug", "info", "strict", "lenient", "gzip", "none", "primary", "replica"]
CATS = ("changed", "added", "removed")


def _val(rng: random.Random) -> str:
    return str(rng.randint(1, 9999)) if rng.random() < 0.6 else rng.choice(WORDS)


ID_CONFIG_DIFF = "long_context.config_diff-v1"


def _config_diff_draw(rng: random.Random, difficulty: int) -> Draft:
    n_sec = {1: 4, 2: 14, 3: 40, 4: 100}[difficulty]
    secs = [f"{s}_{k}" if k else s for k in range(5) for s in SECTIONS][:n_sec]
    old = {s: {f"{w}_{o}": _val(rng) for w, o in rng.sample([(v, o) for v in VERBS[:8] for o in NOUNS[:10]],
                                                              rng.randint(6, 10))} for s in secs}
    new = {s: dict(kv) for s, kv in old.items()}
    flat = [(s, k) for s in secs for k in old[s]]
    nc, na, nr = {1: (2, 1, 1), 2: (3, 2, 2), 3: (5, 3, 3), 4: (7, 4, 4)}[difficulty]
    picks = rng.sample(flat, nc + nr)
    changed, removed = picks[:nc], picks[nc:]
    for s, k in changed:
        while new[s][k] == old[s][k]:
            new[s][k] = _val(rng)
    for s, k in removed:
        del new[s][k]
    added = []
    while len(added) < na:
        s = rng.choice(secs)
        k = f"{rng.choice(VERBS[8:])}_{rng.choice(NOUNS[10:])}"
        if k not in new[s]:
            new[s][k] = _val(rng)
            added.append((s, k))
    exp = {c: sorted(f"{s}.{k}" for s, k in v) for c, v in zip(CATS, (changed, added, removed))}
    q = (f"CONFIG VERSION A\n{_config_diff_render(rng, old, secs, 1)}\n\nCONFIG VERSION B\n"
         f"{_config_diff_render(rng, new, secs, difficulty)}\n\nQuestion: going from version A to version B, which keys "
         "changed value, which were added and which were removed? Name keys as section.key. Answer with one JSON "
         'object {"changed": [...], "added": [...], "removed": [...]} (lists of strings, any order).')
    return Draft(q, hidden={"expected": exp, "all": sorted(f"{s}.{k}" for s, k in flat)})


def _config_diff_render(rng: random.Random, cfg: dict, secs: list[str], difficulty: int) -> str:
    order = list(secs)
    if difficulty >= 3:
        rng.shuffle(order)
    out = []
    for s in order:
        items = list(cfg[s].items())
        if difficulty >= 2:
            rng.shuffle(items)
        eq = (lambda: rng.choice(["=", " = ", "  =  "])) if difficulty >= 2 else (lambda: " = ")
        out.append(f"[{s}]\n; {filler(rng).split('. ')[0]}\n" + "\n".join(f"{k}{eq()}{v}" for k, v in items))
    return "\n\n".join(out)


def _config_diff_check(task: Task, answer: str) -> Score:
    obj, why = parse_object(answer)
    zeros = {c: (0.0, 1.0) for c in CATS}
    if obj is None or set(obj) != set(CATS) or not all(
            isinstance(obj[c], list) and all(isinstance(x, str) for x in obj[c]) and len(set(obj[c])) == len(obj[c])
            for c in CATS):
        return Score(0.0, components=zeros, reason=why or "needs exactly the keys changed, added, removed with "
                     "lists of distinct strings", verifier_version=task.domain)
    comps = {c: (K.set_credit(obj[c], task.hidden["expected"][c])[0], 1.0) for c in CATS}
    return Score.weighted(comps, reason="per-category set credit", verifier_version=task.domain)


def _config_diff_probes(task: Task) -> dict[str, str]:
    exp, every = task.hidden["expected"], task.hidden["all"]
    return {"everything": json.dumps({c: every + exp["added"] for c in CATS}),
            "rotated": json.dumps({"changed": exp["added"], "added": exp["removed"], "removed": exp["changed"]})}


register_domain(K.lc_domain(
    ID_CODE_CALLERS, _code_callers_draw, K.set_check(NAME, "callers"), _code_callers_probes,
    reference=K.joined_reference("callers"),
    description="Finding every function in a long code base that calls a target directly.\n\n"
                "20 to 550 functions; mentions in comments and strings and calls to a look-alike do not count. Set "
                "credit max(0, (right - wrong) / expected)."))
register_domain(K.lc_domain(
    ID_DEDUPE, _dedupe_draw, K.set_check(RECORD_ID, "dups"), _dedupe_probes, reference=K.joined_reference("dups"),
    description="Finding the records of a long customer list that repeat an earlier customer in another format.\n\n"
                "E-mail case and spaces, phone punctuation, \"LAST, First\" names; same-name records of other "
                "customers outnumber the duplicates. Set credit."))
register_domain(K.lc_domain(
    ID_CONFIG_DIFF, _config_diff_draw, _config_diff_check, _config_diff_probes, reference=K.expected_json,
    description="Diffing two versions of a long INI configuration: keys changed, added and removed, as JSON.\n\n"
                "From d2 keys are reordered and whitespace reformatted, from d3 sections reordered. One component "
                "per category."))
