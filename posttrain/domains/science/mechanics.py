"""Units and classical mechanics: unit conversion, constant-acceleration kinematics,
projectiles, Newton's second law with friction, energy conservation, work and power,
density, collisions. Answers are ``<number> <unit>`` (see :mod:`._kit`); g = 9.81 m/s^2.
"""

from __future__ import annotations

import math
import random

from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft
from posttrain.verifiers.units import parse_unit

from ._kit import fmt, quantity_domain, quantity_draft

G = 9.81
CONVERSIONS = {
    1: [("km", "m"), ("mg", "g"), ("ms", "s"), ("mL", "L"), ("kJ", "J"), ("cm", "mm"), ("kPa", "Pa"), ("MW", "kW")],
    2: [("km/h", "m/s"), ("g/cm^3", "kg/m^3"), ("kWh", "MJ"), ("mi", "km"), ("lb", "kg"), ("atm", "kPa"), ("h", "s"),
        ("cal", "J")],
    3: [("m/s", "km/h"), ("kg/m^3", "g/mL"), ("MJ", "kWh"), ("ft", "cm"), ("bar", "atm"), ("uF", "nF"), ("eV", "J"),
        ("mol/L", "mmol/mL")],
}


def _unit_convert(rng: random.Random, difficulty: int) -> Draft:
    """Converting a physical quantity to a requested unit (SI prefixes, compound and non-SI units).

    Convert a quantity to a requested unit (SI prefixes d1, compound
    and non-SI units d2, reverse and chained conversions d3). Any equivalent unit is accepted by
    the verifier, but the prompt asks for the target unit. Not covered: temperatures (see
    science.temperature-v1). Probes: the input number unchanged in the target unit, a
    factor-of-1000 prefix error, no unit, a wrong dimension."""
    src, dst = rng.choice(CONVERSIONS[difficulty])
    x = round(rng.uniform(0.5, 500), rng.randint(0, 2))
    si = x * parse_unit(src)[0]  # type: ignore[index]
    prompt = f"Convert {x} {src} to {dst}."
    return quantity_draft(prompt, si, dst, mistakes={"unchanged": x * parse_unit(dst)[0]})  # type: ignore[index]


register_domain(quantity_domain("science.unit_convert-v1", _unit_convert, _unit_convert.__doc__))


def _kinematics(rng: random.Random, difficulty: int) -> Draft:
    """Constant-acceleration kinematics in one dimension (distance, final speed, time).

    Constant acceleration along a line: distance from rest (d1),
    final speed from u, a, s (d2, v^2 = u^2 + 2as), time to cover s from u with a (d3, the
    positive root). Not covered: 2-D motion, drag. Probes: distance without the 1/2, v = u + a*s."""
    a, t, u = round(rng.uniform(0.5, 6), 1), round(rng.uniform(2, 20), 1), round(rng.uniform(1, 15), 1)
    if difficulty == 1:
        return quantity_draft(f"A car starts from rest and accelerates at {a} m/s^2 for {t} s. How far does it "
                              f"travel?", 0.5 * a * t * t, "m", mistakes={"no_half": a * t * t})
    s = round(rng.uniform(10, 300), 0)
    if difficulty == 2:
        return quantity_draft(
            f"A cyclist moving at {u} m/s accelerates uniformly at {a} m/s^2 over {s} m. What "
            f"is the final speed?", math.sqrt(u * u + 2 * a * s), "m/s", mistakes={"linear": u + a * s})
    tt = (-u + math.sqrt(u * u + 2 * a * s)) / a
    return quantity_draft(f"A train moving at {u} m/s accelerates uniformly at {a} m/s^2. How long does it take "
                          f"to cover {s} m?", tt, "s", mistakes={"no_initial": math.sqrt(2 * s / a)})


register_domain(quantity_domain("science.kinematics-v1", _kinematics, _kinematics.__doc__))


