"""Operational finance domains: budget variance, invoices, bank reconciliation, payroll.

- ``finance.budget_variance-v1`` — a budget-vs-actual report; per asked line the variance
  (actual - budget) and whether it is favourable (a label gated on the variance: guessing
  earns nothing); d2 adds the operating-income variance; d3 flexes the variable lines to the
  actual volume before comparing (a flexible budget).
- ``finance.invoice-v1`` — a vendor invoice in a loose text layout: vendor, invoice date
  (normalised to ISO), subtotal, tax, total; d2 adds a discount and untaxed shipping; d3 a
  returned-item credit line and a deposit already paid (amount due).
- ``finance.bank_reconciliation-v1`` — a month's cash ledger and bank statement; match the
  items, total the outstanding cheques and deposits in transit, give the adjusted balance;
  d2 adds bank-only items (fees, interest, direct debits); d3 a returned (NSF) cheque and a
  transposition error in the books.
- ``finance.payroll-v1`` — a weekly timesheet: gross pay with overtime (1.5x above 40 h), the
  whole payroll; d2 pre-tax pension and a flat withholding rate, net pay; d3 double time above
  50 h and progressive withholding brackets.

What they train: reading semi-structured business documents, sign conventions, matching two
lists, rule application. Not covered: multi-currency invoices, payroll caps and employer
taxes, reconciliations across several months.

Probes (besides the shared ones of :mod:`._kit`): variances with the sign flipped and every
label reversed; the bill-to customer and the due date in place of the vendor and the date,
with tax on the pre-discount amount; outstanding cheques and deposits in transit swapped with
the adjustment applied backwards; overtime paid at the base rate and tax taken before the
pension deduction — each kept only when every field is wrong.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.finance import _kit
from posttrain.domains.finance._kit import Field, build, fields_from, money, pick

REV_LINES = ["Product sales", "Service revenue", "Licensing income"]
EXP_LINES = ["Salaries", "Rent", "Marketing", "Travel", "Utilities", "Software subscriptions", "Training", "Freight",
             "Packaging", "Sales commissions"]


def _slug(s: str) -> str:
    return s.lower().replace(" ", "_")


ID_BUDGET_VARIANCE = "finance.budget_variance-v1"


def _draw_budget_variance(rng: random.Random, difficulty: int) -> Task:
    n_rev, n_exp, n_ask = {1: (1, 3, 2), 2: (2, 5, 3), 3: (3, 7, 3)}[difficulty]
    lines = [(n, True) for n in rng.sample(REV_LINES, n_rev)] + [(n, False) for n in rng.sample(EXP_LINES, n_exp)]
    vol_b = rng.randint(8, 40) * 500
    vol_a = vol_b
    while abs(vol_a - vol_b) < 0.03 * vol_b:
        vol_a = round(vol_b * rng.uniform(0.85, 1.15))
    rows, vals, wrong = [], {}, {}
    for name, is_rev in lines:
        variable = difficulty == 3 and (is_rev or rng.random() < 0.5)
        budget = rng.randint(20, 900) * 100
        flexed = budget * vol_a / vol_b if variable else budget
        actual = round(flexed * rng.choice([rng.uniform(0.8, 0.97), rng.uniform(1.03, 1.2)]))
        var = actual - flexed
        good = (var > 0) == is_rev
        s = _slug(name)
        vals[f"variance_{s}"], vals[f"status_{s}"] = var, "favourable" if good else "unfavourable"
        wrong[f"variance_{s}"], wrong[f"status_{s}"] = -var, "unfavourable" if good else "favourable"
        rows.append((name, is_rev, variable, budget, actual))
    oi = sum((a - (b * vol_a / vol_b if v else b)) * (1 if r else -1) for _, r, v, b, a in rows)
    vals["operating_income_variance"], wrong["operating_income_variance"] = oi, -oi
    table = "\n".join(f"{n:<24}{'revenue' if r else 'expense':<9}{'variable' if v else 'fixed':<10}"
                      f"{b:>12,}{a:>12,}" for n, r, v, b, a in rows)
    doc = (f"Monthly budget report (U.S. dollars)\n{'Line':<24}{'Type':<9}{'Behaviour':<10}{'Budget':>12}"
           f"{'Actual':>12}\n{table}")
    if difficulty == 3:
        doc += (f"\nBudgeted volume: {vol_b:,} units; actual volume: {vol_a:,} units. Variable lines are compared "
                "with the budget flexed to actual volume (budget x actual units / budgeted units).")
    asked = rng.sample(rows, n_ask)
    fields = []
    for n, *_ in asked:
        s = _slug(n)
        fields.append(Field(money(f"variance_{s}"), vals[f"variance_{s}"],
                            f"{n}: actual minus {'flexed ' if difficulty == 3 else ''}budget"))
        fields.append(Field(_kit.choice(f"status_{s}"), vals[f"status_{s}"],
                            f"{n}: 'favourable' or 'unfavourable' for operating income"))
    if difficulty > 1:
        fields.append(Field(money("operating_income_variance"), oi, "total operating income (revenue lines "
                            "minus expense lines) variance: actual minus budget, positive when favourable"))
    gates = {f"status_{_slug(n)}": f"variance_{_slug(n)}" for n, *_ in asked}
    return build(ID_BUDGET_VARIANCE, difficulty, doc, fields, scale=1.0, gates=gates, traps={"sign_flipped": wrong},
                 extra="Give amounts in dollars (cents allowed).\n")


register_domain(_kit.field_domain(ID_BUDGET_VARIANCE, _draw_budget_variance, """\
Variance analysis: budget-vs-actual variances and whether each is favourable.

