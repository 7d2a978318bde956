"""Reconcile a bank statement with a ledger, in steps: ``long_horizon.reconcile-v1``.

Trains: spreadsheet-style work across several files over several turns. ``bank.csv``
(``txn_id,date,amount``, signed) and ``ledger.csv`` (``ref,date,debit,credit``: money out is
a debit) describe mostly the same transactions. Stages:

1. ``matched.csv``: header ``txn_id,ref``, one row per bank transaction matched with the
   ledger entry of the same signed amount and the same date (difficulty ≥ 2: dates up to
   3 days apart), sorted by txn_id; amounts are unique, so matches are unambiguous;
2. ``unmatched.csv``: header ``source,id,amount``, the bank transactions (source ``bank``)
   and ledger entries (``ledger``) left over, amount signed with 2 decimals, sorted by source
   then id;
3. (difficulty ≥ 2) ``summary.txt``: ``MATCHED n``, ``UNMATCHED_BANK n``,
   ``UNMATCHED_LEDGER n``, ``DIFFERENCE x.xx`` (bank total minus ledger total).
Difficulty 3 writes bank amounts as ``"$1,234.50"``/``"-$12.00"`` (quoted CSV fields).

Process rewards (checkpoints): each stage's file right, the first time.

Outcome: the fraction of stage files right in the final tree; ``matched.csv`` graded (rows in
order / max(expected, produced)); guarded by the inputs left unchanged.

Probes (≤ 0.05): ``match_everything`` (every bank row paired with every ledger row),
``all_unmatched`` (nothing matched, everything listed as unmatched: stage 2 is then wrong
too), ``copy_inputs``, plus the generic probes.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from posttrain.domains.base import register_domain

from ._kit import LongDomain, done, files_task, lines_equal, read_text, stage_env, stage_score, write

DOMAIN_ID = "long_horizon.reconcile-v1"
DESC = ["coffee", "rent", "salary", "fuel", "books", "power", "phone", "gym"]


def _money(c: int) -> str:
    return f"{c / 100:.2f}"


def _bank_amount(c: int, d: int) -> str:
    if d < 3:
        return _money(c)
    return f"\"{'-' if c < 0 else ''}${abs(c) / 100:,.2f}\""


def _build_data(rng: random.Random, d: int):
    cents = rng.sample([x for x in range(-250000, 250000, 7) if x], 9 + 2 * d)
    start = date(2024, 5, 1)
    bank, ledger, matched = [], [], []
    n_match = len(cents) - 4
    for i, c in enumerate(cents):
        day = start + timedelta(days=rng.randint(0, 25))
        tid, ref = f"T{100 + i}", f"L{500 + i * 3}"
        if i < n_match or i % 2 == 0:
            bank.append((tid, day, c))
        if i < n_match or i % 2 == 1:
            shift = timedelta(days=rng.randint(-3, 3) if d >= 2 else 0)
            ledger.append((ref, day + shift, c))
        if i < n_match:
            matched.append((tid, ref))
    rng.shuffle(bank)
    rng.shuffle(ledger)
    return bank, ledger, sorted(matched)


def _build(rng: random.Random, d: int):
    bank, ledger, matched = _build_data(rng, d)
    bank_csv = "txn_id,date,amount\n" + "".join(f"{t},{dt},{_bank_amount(c, d)}\n" for t, dt, c in bank)
    ledger_csv = "ref,date,debit,credit\n" + "".join(
        f"{r},{dt},{_money(-c) if c < 0 else ''},{_money(c) if c > 0 else ''}\n" for r, dt, c in ledger)
    mt, mr = {t for t, _ in matched}, {r for _, r in matched}
    un = sorted([("bank", t, c) for t, _, c in bank if t not in mt] + [("ledger", r, c) for r, _, c in ledger if r not in mr])
    out = {"matched.csv": "txn_id,ref\n" + "".join(f"{t},{r}\n" for t, r in matched),
           "unmatched.csv": "source,id,amount\n" + "".join(f"{s},{i},{_money(c)}\n" for s, i, c in un)}
    if d >= 2:
        diff = sum(c for _, _, c in bank) - sum(c for _, _, c in ledger)
        out["summary.txt"] = (f"MATCHED {len(matched)}\nUNMATCHED_BANK {sum(s == 'bank' for s, _, _ in un)}\n"
                              f"UNMATCHED_LEDGER {sum(s == 'ledger' for s, _, _ in un)}\nDIFFERENCE {_money(diff)}\n")
    text = ("Reconcile bank.csv (txn_id,date,amount; signed) with ledger.csv (ref,date,debit,credit; a debit is "
            "money out, i.e. negative) in stages:\n1. matched.csv: header txn_id,ref; pair each bank transaction "
            "with the ledger entry of the same signed amount and " + ("a date at most 3 days apart" if d >= 2 else
            "the same date") + "; sorted by txn_id.\n2. unmatched.csv: header source,id,amount; the leftover bank "
            "transactions (source bank) and ledger entries (source ledger), amount signed with 2 decimals, sorted by "
            "source then id.\n" + ("3. summary.txt: lines 'MATCHED n', 'UNMATCHED_BANK n', 'UNMATCHED_LEDGER n', "
            "'DIFFERENCE x.xx' (bank total minus ledger total, 2 decimals).\n" if d >= 2 else "")
            + ("Bank amounts are written like \"$1,234.50\" or \"-$12.00\".\n" if d >= 3 else "")
            + "Do not change the input files.")
    files = {"bank.csv": bank_csv, "ledger.csv": ledger_csv}
    return files_task(DOMAIN_ID, d, text, files, {"outputs": out, "inputs": files, "matched": matched})


def _matched_value(got: str | None, want: str) -> float:
    if got is None:
        return 0.0
    have = [ln.strip() for ln in got.strip().splitlines()]
    exp = want.strip().splitlines()
    if not have or have[0] != exp[0]:
        return 0.0
    j = hits = 0
    for line in have[1:]:
        if j < len(exp) - 1 and line == exp[1 + j]:
            hits, j = hits + 1, j + 1
    return hits / max(len(exp) - 1, len(have) - 1, 1)


def _verify(env, trajectory):
    h = env.task.hidden
    if not all(lines_equal(read_text(env, p), c) for p, c in h["inputs"].items()):
        return stage_score(DOMAIN_ID, {p: 0.0 for p in h["outputs"]}, env, "inputs changed")
    vals = {p: (_matched_value(read_text(env, p), c) if p == "matched.csv" else float(lines_equal(read_text(env, p), c)))
            for p, c in h["outputs"].items()}
    return stage_score(DOMAIN_ID, vals, env)


def make_checks(task):
    return [(p, lambda env, p=p, c=c: lines_equal(read_text(env, p), c)) for p, c in task.hidden["outputs"].items()]


def _env(task):
    return stage_env(task, _verify, make_checks(task))


def _reference(task) -> list[str]:
    return [write(p, c) for p, c in task.hidden["outputs"].items()] + [done()]


def _probes(task) -> dict:
    h = task.hidden
    ids = [ln.split(",")[0] for ln in h["inputs"]["bank.csv"].splitlines()[1:]]
    refs = [ln.split(",")[0] for ln in h["inputs"]["ledger.csv"].splitlines()[1:]]
    every = "txn_id,ref\n" + "".join(f"{t},{r}\n" for t in sorted(ids) for r in refs)
    un = "source,id,amount\n" + "".join(f"bank,{t},0.00\n" for t in sorted(ids)) + "".join(f"ledger,{r},0.00\n" for r in sorted(refs))
    return {"match_everything": [write("matched.csv", every), done()],
            "all_unmatched": [write("matched.csv", "txn_id,ref\n"), write("unmatched.csv", un), done()],
            "copy_inputs": [write("matched.csv", h["inputs"]["bank.csv"]), write("unmatched.csv", h["inputs"]["ledger.csv"]), done()]}


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
