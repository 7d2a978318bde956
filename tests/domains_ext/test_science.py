"""Science domains and the units verifier: reference 1.0, exploits at the floor, unit-aware
equivalence, tolerance decay, dimension checks, balancing rules."""

from __future__ import annotations

import pytest

import posttrain.domains.science  # noqa: F401  (registers the domains)
from posttrain.domains.base import DOMAINS, sample_task
from posttrain.domains.math_ext._selfcheck import check_domain_quick
from posttrain.domains.science.chemistry import balance, element_counts, formula_mass
from posttrain.verifiers.units import parse_quantity, parse_temperature, quantity_score

IDS = sorted(i for i in DOMAINS.ids() if i.startswith("science."))


def test_family_size():
    assert len(IDS) >= 15


@pytest.mark.parametrize("dom_id", IDS)
def test_self_check(dom_id):
    assert check_domain_quick(DOMAINS.get(dom_id), range(4)) == []


def test_parse_quantity_units_and_strictness():
    assert parse_quantity("12.5 km")[0] == pytest.approx(12500)
    v, dims = parse_quantity("36 km/h")
    assert v == pytest.approx(10) and dims == (1, 0, -1, 0, 0, 0)
    assert parse_quantity("1 g/cm^3")[0] == pytest.approx(1000)
    assert parse_quantity("2 kWh")[0] == pytest.approx(7.2e6)
    assert parse_quantity("3 kg*m/s^2")[1] == parse_quantity("3 N")[1]
    assert parse_quantity("1.5e-3 mol")[0] == pytest.approx(1.5e-3)
    assert parse_quantity("4 pF")[0] == pytest.approx(4e-12)
    for bad in ["12", "12 km 13 km", "km 12", "12 furlongs", "12 km or 13 km", "", "1e999 m"]:
        assert parse_quantity(bad) is None, bad
    assert parse_temperature("25 °C") == pytest.approx(298.15)
    assert parse_temperature("212 degF") == pytest.approx(373.15)


def test_quantity_score_tolerance_and_dimension():
    dims = (1, 0, 0, 0, 0, 0)
    assert quantity_score("1500 m", 1500, dims)[0] == 1.0
    assert quantity_score("1.5 km", 1500, dims)[0] == 1.0
    assert quantity_score("1.53 km", 1500, dims)[0] == pytest.approx(0.75)
    assert quantity_score("1.6 km", 1500, dims)[0] == 0.0
    assert quantity_score("1500 s", 1500, dims)[0] == 0.0
    assert quantity_score("1.5e-14 m", 1.5e-14, dims)[0] == 1.0
    assert quantity_score("1.5e-11 m", 1.5e-14, dims)[0] == 0.0


def test_equivalent_units_accepted_by_domains():
    dom = DOMAINS.get("science.kinematics-v1")
    t = sample_task(dom, 0, 1)
    metres = float(dom.solve(t).split()[0])
    assert dom.score(t, f"{metres / 1000:.6g} km").value == 1.0
    assert dom.score(t, f"{metres:.6g}").value == 0.0
    assert dom.score(t, f"{metres * 1.03:.6g} m").value == pytest.approx(0.5, abs=0.01)


def test_chemistry_helpers():
    assert element_counts("Ca3(PO4)2") == {"Ca": 3, "P": 2, "O": 8}
    assert formula_mass("H2O") == pytest.approx(18.015)
    assert formula_mass("CuSO4·5H2O") == pytest.approx(249.68, abs=0.02)
    assert balance(["C3H8", "O2"], ["CO2", "H2O"]) == [1, 5, 3, 4]
    assert balance(["Fe", "O2"], ["Fe2O3"]) == [4, 3, 2]


def test_balance_scoring():
    dom = DOMAINS.get("science.balance-v1")
    t = sample_task(dom, 1, 2)
    co = t.hidden["coeffs"]
    assert dom.score(t, ", ".join(str(2 * c) for c in co)).value == 0.5
    assert dom.score(t, ", ".join(str(c) for c in co[:-1])).value == 0.0
    assert dom.score(t, ", ".join(["1"] * len(co))).value == 0.0


def test_ph_and_temperature_tolerance():
    dom = DOMAINS.get("science.ph-v1")
    t = sample_task(dom, 0, 1)
    ph = t.hidden["ph"]
    assert dom.score(t, f"{ph + 0.03:.3f}").value == pytest.approx(0.5, abs=0.01)
    dom = DOMAINS.get("science.temperature-v1")
    t = sample_task(dom, 0, 1)
    assert dom.score(t, dom.solve(t).replace("°C", "degC")).value == 1.0