def _projectile(rng: random.Random, difficulty: int) -> Draft:
    """Projectile motion without drag: range, maximum height, time of flight.

    Projectiles over level ground without drag: range (d1), maximum
    height (d2), time of flight when launched at an angle from the top of a cliff (d3). Not covered: air resistance. Probes: range with sin(theta) instead of sin(2 theta),
    height without the 1/2."""
    v, th = round(rng.uniform(5, 40), 1), rng.choice([15, 20, 30, 35, 40, 50, 60, 70])
    r = math.radians(th)
    if difficulty == 1:
        return quantity_draft(f"A ball is launched at {v} m/s at {th} degrees above level ground (g = 9.81 m/s^2, "
                              f"no air resistance). How far away does it land?", v * v * math.sin(2 * r) / G, "m",
                              mistakes={"sin_theta": v * v * math.sin(r) / G})
    if difficulty == 2:
        return quantity_draft(
            f"A stone is thrown at {v} m/s at {th} degrees above the horizontal (g = 9.81 m/s^2). "
            f"What maximum height above the launch point does it reach?", (v * math.sin(r)) ** 2 / (2 * G),
            "m", mistakes={"no_half": (v * math.sin(r)) ** 2 / G})
    h = round(rng.uniform(5, 80), 1)
    vy = v * math.sin(r)
    t = (vy + math.sqrt(vy * vy + 2 * G * h)) / G
    return quantity_draft(f"A ball is thrown from the top of a {h} m cliff at {v} m/s, {th} degrees above the "
                          f"horizontal (g = 9.81 m/s^2). How long until it hits the ground below?", t, "s",
                          mistakes={"level_ground": 2 * vy / G})


register_domain(quantity_domain("science.projectile-v1", _projectile, _projectile.__doc__))


def _newton(rng: random.Random, difficulty: int) -> Draft:
    """Newton's second law with friction and inclines.

    F = m a: force for an acceleration (d1), acceleration of a block pulled
    on a surface with kinetic friction mu (d2), acceleration down an incline with friction (d3).
    Not covered: static friction thresholds, pulleys. Probes: friction ignored."""
    m, a = round(rng.uniform(0.5, 50), 1), round(rng.uniform(0.2, 8), 2)
    mu = round(rng.uniform(0.05, 0.4), 2)
    if difficulty == 1:
        return quantity_draft(f"What net force accelerates a {m} kg mass at {a} m/s^2?", m * a, "N",
                              mistakes={"weight": m * G})
    if difficulty == 2:
        f = round(m * G * mu + rng.uniform(5, 100), 1)
        return quantity_draft(
            f"A {m} kg block is pulled horizontally with {f} N across a floor with kinetic "
            f"friction coefficient {mu} (g = 9.81 m/s^2). What is its acceleration?", (f - mu * m * G) / m,
            "m/s^2", mistakes={"no_friction": f / m})
    th = rng.choice([25, 30, 35, 40, 45, 50])
    mu = min(mu, 0.8 * math.tan(math.radians(th)))
    mu = round(mu, 2)
    acc = G * (math.sin(math.radians(th)) - mu * math.cos(math.radians(th)))
    return quantity_draft(f"A block slides down a {th} degree incline with kinetic friction coefficient {mu} "
                          f"(g = 9.81 m/s^2). What is its acceleration along the incline?", acc, "m/s^2",
                          mistakes={"no_friction": G * math.sin(math.radians(th))})


register_domain(quantity_domain("science.newton-v1", _newton, _newton.__doc__))


def _energy(rng: random.Random, difficulty: int) -> Draft:
    """Conservation of mechanical energy: kinetic energy, drop and ramp speeds.

    Mechanical energy: kinetic energy (d1), impact speed after a drop
    from height h (d2), speed at the bottom of a frictionless ramp with an initial speed (d3).
    Not covered: rotational energy. Probes: KE without 1/2, v = 2gh without the square root."""
    m, v, h = round(rng.uniform(0.2, 1500), 1), round(rng.uniform(1, 40), 1), round(rng.uniform(1, 100), 1)
    if difficulty == 1:
        return quantity_draft(f"What is the kinetic energy of a {m} kg object moving at {v} m/s?", 0.5 * m * v * v,
                              "J", mistakes={"no_half": m * v * v})
    if difficulty == 2:
        return quantity_draft(f"An object is dropped from rest from {h} m (g = 9.81 m/s^2, no air resistance). "
                              f"How fast is it moving when it hits the ground?", math.sqrt(2 * G * h), "m/s",
                              mistakes={"no_sqrt": 2 * G * h})
    return quantity_draft(f"A sled moving at {v} m/s slides down a frictionless hill of height {h} m "
                          f"(g = 9.81 m/s^2). What is its speed at the bottom?", math.sqrt(v * v + 2 * G * h), "m/s",
                          mistakes={"ignores_start": math.sqrt(2 * G * h)})


register_domain(quantity_domain("science.energy-v1", _energy, _energy.__doc__))


