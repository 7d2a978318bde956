"""The f_* tools domains: references at every level, wrong episodes, partial credit, safety.

Conformance (probes at the floor) is run for every registered domain by
``tests/domains/test_all_domains_conform.py``; this file checks the reward semantics each
module's docstring claims.
"""

import pytest

from posttrain.domains import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.rollout import replay_score as run_episode
from posttrain.domains.tools._kit import turns
from posttrain.envs.tool_env import format_answer, format_calls

load_builtin_domains()
NEW = ["calendar_booking", "cart_checkout", "flight_booking", "forecast_aggregate", "fs_organize",
       "table_ops", "inbox_triage", "smart_home", "ticket_workflow", "recipe_nutrition", "route_finder",
       "fx_cross", "health_sweep", "guarded_actions", "error_recovery", "paginated_report"]
ANSWERED = {"forecast_aggregate", "recipe_nutrition", "route_finder", "fx_cross", "health_sweep",
            "error_recovery", "paginated_report"}


def _dom(name):
    return get_domain(f"tools.{name}")


def _flat(dom, task):
    return [c for t in turns(task) for c in t]


def _play(dom, task, calls, answer):
    turns = [format_calls(*calls[i:i + 8]) for i in range(0, len(calls), 8)]
    return run_episode(dom, task, turns + [format_answer(answer)])


def test_family_reaches_twenty():
    assert len([d for d in DOMAINS.ids() if d.startswith("tools.")]) >= 20
    assert all(f"tools.{n}-v1" in DOMAINS.ids() for n in NEW)


@pytest.mark.parametrize("name", NEW)
def test_reference_every_level_and_a_wrong_episode(name):
    dom = _dom(name)
    for d in dom.difficulties:
        task = sample_task(dom, 3, d)
        ref = run_episode(dom, task, dom.reference_actions(task))
        assert ref.value == pytest.approx(1.0), (d, ref.reason)
        assert ref.verifier_version == dom.id
    task = sample_task(dom, 3, 2)
    if name in ANSWERED:  # every call right, the answer wrong: the calls part only
        s = _play(dom, task, _flat(dom, task), "no idea")
        assert s.value == pytest.approx(0.3), s.reason
    else:  # the last write missing: the state is wrong, the calls earn partial credit
        s = _play(dom, task, _flat(dom, task)[:-1], task.hidden["answer_value"])
        assert 0.05 < s.value < 0.5, s.reason


def test_calendar_reads_earn_calls_part_only_and_conflicts_are_refused():
    dom = _dom("calendar_booking")
    task = sample_task(dom, 1, 2)
    reads, create = turns(task)
    s = _play(dom, task, reads, task.hidden["answer_value"])
    assert s.value == pytest.approx(0.3 * len(reads) / (len(reads) + 1))
    env = dom.make_env(task)
    args = dict(create[0][1], start="09:00", end="17:00")  # the whole day: always a conflict
    res = {t.name: t for t in env.tools.values()}["create_event"](None, **args)
    assert not res.ok and "conflict" in res.content


def test_cart_worse_coupon_loses_the_result():
    dom = _dom("cart_checkout")
    task = next(t for t in (sample_task(dom, s, 3) for s in range(20))
                if any(c["name"] == "apply_coupon" for c in t.hidden["calls"]))
    used = next(c["arguments"]["code"] for c in task.hidden["calls"] if c["name"] == "apply_coupon")
    other = next(c for c in task.hidden["world"]["coupons"] if c != used)
    calls = [(n, {"code": other} if n == "apply_coupon" else a) for n, a in _flat(dom, task)]
    s = _play(dom, task, calls, task.hidden["answer_value"])
    assert s.components["state_ok"][0] == 0.0 and s.value < 0.35


def test_guarded_unsafe_call_zeroes_everything():
    dom = _dom("guarded_actions")
    task = sample_task(dom, 0, 3)
    probes = dom.probes(task)
    s = run_episode(dom, task, probes["execute_everything"])
    assert s.value == 0.0 and s.components["safe"][0] == 0.0
    # the safe calls with one answer line wrong keep partial credit
    lines = task.hidden["answer_value"].splitlines()
    lines[0] = lines[0].split(":")[0] + ": refuse" if "done" in lines[0] else lines[0].split(":")[0] + ": done"
    s2 = _play(dom, task, _flat(dom, task), "\n".join(lines))
    assert s2.components["safe"][0] == 1.0 and 0.5 < s2.value < 1.0


