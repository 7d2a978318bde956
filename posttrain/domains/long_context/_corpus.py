"""A generated staff handbook: people, their facts, devices, change logs and filler, as prose.

What it is: :func:`make_people` draws unique people (some with near-miss names: same first or
same last name as another), :func:`profile` writes one person's facts in one of several
phrasings, :func:`filler` writes paragraphs full of distractor identifiers in the same format
as the real ones (ticket numbers that look like access codes), and :func:`assemble` interleaves
paragraphs into a document of the asked size.

Guarantees: every fact a question needs is stated exactly once in the profiles (superseded
values are marked as former); names and codes are unique; deterministic given the
``random.Random``. Does not: produce natural prose; it is a retrieval substrate.
"""

from __future__ import annotations

import random
import string
from typing import Any

FIRST = ["Ada", "Bram", "Cleo", "Dara", "Emil", "Fenna", "Gus", "Hana", "Ivo", "Jule", "Kasper", "Lior", "Mila",
         "Noor", "Otto", "Pia", "Quin", "Rhea", "Sven", "Tess", "Umar", "Vera", "Wim", "Xena", "Yara", "Zeno",
         "Anouk", "Bo", "Cas", "Dirk", "Elin", "Floor", "Gijs", "Hugo", "Iris", "Joost", "Kiki", "Lars", "Maud", "Niels"]
LAST = ["Okafor", "Lindqvist", "Ferreira", "Tanaka", "Abara", "Novak", "Haddad", "Kowalski", "Moreau", "Quispe",
        "Osei", "Brandt", "Castillo", "Dimitrov", "Eriksen", "Fischer", "Gallo", "Horvat", "Ivanova", "Janssen",
        "Kaur", "Larsen", "Mendes", "Nakamura", "Olsen", "Petrov", "Rossi", "Sato", "Toth", "Vargas"]
CITIES = ["Aberdeen", "Bologna", "Cordoba", "Dresden", "Eindhoven", "Fukuoka", "Gdansk", "Halifax", "Innsbruck",
          "Jaipur", "Kingston", "Leipzig", "Malmo", "Nantes", "Oaxaca", "Porto", "Quebec", "Rotterdam", "Salvador",
          "Tampere"]
DEPTS = ["Logistics", "Finance", "Research", "Support", "Legal", "Design", "Security", "Facilities"]
FILLER = [
    "The quarterly review covered onboarding, the cafeteria menu and the new badge printers.",
    "Ticket {code} about the projector in room {room} was closed after a firmware update.",
    "Reminder: parking permits expire at the end of the month; renew them at the front desk.",
    "The facilities team logged request {code} for a leaking tap on floor {floor}.",
    "A reminder that ticket {code} is a duplicate of an older printer complaint.",
    "The wellness week schedule includes yoga on Tuesday and a cycling challenge on Friday.",
    "Inventory check {code} found {n} spare keyboards and {m} docking stations.",
    "Visitors must sign in at reception; temporary passes are numbered like {code}.",
    "The library now lends noise-cancelling headphones for up to {n} days.",
    "Shipment {code} was delayed by {n} days because of weather at the port.",
]


def code(rng: random.Random) -> str:
    return f"{rng.choice(string.ascii_uppercase)}{rng.randint(1, 9)}-{rng.randint(1000, 9999)}"


def make_people(rng: random.Random, n: int, near_miss: float) -> list[dict[str, Any]]:
    """``n`` people with unique names and codes; a ``near_miss`` share reuse a first or last name."""
    names: list[str] = []
    while len(names) < n:
        if names and rng.random() < near_miss:
            other = rng.choice(names).split()
            cand = f"{other[0]} {rng.choice(LAST)}" if rng.random() < 0.5 else f"{rng.choice(FIRST)} {other[1]}"
        else:
            cand = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if cand not in names:
            names.append(cand)
    codes: set[str] = set()
    people = []
    for nm in names:
        c = code(rng)
        while c in codes:
            c = code(rng)
        codes.add(c)
        people.append({"name": nm, "code": c, "city": rng.choice(CITIES), "dept": rng.choice(DEPTS),
                       "start": rng.randint(2005, 2023), "ext": rng.randint(2000, 8999),
                       "device": f"SN-{rng.randint(100000, 999999)}"})
    for i, p in enumerate(people):
        p["manager"] = people[rng.choice([j for j in range(n) if j != i])]["name"] if n > 1 else None
    return people


def profile(rng: random.Random, p: dict[str, Any], old_code: str | None = None) -> str:
    """One person's facts in one of several phrasings."""
    forms = [
        f"{p['name']} works in {p['dept']} at the {p['city']} office and joined in {p['start']}. "
        f"Their access code is {p['code']} and their desk phone is extension {p['ext']}.",
        f"Profile: {p['name']}. Department: {p['dept']}. Office: {p['city']}. Start year: {p['start']}. "
        f"Access code: {p['code']}. Extension: {p['ext']}.",
        f"Based in {p['city']}, {p['name']} has been with {p['dept']} since {p['start']}; reach them on extension "
        f"{p['ext']}. The access code assigned to {p['name']} is {p['code']}.",
    ]
    text = rng.choice(forms)
    if p.get("manager"):
        text += f" {p['name']} reports to {p['manager']}."
    text += f" Laptop {p['device']} is assigned to {p['name']}."
    if old_code:
        text += f" (The former access code {old_code} was revoked.)"
    return text


def filler(rng: random.Random) -> str:
    k = rng.randint(2, 4)
    return " ".join(rng.choice(FILLER).format(code=code(rng), room=rng.randint(100, 999), floor=rng.randint(1, 12),
                                              n=rng.randint(2, 40), m=rng.randint(2, 40)) for _ in range(k))


def assemble(rng: random.Random, paragraphs: list[str], n_filler: int, title: str) -> str:
    """The paragraphs shuffled with ``n_filler`` filler paragraphs, numbered as sections."""
    paras = paragraphs + [filler(rng) for _ in range(n_filler)]
    rng.shuffle(paras)
    return f"{title}\n\n" + "\n\n".join(f"[{i + 1}] {p}" for i, p in enumerate(paras))


SIZES = {1: (8, 6, 0.2), 2: (30, 25, 0.35), 3: (80, 80, 0.5), 4: (200, 220, 0.6)}  # people, filler, near-miss
