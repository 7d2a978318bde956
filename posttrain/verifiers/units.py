"""Physical quantities with units: parse ``"12.5 km/h"``, reduce to SI, compare within tolerance.

Guarantees:
- :func:`parse_quantity` is total and strict: exactly one number followed by one unit
  expression (SI prefixes, ``*``, ``/``, ``^n``, e.g. ``kg*m/s^2``, ``g/cm^3``, ``J/(mol*K)``
  is *not* accepted — write ``J/mol/K``); anything else (two numbers, prose, unknown units)
  gives None;
- temperatures in ``K``, ``°C``/``degC``, ``°F``/``degF`` are handled as affine scales
  (:func:`parse_temperature`);
- :func:`quantity_score` is 1 within ``rel_tol``, decays linearly to 0 at ``5 * rel_tol``,
  and is 0 for the wrong dimension (so "right number, wrong unit" never pays).

Does not: do symbolic algebra, or accept unit-less numbers (the prompt always asks for a unit).
"""

from __future__ import annotations

import math
import re

Dims = tuple[int, int, int, int, int, int]  # m, kg, s, A, K, mol

_Z: Dims = (0, 0, 0, 0, 0, 0)


def _d(m: int = 0, kg: int = 0, s: int = 0, a: int = 0, k: int = 0, mol: int = 0) -> Dims:
    return (m, kg, s, a, k, mol)


# unit -> (factor to SI, dimensions); prefixable units are marked in _PREFIXABLE
BASE: dict[str, tuple[float, Dims]] = {
    "m": (1.0, _d(m=1)), "g": (1e-3, _d(kg=1)), "s": (1.0, _d(s=1)), "A": (1.0, _d(a=1)), "K": (1.0, _d(k=1)),
    "mol": (1.0, _d(mol=1)), "N": (1.0, _d(m=1, kg=1, s=-2)), "J": (1.0, _d(m=2, kg=1, s=-2)),
    "W": (1.0, _d(m=2, kg=1, s=-3)), "Pa": (1.0, _d(m=-1, kg=1, s=-2)), "V": (1.0, _d(m=2, kg=1, s=-3, a=-1)),
    "ohm": (1.0, _d(m=2, kg=1, s=-3, a=-2)), "Ω": (1.0, _d(m=2, kg=1, s=-3, a=-2)), "C": (1.0, _d(s=1, a=1)),
    "Hz": (1.0, _d(s=-1)), "L": (1e-3, _d(m=3)), "F": (1.0, _d(m=-2, kg=-1, s=4, a=2)), "eV": (1.602176634e-19, _d(m=2, kg=1, s=-2)),
    "min": (60.0, _d(s=1)), "h": (3600.0, _d(s=1)), "day": (86400.0, _d(s=1)), "atm": (101325.0, _d(m=-1, kg=1, s=-2)),
    "bar": (1e5, _d(m=-1, kg=1, s=-2)), "cal": (4.184, _d(m=2, kg=1, s=-2)), "Wh": (3600.0, _d(m=2, kg=1, s=-2)),
    "M": (1000.0, _d(m=-3, mol=1)), "t": (1000.0, _d(kg=1)), "ft": (0.3048, _d(m=1)), "in": (0.0254, _d(m=1)),
    "mi": (1609.344, _d(m=1)), "lb": (0.45359237, _d(kg=1)), "deg": (math.pi / 180, _Z), "°": (math.pi / 180, _Z), "rad": (1.0, _Z),
}
_PREFIXABLE = {"m", "g", "s", "A", "mol", "N", "J", "W", "Pa", "V", "ohm", "Ω", "C", "Hz", "L", "F", "eV", "Wh", "M",
               "bar", "cal"}
PREFIXES = {"G": 1e9, "M": 1e6, "k": 1e3, "h": 1e2, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6,
            "n": 1e-9, "p": 1e-12}

_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QTY = re.compile(rf"^\s*({_NUM})(?:\s*(?:x|\*|×)\s*10\^([+-]?\d+))?\s*(\S.*?)\s*$")


def parse_unit(text: str) -> tuple[float, Dims] | None:
    """``"km/h"`` -> (1000/3600, (1, 0, -1, 0, 0, 0)); None when any factor is unknown."""
    t = text.strip().replace("·", "*").replace(" ", "")
    if not t or len(t) > 40 or not re.fullmatch(r"[A-Za-zΩµμ°]+(\^-?\d)?([*/][A-Za-zΩµμ°]+(\^-?\d)?)*", t):
        return None
    factor, dims = 1.0, [0] * 6
    for i, part in enumerate(re.split(r"(?=[*/])", t)):
        sign = -1 if part.startswith("/") else 1
        part = part.lstrip("*/")
        m = re.fullmatch(r"([A-Za-zΩµμ°]+)(?:\^(-?\d))?", part)
        if not m:
            return None
        sym, exp = m.group(1), int(m.group(2) or 1) * sign
        one = _unit(sym)
        if one is None:
            return None
        factor *= one[0] ** exp
        dims = [a + b * exp for a, b in zip(dims, one[1])]
    return factor, tuple(dims)  # type: ignore[return-value]


def _unit(sym: str) -> tuple[float, Dims] | None:
    if sym in BASE:
        return BASE[sym]
    for p, f in PREFIXES.items():
        if sym.startswith(p) and sym[len(p):] in _PREFIXABLE:
            base = BASE[sym[len(p):]]
            return base[0] * f, base[1]
    return None


def parse_quantity(text: str) -> tuple[float, Dims] | None:
    """``"12.5 km"`` -> (12500.0, metre dims); None unless exactly one number and one unit."""
    m = _QTY.match(text or "")
    if not m or len(text) > 80:
        return None
    try:
        val = float(m.group(1)) * (10.0 ** int(m.group(2)) if m.group(2) else 1.0)
    except (ValueError, OverflowError):
        return None
    unit = parse_unit(m.group(3))
    if unit is None or not math.isfinite(val):
        return None
    return val * unit[0], unit[1]


def parse_temperature(text: str) -> float | None:
    """A temperature in kelvin from ``"25 °C"``, ``"77 degF"``, ``"300 K"``; None otherwise."""
    m = re.fullmatch(rf"\s*({_NUM})\s*(°C|degC|ºC|°F|degF|ºF|K)\s*", text or "")
    if not m:
        return None
    v, u = float(m.group(1)), m.group(2)
    if u == "K":
        return v
    if u.endswith("C"):
        return v + 273.15
    return (v - 32) * 5 / 9 + 273.15


def closeness(got: float, want: float, rel_tol: float) -> float:
    """1 within rel_tol, linear to 0 at 5 * rel_tol (a zero target needs an exact zero)."""
    err = abs(got - want) / max(abs(want), 1e-300)
    if err <= rel_tol:
        return 1.0
    return max(0.0, 1.0 - (err - rel_tol) / (4 * rel_tol))


def quantity_score(answer: str, want_si: float, dims: Dims, rel_tol: float = 0.01) -> tuple[float, str]:
    """(value in [0, 1], reason) for a ``number unit`` answer against an SI value and dimensions."""
    q = parse_quantity(answer)
    if q is None:
        return 0.0, "not '<number> <unit>' with a known unit"
    if q[1] != tuple(dims):
        return 0.0, "wrong dimension"
    v = closeness(q[0], want_si, rel_tol)
    return v, f"relative error {abs(q[0] - want_si) / max(abs(want_si), 1e-300):.3g}"