def test_error_recovery_needs_the_retry():
    dom = _dom("error_recovery")
    task = sample_task(dom, 2, 2)
    first = turns(task)[0]
    s = _play(dom, task, first, task.hidden["answer_value"])
    n = len(task.hidden["calls"])
    assert s.value == pytest.approx(0.3 * len(first) / n)  # no retry: never the answer part
    env = dom.make_env(task)
    tool = env.tools["get_price"]
    renamed = task.hidden["renamed_from"]
    assert "renamed to" in tool(None, code=renamed).content


def test_health_sweep_split_turns_halve_the_answer():
    dom = _dom("health_sweep")
    task = sample_task(dom, 1, 2)
    calls = _flat(dom, task)
    turns = [format_calls(*calls[:1]), format_calls(*calls[1:]), format_answer(task.hidden["answer_value"])]
    s = run_episode(dom, task, turns)
    assert s.value == pytest.approx(0.3 + 0.7 * 0.5) and s.components["parallel"][0] == 0.0
    shuffled = _play(dom, task, calls[::-1], ", ".join(reversed(task.hidden["answer_value"].split(", "))))
    assert shuffled.value == pytest.approx(1.0)  # order-free: calls and answer as sets


def test_ticket_forbidden_jump_is_refused_and_changes_nothing():
    dom = _dom("ticket_workflow")
    task = sample_task(dom, 0, 1)
    key, target, _ = task.hidden["jobs"][0]
    env = dom.make_env(task)
    before = env.state["issues"][key]["status"]
    res = env.tools["transition"](None, key=key, status=target)
    assert not res.ok and env.state["issues"][key]["status"] == before


def test_route_wrong_route_and_exploration_credit():
    dom = _dom("route_finder")
    task = sample_task(dom, 0, 2)
    path, mins = task.hidden["path"], task.hidden["minutes"]
    calls = _flat(dom, task)
    wrong = _play(dom, task, calls, f"{path[0]} > {path[-1]}; {mins}")
    assert wrong.components["route_ok"][0] == 0.0 and wrong.value == pytest.approx(0.3 + 0.7 * 0.5)
    only_path = _play(dom, task, [("get_roads", {"place": p}) for p in path[:-1]], task.hidden["answer_value"])
    assert only_path.value == pytest.approx(1.0)  # any exploration that holds the evidence is fine


def test_smart_home_unclamped_temperature_is_rejected():
    dom = _dom("smart_home")
    task = sample_task(dom, 4, 3)
    p = dom.probes(task)
    if "unclamped" in p:
        assert run_episode(dom, task, p["unclamped"]).value <= 0.05
    flat = _flat(dom, task)
    s = _play(dom, task, flat + flat[-1:], "done")  # a redundant call costs precision²
    assert 0.5 < s.value < 1.0


def test_pagination_order_and_fx_direct_quote():
    dom = _dom("paginated_report")
    task = sample_task(dom, 0, 3)
    calls = _flat(dom, task)
    s = _play(dom, task, calls[:-1], task.hidden["answer_value"])
    assert s.value < 0.3
    fx = _dom("fx_cross")
    t = sample_task(fx, 0, 2)
    env = fx.make_env(t)
    base = t.hidden["calls"][0]["arguments"]["base"]
    res = env.tools["get_rate"](None, base=base, quote=t.hidden["target"])
    assert not res.ok and "cross through EUR" in res.content


def test_values_stay_hidden():
    for name in NEW:
        dom = _dom(name)
        task = sample_task(dom, 7, 3)
        shown = str(task.public_view())
        assert "world" not in shown and "final" not in task.public_view()


def test_forecast_city_answer_needs_the_value():
    dom = _dom("forecast_aggregate")
    task = sample_task(dom, 0, 2)
    city, _, value = task.hidden["answer_value"].rpartition(" ")
    calls = _flat(dom, task)
    assert _play(dom, task, calls, f"{city.upper()} {float(value) + 0.01:.2f}").value == pytest.approx(1.0)
    assert _play(dom, task, calls, city).value == pytest.approx(0.3)  # the name alone is in the prompt