A budget-vs-actual report; per asked line the variance (actual - budget) and whether it is
favourable (a label gated on the variance: guessing earns nothing); d2 adds the operating-income
variance; d3 flexes the variable lines to the actual volume before comparing (a flexible
budget).
"""))


VENDORS = ["Northwind Supplies Ltd.", "Bluebell Office GmbH", "Quarry Lane Hardware", "Tidewater Paper Co.",
           "Summit Print & Copy", "Oakridge Electrical", "Harbor Janitorial Inc."]
CUSTOMERS = ["Marlow Chemicals", "Juniper Retail", "Kestrel Aerospace", "Belvane Foods", "Arden Robotics"]
ITEMS = [("Copy paper A4, box", 20, 60), ("Toner cartridge", 40, 180), ("LED panel", 30, 120), ("Cable ties, pack", 3, 15),
         ("Safety gloves, pair", 2, 12), ("Desk lamp", 15, 80), ("Cleaning service, hour", 25, 60), ("USB-C dock", 60, 250)]


def _date_text(rng: random.Random, y: int, m: int, d: int) -> str:
    months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"]
    return rng.choice([f"{months[m - 1]} {d}, {y}", f"{d:02d}/{m:02d}/{y} (DD/MM/YYYY)", f"{y}-{m:02d}-{d:02d}",
                       f"{d} {months[m - 1][:3]} {y}"])


ID_INVOICE = "finance.invoice-v1"


def _draw_invoice(rng: random.Random, difficulty: int) -> Task:
    vendor, customer = rng.choice(VENDORS), rng.choice(CUSTOMERS)
    y, m, d = rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)
    due_m = m % 12 + 1
    items = [(desc, rng.randint(1, 40), rng.randint(lo * 100, hi * 100) / 100)
             for desc, lo, hi in rng.sample(ITEMS, rng.randint(2, 3 + difficulty))]
    if difficulty == 3:
        desc, _, price = items[0]
        items.append((f"Return: {desc}", -rng.randint(1, 3), price))
    sub = round(sum(q * p for _, q, p in items), 2)
    rate = rng.choice([5, 7.5, 8, 10, 19, 20])
    disc = rng.choice([2, 5, 10]) if difficulty > 1 else 0
    ship = rng.randint(5, 60) + 0.99 if difficulty > 1 else 0.0
    deposit = round(sub * rng.randint(10, 40) / 100, 2) if difficulty == 3 else 0.0
    taxable = sub * (1 - disc / 100)
    tax = taxable * rate / 100
    total = taxable + tax + ship
    lines = [f"  {desc:<28} {q:>4} x {p:>8,.2f} = {q * p:>10,.2f}" for desc, q, p in items]
    doc = [f"INVOICE  No. INV-{rng.randint(10000, 99999)}", f"From: {vendor}, {rng.randint(1, 300)} Market Street",
           f"Bill to: {customer}", f"Invoice date: {_date_text(rng, y, m, d)}",
           f"Payment due: {_date_text(rng, y + (m == 12), due_m, d)}", "Items:"] + lines
    doc.append(f"Subtotal: {sub:,.2f}")
    if disc:
        doc.append(f"Early-order discount: {disc}% of the subtotal")
    doc.append(f"Sales tax: {rate}% on the {'discounted ' if disc else ''}subtotal")
    if ship:
        doc.append(f"Shipping (not taxed): {ship:,.2f}")
    if deposit:
        doc.append(f"Deposit received with the order: {deposit:,.2f}")
    iso, due_iso = f"{y}-{m:02d}-{d:02d}", f"{y + (m == 12)}-{due_m:02d}-{d:02d}"
    names = ["vendor", "invoice_date", "subtotal", "tax", "total"] + (["amount_due"] if deposit else [])
    v = {"vendor": vendor, "invoice_date": iso, "subtotal": sub, "tax": tax, "total": total,
         "amount_due": total - deposit}
    table = {"vendor": (_kit.choice, "the issuing vendor's name, exactly as printed"),
             "invoice_date": (_kit.choice, "the invoice date as YYYY-MM-DD"),
             "subtotal": (money, "sum of the item lines (returns are negative)"),
             "tax": (money, "sales tax amount"), "total": (money, "invoice total including tax and shipping"),
             "amount_due": (money, "total less the deposit received")}
    trap = {"vendor": customer, "invoice_date": due_iso, "subtotal": total, "tax": sub * rate / 100 + 1,
            "total": sub, "amount_due": total}
    return build(ID_INVOICE, difficulty, "\n".join(doc), fields_from(v, table, names), scale=1.0,
                 traps={"header_confusion": pick(trap, names)}, extra="Give amounts in dollars with cents.\n")


register_domain(_kit.field_domain(ID_INVOICE, _draw_invoice, """\
Reading an invoice: vendor, ISO date, subtotal, tax, discounts and the amount due.