def _work_power(rng: random.Random, difficulty: int) -> Draft:
    """Work, power and energy use (joules, watts, kWh).

    Work and power: work of a force over a distance (d1), power to
    lift a mass through a height in a time (d2), energy used by an appliance in kWh (d3).
    Not covered: efficiency chains. Probes: power as work times time, mass not weighted by g."""
    f, d, t = round(rng.uniform(5, 500), 1), round(rng.uniform(1, 50), 1), round(rng.uniform(2, 60), 1)
    if difficulty == 1:
        return quantity_draft(f"A constant force of {f} N pushes a box {d} m along its direction. How much work "
                              f"is done?", f * d, "J", mistakes={"divided": f / d})
    m = round(rng.uniform(10, 500), 1)
    if difficulty == 2:
        return quantity_draft(f"A motor lifts {m} kg through {d} m at constant speed in {t} s (g = 9.81 m/s^2). "
                              f"What is its average power output?", m * G * d / t, "W",
                              mistakes={"no_g": m * d / t, "times": m * G * d * t})
    p, hours = rng.randint(40, 3000), round(rng.uniform(0.5, 30), 1)
    return quantity_draft(f"A {p} W heater runs for {hours} hours. How much energy does it use, in kWh?",
                          p * hours * 3600, "kWh", mistakes={"watt_hours_as_kwh": p * hours * 3600 * 1000})


register_domain(quantity_domain("science.work_power-v1", _work_power, _work_power.__doc__))


def _density(rng: random.Random, difficulty: int) -> Draft:
    """Density, mass and volume (rho = m / V), including flotation.

    Rho = m / V: density from mass and volume (d1, g/cm^3), mass of a
    volume of a material (d2), volume displaced by a floating object, water 1000 kg/m^3 (d3).
    Not covered: buoyancy forces. Probes: V / m instead of m / V."""
    m, vol = round(rng.uniform(5, 900), 1), round(rng.uniform(2, 400), 1)
    if difficulty == 1:
        return quantity_draft(f"A sample has mass {m} g and volume {vol} cm^3. What is its density?",
                              (m / 1000) / (vol * 1e-6), "g/cm^3", mistakes={"inverted": (vol / m) * 1000})
    rho = round(rng.uniform(500, 11000), 0)
    if difficulty == 2:
        return quantity_draft(f"A material has density {fmt(rho)} kg/m^3. What is the mass of {vol} L of it?",
                              rho * vol / 1000, "kg", mistakes={"no_litre_conversion": rho * vol})
    rho = round(rng.uniform(200, 950), 0)
    return quantity_draft(f"A {m} kg block of density {fmt(rho)} kg/m^3 floats in water (1000 kg/m^3). What "
                          f"volume of water does it displace?", m / 1000, "m^3", mistakes={"own_volume": m / rho})


register_domain(quantity_domain("science.density-v1", _density, _density.__doc__))


def _momentum(rng: random.Random, difficulty: int) -> Draft:
    """Momentum and 1-D collisions (inelastic and elastic).

    1-D collisions: momentum p = m v (d1), common speed after a
    perfectly inelastic collision (d2), final speed of the first body in an elastic collision
    (d3, signed: negative = it bounces back). Not covered: 2-D collisions. Probes: average of
    the speeds, the elastic/inelastic formula swapped."""
    m1, m2 = round(rng.uniform(0.5, 20), 1), round(rng.uniform(0.5, 20), 1)
    v1, v2 = round(rng.uniform(1, 15), 1), round(rng.uniform(-5, 5), 1)
    if difficulty == 1:
        return quantity_draft(f"What is the momentum of a {m1} kg ball moving at {v1} m/s?", m1 * v1, "kg*m/s",
                              mistakes={"ke": 0.5 * m1 * v1 * v1})
    vc = (m1 * v1 + m2 * v2) / (m1 + m2)
    if difficulty == 2:
        return quantity_draft(f"A {m1} kg cart moving at {v1} m/s hits a {m2} kg cart moving at {v2} m/s along the "
                              f"same line, and they stick together. What is their common velocity?", vc, "m/s",
                              mistakes={"average": (v1 + v2) / 2})
    v1f = ((m1 - m2) * v1 + 2 * m2 * v2) / (m1 + m2)
    if abs(v1f) < 0.2:  # near-zero targets make a relative tolerance meaningless: redraw
        return _momentum(rng, difficulty)
    return quantity_draft(
        f"A {m1} kg ball moving at {v1} m/s collides elastically head-on with a {m2} kg ball "
        f"moving at {v2} m/s (same line). What is the first ball's velocity afterwards (negative if it "
        f"reverses)?", v1f, "m/s", mistakes={"inelastic": vc})


register_domain(quantity_domain("science.momentum-v1", _momentum, _momentum.__doc__))
