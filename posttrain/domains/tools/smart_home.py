"""Smart-home control with state: ``tools.smart_home-v1``.

Trains: a "leaving home" routine over a hidden device registry: ``list_devices(room)`` per
room named, then ``set_power(device_id, on)`` for every switchable device that is on (lights,
TVs, speakers; fridges stay on) and ``set_temperature(device_id, celsius)`` for every
thermostat — clamped to that thermostat's own allowed range, which only ``list_devices``
reveals (the API rejects values outside it). Devices already off must not be touched.

Difficulty: rooms 1 / 2 / 3.

Reward: validity² × (0.3·calls + 0.7·state·precision²·[all calls made]); ``state_ok`` compares
every device's power and set point after the episode with the expected ones.

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``unclamped`` (every thermostat set
to the requested value without reading its range, nothing switched off).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, chunk, Plan, S, tool, turns

ROOMS = ["kitchen", "living room", "bedroom", "office", "hall", "garage"]
KINDS = ["light", "light", "tv", "speaker", "fridge", "thermostat"]


def _dev(st, device_id):
    if device_id not in st["devices"]:
        raise ValueError(f"unknown device {device_id!r}")
    return st["devices"][device_id]


def _list(st, room):
    if room not in ROOMS:
        raise ValueError(f"unknown room {room!r}")
    return [{"device_id": k, **{f: v for f, v in d.items() if f != "room"}}
            for k, d in sorted(st["devices"].items()) if d["room"] == room]


def _power(st, device_id, on):
    d = _dev(st, device_id)
    if d["kind"] == "thermostat":
        raise ValueError("thermostats have no power switch; use set_temperature")
    d["power"] = on
    return {"device_id": device_id, "power": on}


def _temp(st, device_id, celsius):
    d = _dev(st, device_id)
    if d["kind"] != "thermostat":
        raise ValueError(f"{device_id} is not a thermostat")
    if not d["min"] <= celsius <= d["max"]:
        raise ValueError(f"{celsius} outside this thermostat's range {d['min']}-{d['max']}")
    d["target"] = celsius
    return {"device_id": device_id, "target": celsius}


ID = "tools.smart_home-v1"


def _tools(st: dict[str, Any]):
    return [tool("list_devices", "Devices in a room with their state.", {"room": S}, _list, st),
            tool("set_power", "Switch a device on or off.", {"device_id": S, "on": {"type": "boolean"}}, _power, st),
            tool("set_temperature", "Set a thermostat's target (°C, integer).",
                 {"device_id": S, "celsius": {"type": "integer"}}, _temp, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    rooms = rng.sample(ROOMS, 4)
    devices: dict[str, dict[str, Any]] = {}
    for room in rooms:
        for kind in rng.sample(KINDS, rng.randint(3, 4)):
            d: dict[str, Any] = {"room": room, "kind": kind}
            if kind == "thermostat":
                lo = rng.randint(10, 18)
                d.update(target=rng.randint(19, 24), min=lo, max=lo + rng.randint(8, 14))
            else:
                d["power"] = kind == "fridge" or rng.random() < 0.7
            devices[f"{kind[:2]}-{rng.randint(100, 999)}{len(devices)}"] = d
    chosen = rooms[:difficulty]
    want = rng.randint(12, 17)
    work = []
    for k, d in sorted(devices.items()):
        if d["room"] not in chosen:
            continue
        if d["kind"] == "thermostat":
            work.append(("set_temperature", {"device_id": k, "celsius": min(max(want, d["min"]), d["max"])}))
        elif d["kind"] != "fridge" and d["power"]:
            work.append(("set_power", {"device_id": k, "on": False}))
    if not work:
        return _plan(rng, difficulty)
    prompt = (f"I am leaving home. In the {', '.join(chosen)}: switch off every device that is on except "
              f"fridges, and set every thermostat to {want} °C (or the closest value its range allows). "
              "Leave devices that are already off alone. Reply ok when finished.")
    turns = [[("list_devices", {"room": r}) for r in chosen]] + chunk(work)
    return Plan(prompt, {"devices": devices}, turns, "ok", public={"rooms": chosen}, extra={"want": want})


def _extra_probes(task):
    want = task.hidden["want"]
    ts = [(n, {**a, "celsius": want}) for n, a in turns(task)[-1] if n == "set_temperature"]
    ts = [c for c in ts if c not in [(x["name"], x["arguments"]) for x in task.hidden["calls"]]]
    return {"unclamped": [format_calls(*ts), format_answer("ok")]} if ts else {}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, result="state"))