A vendor invoice in a loose text layout: vendor, invoice date (normalised to ISO), subtotal,
tax, total; d2 adds a discount and untaxed shipping; d3 a returned-item credit line and a
deposit already paid (amount due).
"""))


def _cents(rng: random.Random, lo: int, hi: int) -> float:
    return rng.randint(lo * 100, hi * 100) / 100


ID_BANK_RECONCILIATION = "finance.bank_reconciliation-v1"


def _draw_bank_reconciliation(rng: random.Random, difficulty: int) -> Task:
    start = _cents(rng, 5_000, 90_000)
    book, bank = [], []  # (day, description, signed amount)
    chq = rng.randint(1000, 8000)
    for k in range(rng.randint(4, 6 + 3 * difficulty)):  # cleared items appear in both
        day = rng.randint(1, 25)
        if rng.random() < 0.5:
            a = _cents(rng, 200, 9_000)
            book.append((day, "Deposit of customer receipts", a))
            bank.append((day + rng.randint(0, 2), "DEPOSIT", a))
        else:
            a = _cents(rng, 100, 6_000)
            book.append((day, f"Cheque #{chq + k} to supplier", -a))
            bank.append((day + rng.randint(1, 4), f"CHQ {chq + k}", -a))
    n = len(book)
    oc = [_cents(rng, 100, 4_000) for _ in range(rng.randint(1, 1 + difficulty))]
    book += [(rng.randint(26, 30), f"Cheque #{chq + n + i} to supplier", -a) for i, a in enumerate(oc)]
    dit = [_cents(rng, 300, 6_000) for _ in range(rng.randint(1, difficulty))]
    book += [(31, "Deposit of customer receipts (night safe)", a) for a in dit]
    bank_only = [(28, "SERVICE FEE", -_cents(rng, 5, 60))]
    if difficulty > 1:
        bank_only += [(30, "INTEREST EARNED", _cents(rng, 1, 80)), (15, "DIRECT DEBIT - INSURANCE", -_cents(rng, 50, 900))]
    if difficulty == 3:
        bank_only.append((20, "RETURNED CHEQUE (NSF) - customer", -_cents(rng, 200, 2_000)))
        i = rng.randrange(n)  # the books recorded one cleared item with an error
        day, desc, a = book[i]
        book[i] = (day, desc, a + rng.choice([-1, 1]) * rng.randint(9, 90))
    bank += bank_only
    book_end = start + sum(a for *_, a in book)
    bank_end = start + sum(a for *_, a in bank)
    adjusted = bank_end + sum(dit) - sum(oc)
    error = (adjusted - book_end) - sum(a for *_, a in bank_only)
    rng.shuffle(bank)
    fmt = lambda rows: "\n".join(f"  day {d:>2}  {desc:<42}{a:>12,.2f}" for d, desc, a in sorted(rows))  # noqa: E731
    doc = (f"Reconciliation for the month. Both the cash ledger and the bank statement started the month at "
           f"{start:,.2f} (reconciled last month).\nCASH LEDGER (book)\n{fmt(book)}\nBook balance at month end: "
           f"{book_end:,.2f}\nBANK STATEMENT\n{fmt(bank)}\nBank balance at month end: {bank_end:,.2f}")
    v = {"outstanding_checks_total": sum(oc), "deposits_in_transit_total": sum(dit), "adjusted_balance": adjusted,
         "bank_only_adjustment": sum(a for *_, a in bank_only), "book_error_correction": error}
    names = ["outstanding_checks_total", "deposits_in_transit_total", "adjusted_balance"]
    names += {1: [], 2: ["bank_only_adjustment"], 3: ["bank_only_adjustment", "book_error_correction"]}[difficulty]
    table = {"outstanding_checks_total": (money, "total of cheques in the books not yet cleared by the bank"),
             "deposits_in_transit_total": (money, "total of deposits in the books not yet on the bank statement"),
             "adjusted_balance": (money, "the reconciled (adjusted) cash balance at month end"),
             "bank_only_adjustment": (money, "net of the items on the bank statement only (fees, interest, "
                                      "debits, returned cheques) to record in the books, signed"),
             "book_error_correction": (money, "the correction of the recording error in the books, signed "
                                       "(added to the book balance)")}
    trap = {"outstanding_checks_total": sum(dit), "deposits_in_transit_total": sum(oc),
            "adjusted_balance": bank_end - sum(dit) + sum(oc), "bank_only_adjustment": -v["bank_only_adjustment"],
            "book_error_correction": -error}
    return build(ID_BANK_RECONCILIATION, difficulty, doc, fields_from(v, table, names), scale=1.0,
                 traps={"reversed": pick(trap, names)}, extra="Give amounts in dollars with cents.\n")


register_domain(_kit.field_domain(ID_BANK_RECONCILIATION, _draw_bank_reconciliation, """\
Bank reconciliation: matching ledger and statement, outstanding items and the adjusted balance.

