"""Chemistry: temperature scales, ideal gas, molar mass from formulas, balancing equations,
radioactive decay, pH, dilution. Quantity answers as in :mod:`._kit`; the equation
balancer answers with integer coefficients.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction
from functools import reduce

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.units import parse_temperature

from ..math_ext._kit import answer_text, fail, parse_int, parse_items
from ._kit import fmt, linear_tolerance, quantity_domain, quantity_draft

R = 8.314
MASSES = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "Na": 22.990, "Mg": 24.305, "Al": 26.982, "S": 32.06,
          "Cl": 35.45, "K": 39.098, "Ca": 40.078, "Fe": 55.845, "Cu": 63.546, "P": 30.974, "Zn": 65.38}


def _temperature(rng: random.Random, difficulty: int) -> Draft:
    """Convert between °C, °F and K (d1 C<->K, d2 C<->F, d3 F<->K).

    Answer ``<number> <scale>`` in any of K, °C/degC, °F/degF (converted affinely); full
    credit within 0.1 K, linear to 0 at 0.5 K. Not covered: Rankine. Probes: the input number
    unchanged, the Fahrenheit conversion without the 32 offset, a scale-less number.
    """
    pairs = {1: [("°C", "K"), ("K", "°C")], 2: [("°C", "°F"), ("°F", "°C")], 3: [("°F", "K"), ("K", "°F")]}
    src, dst = rng.choice(pairs[difficulty])
    x = round(rng.uniform(-40, 400) if src != "K" else rng.uniform(200, 600), 1)
    kelvin = parse_temperature(f"{x} {src}")
    out = {"K": kelvin, "°C": kelvin - 273.15, "°F": (kelvin - 273.15) * 9 / 5 + 32}[dst]
    no_offset = {"K": kelvin, "°C": (x - 0) * 5 / 9 if src == "°F" else kelvin - 273.15,
                 "°F": (kelvin - 273.15) * 9 / 5}[dst]
    prompt = f"Convert {x} {src} to {dst}. Reply with only the value and the scale, e.g. '12.5 {dst}'."
    wrong = {"unchanged": f"{x} {dst}"}
    if abs(no_offset - out) > 1:
        wrong["no_offset"] = f"{no_offset:.2f} {dst}"
    return Draft(prompt, answer=f"{out:.2f} {dst}", hidden={"kelvin": kelvin, "mistakes": wrong})


def _temperature_check(task: Task, answer: str) -> Score:
    k = parse_temperature(answer_text(answer) or "")
    if k is None:
        return fail(task.domain, "not '<number> <K|°C|°F>'")
    return linear_tolerance(task, abs(k - task.hidden["kelvin"]), full=0.1, span=0.4, unit=" K")


def _temperature_exploits(task: Task) -> dict[str, str]:
    return {"no_scale": task.hidden["answer"].split()[0], **{k: v for k, v in task.hidden["mistakes"].items()
                                                             if abs(parse_temperature(v) - task.hidden["kelvin"]) > 0.5}}


register_domain(SingleTurnDomain("science.temperature-v1", _temperature, _temperature_check,
                                 _temperature_exploits, description=_temperature.__doc__))


def _ideal_gas(rng: random.Random, difficulty: int) -> Draft:
    """The ideal gas law PV = nRT with unit conversions (°C, kPa, L, mL).

    PV = nRT (R = 8.314 J/(mol K)): pressure (d1), volume in litres with
    °C given (d2), moles from a gas in kPa, mL and °C (d3). Not covered: real-gas corrections.
    Probes: temperature left in °C, litres treated as m^3."""
    n, tc = round(rng.uniform(0.1, 5), 2), round(rng.uniform(-20, 200), 0)
    t = tc + 273.15
    if difficulty == 1:
        v = round(rng.uniform(0.005, 0.1), 3)
        return quantity_draft(f"{n} mol of an ideal gas at {fmt(t)} K fills {v} m^3 (R = 8.314 J/(mol K)). What "
                              f"is its pressure?", n * R * t / v, "kPa", mistakes={"inverse": v / (n * R * t) * 1e6})
    if difficulty == 2:
        p = round(rng.uniform(50, 500), 0)
        return quantity_draft(f"{n} mol of an ideal gas at {fmt(tc)} °C and {fmt(p)} kPa (R = 8.314 J/(mol K)). "
                              f"What volume does it occupy?", n * R * t / (p * 1000), "L",
                              mistakes={"celsius": n * R * max(tc, 1) / (p * 1000)})
    p, ml = round(rng.uniform(50, 500), 0), round(rng.uniform(100, 5000), 0)
    return quantity_draft(
        f"A gas sample at {fmt(p)} kPa and {fmt(tc)} °C occupies {fmt(ml)} mL "
        f"(R = 8.314 J/(mol K)). How many moles does it contain?", p * 1000 * ml * 1e-6 / (R * t), "mol",
        mistakes={"celsius": p * 1000 * ml * 1e-6 / (R * max(tc, 1)), "ml_as_l": p * 1000 * ml * 1e-3 / (R * t)})


register_domain(quantity_domain("science.ideal_gas-v1", _ideal_gas, _ideal_gas.__doc__))


def formula_mass(formula: str) -> float:
    """Molar mass of a formula like ``Ca(OH)2`` or ``CuSO4·5H2O`` (hydrates with ·)."""
    total = 0.0
    for part in formula.split("·"):
        m = re.match(r"^(\d*)(.*)$", part)
        mult = int(m.group(1) or 1)
        total += mult * _group_mass(m.group(2))
    return total


def _group_mass(s: str) -> float:
    mass, _ = _parse_group(s, 0)
    return mass


def _parse_group(s: str, i: int) -> tuple[float, int]:
    """Mass of the group starting at ``s[i]`` up to its closing ')' (or the end), and where it stopped."""
    total = 0.0
    while i < len(s):
        if s[i] == ")":
            return total, i + 1
        if s[i] == "(":
            m, i = _parse_group(s, i + 1)
        else:
            sym = re.match(r"[A-Z][a-z]?", s[i:]).group(0)
            m, i = MASSES[sym], i + len(sym)
        k = re.match(r"\d*", s[i:]).group(0)
        total += m * int(k or 1)
        i += len(k)
    return total, i


COMPOUNDS = {1: ["H2O", "CO2", "NaCl", "NH3", "CH4", "O2", "HCl", "KCl", "MgO", "NO2"],
             2: ["H2SO4", "C6H12O6", "CaCO3", "NaHCO3", "C2H5OH", "KNO3", "Na2CO3", "H3PO4",
                 "Fe2O3", "CuSO4"],
             3: ["Ca(OH)2", "Al2(SO4)3", "Mg(NO3)2", "(NH4)2SO4", "CuSO4·5H2O", "Ca3(PO4)2", "Fe(OH)3",
                 "Zn(NO3)2·6H2O", "Al(OH)3", "MgSO4·7H2O"]}


def _molar_mass(rng: random.Random, difficulty: int) -> Draft:
    """Molar mass of a chemical formula and mass-mole conversions.

    Molar mass from a formula (atomic masses given in the prompt):
    simple (d1), larger (d2), parentheses and hydrates (d3); d2/d3 sometimes ask for the mass of
    n moles. Not covered: isotopes. Probes: ignoring subscripts (each element once), ignoring
    the group multiplier / hydrate water."""
    f = rng.choice(COMPOUNDS[difficulty])
    elems = sorted(set(re.findall(r"[A-Z][a-z]?", f)))
    table = ", ".join(f"{e} = {MASSES[e]}" for e in elems)
    mm = formula_mass(f)
    flat = sum(MASSES[e] for e in re.findall(r"[A-Z][a-z]?", f))
    if difficulty > 1 and rng.random() < 0.5:
        n = round(rng.uniform(0.1, 5), 2)
        return quantity_draft(f"Atomic masses (g/mol): {table}. What is the mass of {n} mol of {f}?",
                              n * mm / 1000, "g", mistakes={"no_subscripts": n * flat / 1000, "one_mole": mm / 1000})
    return quantity_draft(f"Atomic masses (g/mol): {table}. What is the molar mass of {f}?",
                          mm / 1000, "g/mol", mistakes={"no_subscripts": flat / 1000})


register_domain(quantity_domain("science.molar_mass-v1", _molar_mass, _molar_mass.__doc__))


def element_counts(formula: str) -> dict[str, int]:
    """Atoms per element of a formula (``Ca3(PO4)2`` -> Ca 3, P 2, O 8)."""
    out: dict[str, int] = {}

    def walk(s: str, i: int, mult: int) -> int:
        local: list[tuple[str, int]] = []
        while i < len(s) and s[i] != ")":
            if s[i] == "(":
                sub: dict[str, int] = {}
                j = walk_into(s, i + 1, sub)
                k = re.match(r"\d*", s[j:]).group(0)
                i = j + len(k)
                local += [(e, c * int(k or 1)) for e, c in sub.items()]
            else:
                sym = re.match(r"[A-Z][a-z]?", s[i:]).group(0)
                i += len(sym)
                k = re.match(r"\d*", s[i:]).group(0)
                i += len(k)
                local.append((sym, int(k or 1)))
        for e, c in local:
            out[e] = out.get(e, 0) + c * mult
        return i + 1

    def walk_into(s: str, i: int, sub: dict[str, int]) -> int:
        nonlocal out
        saved, out = out, sub
        j = walk(s, i, 1)
        out = saved
        return j

    walk(formula, 0, 1)
    return out


def balance(reactants: list[str], products: list[str]) -> list[int] | None:
    """The minimal positive integer coefficients, or None when not uniquely balanceable."""
    species = reactants + products
    counts = [element_counts(f) for f in species]
    elems = sorted({e for c in counts for e in c})
    rows = [[Fraction(c.get(e, 0) * (1 if j < len(reactants) else -1)) for j, c in enumerate(counts)] for e in elems]
    n = len(species)
    piv_cols, r = [], 0
    for col in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        rows[r] = [v / rows[r][col] for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                rows[i] = [a - rows[i][col] * b for a, b in zip(rows[i], rows[r])]
        piv_cols.append(col)
        r += 1
    free = [c for c in range(n) if c not in piv_cols]
    if len(free) != 1:
        return None
    x = [Fraction(0)] * n
    x[free[0]] = Fraction(1)
    for i, col in enumerate(piv_cols):
        x[col] = -rows[i][free[0]]
    lcm = reduce(lambda a, b: a * b // math.gcd(a, b), (v.denominator for v in x))
    ints = [int(v * lcm) for v in x]
    g = reduce(math.gcd, ints)
    ints = [v // g for v in ints]
    if all(v < 0 for v in ints):
        ints = [-v for v in ints]
    return ints if all(v > 0 for v in ints) else None


CATIONS = {"Na": 1, "K": 1, "Li": 1, "Ca": 2, "Mg": 2, "Zn": 2, "Al": 3, "Fe": 3}
ANIONS = {"Cl": 1, "NO3": 1, "SO4": 2, "PO4": 3}
MASSES.setdefault("Li", 6.94)


def salt(m: str, v: int, a: str, w: int) -> str:
    g = math.gcd(v, w)
    nm, na = w // g, v // g
    an = (f"({a}){na}" if len(re.findall(r"[A-Z]", a)) > 1 or any(ch.isdigit() for ch in a) else f"{a}{na}") if na > 1 else a
    return f"{m}{nm if nm > 1 else ''}{an}"


def _reaction(rng: random.Random, difficulty: int) -> tuple[list[str], list[str]]:
    if difficulty == 1:
        x = rng.randint(1, 8)
        y = rng.choice([2 * x + 2, 2 * x]) if x > 1 else 4
        return [f"C{x if x > 1 else ''}H{y}", "O2"], ["CO2", "H2O"]
    if difficulty == 2:
        m, a = rng.choice(sorted(CATIONS)), rng.choice(sorted(ANIONS))
        v, w = CATIONS[m], ANIONS[a]
        acid = f"H{w if w > 1 else ''}{a}"
        base = f"{m}OH" if v == 1 else f"{m}(OH){v}"
        return [acid, base], [salt(m, v, a, w), "H2O"]
    kind = rng.randrange(3)
    m = rng.choice(sorted(CATIONS))
    v = CATIONS[m]
    if kind == 0:
        return [m, "O2"], [salt(m, v, "O", 2)]
    if kind == 1:
        return [m, "HCl"], [salt(m, v, "Cl", 1), "H2"]
    x, z = rng.randint(2, 6), rng.randint(1, 2)
    return [f"C{x}H{2 * x + 2}O{z if z > 1 else ''}", "O2"], ["CO2", "H2O"]


def _balance(rng: random.Random, difficulty: int) -> Draft:
    """Balance a chemical equation with the smallest positive integer coefficients.

    Reactions: hydrocarbon combustion (d1), acid-base neutralisation with polyatomic ions (d2),
    metal oxidation, metal + HCl, and alcohol combustion (d3). Answer: the coefficients in
    species order, comma-separated (write 1s). 1 for the minimal vector; 0.5 for a positive
    multiple of it (balanced, not minimal); 0 otherwise — all-ones or per-coefficient guessing
    earns nothing. Not covered: redox in ionic form. Probes: all ones, the reference doubled
    (scores 0.5 by design, so it is not a probe), the reference reversed.
    """
    while True:
        re_, pr = _reaction(rng, difficulty)
        co = balance(re_, pr)
        if co and any(c > 1 for c in co):
            break
    eq = f"{' + '.join(re_)} -> {' + '.join(pr)}"
    prompt = (f"Balance: {eq}. Reply with only the {len(co)} smallest positive integer coefficients in the order "
              f"the species appear, comma-separated (write 1 where needed).")
    return Draft(prompt, answer=", ".join(map(str, co)), public={"equation": eq},
                 hidden={"coeffs": co})


def _balance_check(task: Task, answer: str) -> Score:
    want = task.hidden["coeffs"]
    got = parse_items(answer_text(answer), len(want), parse_int)
    if got is None or any(g <= 0 for g in got):
        return fail(task.domain, f"not {len(want)} positive integers")
    if got == want:
        return Score(1.0, components={"balanced": (1.0, 1.0), "minimal": (1.0, 1.0)}, reason="balanced, minimal",
                     verifier_version=task.domain)
    k = Fraction(got[0], want[0])
    if all(Fraction(g, w) == k for g, w in zip(got, want)):
        return Score.weighted({"balanced": (1.0, 1.0), "minimal": (0.0, 1.0)}, reason="balanced but not minimal",
                              verifier_version=task.domain)
    return Score.weighted({"balanced": (0.0, 1.0), "minimal": (0.0, 1.0)}, reason="not balanced",
                          verifier_version=task.domain)


def _balance_exploits(task: Task) -> dict[str, str]:
    co = task.hidden["coeffs"]
    out = {"all_ones": ", ".join(["1"] * len(co)), "reversed": ", ".join(map(str, co[::-1]))}
    return {k: v for k, v in out.items() if [int(x) for x in v.split(", ")] != co}


register_domain(SingleTurnDomain("science.balance-v1", _balance, _balance_check, _balance_exploits,
                                 description=_balance.__doc__))