A month's cash ledger and bank statement; match the items, total the outstanding cheques and
deposits in transit, give the adjusted balance; d2 adds bank-only items (fees, interest, direct
debits); d3 a returned (NSF) cheque and a transposition error in the books.
"""))


def _pay(rate: float, hours: float, pension: float, tax: str, d3: bool, mistake: str | None = None) -> dict:
    ot = max(0.0, min(hours, 50 if d3 else hours) - 40)
    dt = max(0.0, hours - 50) if d3 else 0.0
    gross = rate * (hours - ot - dt) + rate * 1.5 * ot + rate * 2 * dt
    if mistake == "no_premium":
        gross = rate * hours
    pens = gross * pension / 100
    base = gross if mistake == "tax_before_pension" else gross - pens
    if tax == "brackets":
        t = 0.15 * max(0.0, min(base, 1000) - 300) + 0.30 * max(0.0, base - 1000)
    else:
        t = base * float(tax) / 100
    return {"gross_pay": gross, "pension": pens, "tax_withheld": t, "net_pay": gross - pens - t}


ID_PAYROLL = "finance.payroll-v1"


def _draw_payroll(rng: random.Random, difficulty: int) -> Task:
    d3 = difficulty == 3
    people = [(f"{rng.choice(['A.', 'B.', 'C.', 'D.', 'E.', 'F.'])} {last}", _cents(rng, 15, 60),
               rng.randint(50, 120 if d3 else 110) / 2) for last in rng.sample(
                   ["Okafor", "Lindqvist", "Ferreira", "Tanaka", "Novak", "Haddad", "Moreau", "Osei", "Brandt"],
                   3 + 2 * difficulty)]
    pension = rng.choice([3, 4, 5, 6]) if difficulty > 1 else 0
    tax = "brackets" if d3 else str(rng.choice([12, 15, 18, 20, 22]))
    who = rng.choice([p for p in people if p[2] > 40] or people)
    v = _pay(who[1], who[2], pension, tax, d3)
    v["total_gross_payroll"] = sum(_pay(r, h, pension, tax, d3)["gross_pay"] for _, r, h in people)
    rules = ["Hours above 40 in the week are paid at 1.5 times the hourly rate"
             + ("; hours above 50 at 2 times." if d3 else ".")]
    if pension:
        rules.append(f"Employees contribute {pension}% of gross pay to the pension plan before tax.")
    if tax == "brackets":
        rules.append("Weekly withholding on pay after pension: 0% up to $300, 15% from $300 to $1,000, 30% above.")
    elif difficulty > 1:
        rules.append(f"Income tax is withheld at a flat {tax}% of pay after the pension contribution.")
    sheet = "\n".join(f"  {n:<14} ${r:>6,.2f}/h {h:>6} h" for n, r, h in people)
    doc = f"WEEKLY TIMESHEET\n{sheet}\nPay rules: " + " ".join(rules)
    names = {1: ["gross_pay", "total_gross_payroll"], 2: ["gross_pay", "pension", "tax_withheld", "net_pay"],
             3: ["gross_pay", "tax_withheld", "net_pay", "total_gross_payroll"]}[difficulty]
    table = {"gross_pay": (money, f"{who[0]}'s gross pay for the week"),
             "pension": (money, f"{who[0]}'s pension contribution"),
             "tax_withheld": (money, f"income tax withheld from {who[0]}'s pay"),
             "net_pay": (money, f"{who[0]}'s net pay"),
             "total_gross_payroll": (money, "gross pay of all employees on the timesheet, summed")}
    traps = {}
    for m in ("no_premium", "tax_before_pension"):
        t = _pay(who[1], who[2], pension, tax, d3, m)
        t["total_gross_payroll"] = sum(_pay(r, h, pension, tax, d3, m)["gross_pay"] for _, r, h in people)
        traps[m] = pick(t, names)
    return build(ID_PAYROLL, difficulty, doc, fields_from(v, table, names), scale=1.0, traps=traps,
                 extra="Give amounts in dollars with cents.\n")


register_domain(_kit.field_domain(ID_PAYROLL, _draw_payroll, """\
Payroll from a timesheet: overtime, gross pay, pre-tax deductions, withholding and net pay.

A weekly timesheet: gross pay with overtime (1.5x above 40 h), the whole payroll; d2 pre-tax
pension and a flat withholding rate, net pay; d3 double time above 50 h and progressive
withholding brackets.
"""))
