"""The tool-call parser and every tool's arguments, fuzzed.

Properties:
- ``parse_turn`` is total and bounded on any text (hypothesis, plus 10 MB turns, 100k-deep
  JSON, thousands of blocks): it returns a ParsedTurn, never more than ``max_calls`` calls,
  and every call it marks valid satisfies its tool's schema;
- ``validate`` (the one argument validator) never raises on any JSON value against any
  offered tool's schema, and never admits NaN/inf as a number (a NaN passed every bound:
  ``{"timeout": NaN}`` ran a shell command with no wall-clock limit — found here);
- every built-in tool (shell, python, read/write/edit/list files) in a real sandbox, called
  through ``ToolSet.call`` with hostile arguments (wrong types, NaN/inf, huge, nested,
  surrogates, NUL bytes, path escapes, unknown keys), returns a ToolResult within its time
  bound, never an exception;
- every multi-turn domain's own tools, given the same hostile calls as the policy's turns
  through the episode engine, end the episode with a Score or a recorded failure.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_inputs import HUGE, actions_for, hostile_text, nested_json, play, tool_call, tool_call_texts
from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.envs.factory import make_env
from posttrain.tools import ShellTool, default_tools, validate
from posttrain.tools.calls import MAX_CALLS, parse_turn, spec_name, spec_parameters

load_builtin_domains()
TOOLS = default_tools(timeout=5.0)
MULTI_TURN = sorted(d for d in DOMAINS.ids() if callable(getattr(DOMAINS.get(d), "make_env", None)))


def _offered(did: str) -> list[dict]:
    dom = DOMAINS.get(did)
    task = sample_task(dom, 0, tuple(dom.difficulties)[0])
    env = make_env(dom, task)
    try:
        return list(env.reset().tools)
    finally:
        getattr(env, "close", lambda: None)()


def _all_specs() -> list[dict]:
    specs = {spec_name(s): s for s in TOOLS.specs}
    for did in MULTI_TURN[::3]:
        for s in _offered(did):
            specs.setdefault(f"{did}:{spec_name(s)}", s)
    return list(specs.values())


SPECS = _all_specs()


def _check_parsed(text: str, specs=SPECS) -> None:
    parsed = parse_turn(text, specs)
    assert len(parsed.calls) <= MAX_CALLS
    assert not (parsed.format_ok and parsed.errors)
    by_name = {spec_name(s): s for s in specs}
    for call in parsed.calls:
        if call.valid:
            assert validate(dict(call.arguments), dict(spec_parameters(by_name[call.name]))) == []


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(text=st.one_of(hostile_text(), st.lists(hostile_text(), max_size=12).map("".join)))
def test_parse_turn_is_total(text):
    _check_parsed(text)


@pytest.mark.parametrize("name, text", [
    ("ten_mb", "x" * HUGE),
    ("ten_mb_of_open_tags", "<tool_call>" * (HUGE // 11)),
    ("many_blocks", tool_call("shell", {"command": "ls"}) * 5000),
    ("deep_arguments", tool_call("shell", nested_json(100_000, kind="object"))),
    ("deep_list_arguments", tool_call("shell", nested_json(100_000))),
    ("huge_int", tool_call("read_file", '{"path": "a", "start_line": ' + "9" * 5000 + "}")),
    ("nan", tool_call("shell", '{"command": "ls", "timeout": NaN}')),
    ("answers", "<answer>" * 100_000 + "</answer>" * 100_000),
])
def test_parse_turn_bounded_on_pathological_turns(name, text):
    t0 = time.perf_counter()
    _check_parsed(text)
    assert time.perf_counter() - t0 < 5.0, name


def test_nan_and_infinity_are_not_json_numbers():
    for raw in ("NaN", "Infinity", "-Infinity"):
        parsed = parse_turn(tool_call("shell", f'{{"command": "ls", "timeout": {raw}}}'), TOOLS.specs)
        assert not parsed.calls and parsed.errors, raw
        schema = dict(spec_parameters(TOOLS.tools["shell"].spec))
        assert validate({"command": "ls", "timeout": json.loads(raw)}, schema), raw


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=10), kids, max_size=5)),
    max_leaves=25)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(value=_JSON, index=st.integers(min_value=0))
def test_validate_never_raises_for_any_offered_tool(value, index):
    spec = SPECS[index % len(SPECS)]
    schema = dict(spec_parameters(spec))
    problems = validate(value, schema)
    assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
    if isinstance(value, dict) and not problems:
        assert not any(isinstance(v, float) and v != v for v in value.values())


def _hostile_builtin_calls() -> list[tuple[str, str, object]]:
    out = []
    for label, text in tool_call_texts(TOOLS.specs).items():
        parsed = parse_turn(text, TOOLS.specs)
        body = text[len("<tool_call>"):-len("</tool_call>")]
        try:
            obj = json.loads(body)
        except (ValueError, RecursionError):
            obj = None
        args = parsed.calls[0].arguments if parsed.calls else (obj or {}).get("arguments") \
            if isinstance(obj, dict) else body
        name = parsed.calls[0].name if parsed.calls else (obj.get("name") if isinstance(obj, dict) else "shell")
        out.append((label, name, args))
    out += [("surrogate_content", "write_file", {"path": "s.txt", "content": "\udcff\ud800"}),
            ("surrogate_command", "shell", {"command": "echo \udcff"}),
            ("surrogate_code", "python", {"code": "print('\udcff')"}),
            ("nan_timeout_direct", "shell", {"command": "sleep 30", "timeout": float("nan")}),
            ("huge_line_numbers", "read_file", {"path": "s.txt", "start_line": 10 ** 400, "end_line": -1}),
            ("nul_path", "write_file", {"path": "a\x00b", "content": "x"}),
            ("link_escape", "read_file", {"path": "/proc/self/environ"}),
            ("raw_json_text", "shell", '{"command": "echo hi", "timeout": NaN}'),
            ("bytes_args", "shell", b"\xff\xfe"),
            ("big_write", "write_file", {"path": "big.txt", "content": "x" * HUGE}),
            ("edit_huge_old", "edit_file", {"path": "big.txt", "old": "x" * 100_000, "new": "", "replace_all": True})]
    return out


def test_every_builtin_tool_survives_hostile_arguments_in_a_real_sandbox():
    from posttrain.sandbox import open_sandbox

    escapes = []
    with open_sandbox() as sb:
        for label, name, args in _hostile_builtin_calls():
            t0 = time.perf_counter()
            try:
                res = TOOLS.call(sb, name, args)
            except Exception as exc:  # noqa: BLE001 - the finding
                escapes.append(f"{label}: raised {type(exc).__name__}: {exc}")
                continue
            wall = time.perf_counter() - t0
            if not isinstance(res.content, str) or wall > 5.0 + 5.0:  # tool timeout + slack
                escapes.append(f"{label}: {wall:.1f} s, {res.content[:80]!r}")
        # a caller that skips the schema: the shell tool clamps a NaN timeout to its own
        t0 = time.perf_counter()
        res = ShellTool(timeout=1.0)(sb, command="sleep 30", timeout=float("nan"))
        assert res.data.get("status") == "timeout" and time.perf_counter() - t0 < 10
        assert sb.exec("true").status == "ok"  # the sandbox is still usable
    assert not escapes, escapes


def _domain_escapes(did: str, every: int = 1) -> list[str]:
    dom = DOMAINS.get(did)
    task = sample_task(dom, 0, tuple(dom.difficulties)[0])
    sandboxed = dom.env_kind == "sandbox"
    out = []
    for label, text in list(tool_call_texts(_offered(did)).items())[::every]:
        o = play(dom, task, [text, text, "<answer>0</answer>"], bound_s=30.0 if sandboxed else 5.0)
        if o.escaped:
            out.append(f"{did} {label}: {o.kind} {o.detail}")
    return out


TOOL_SAMPLE = [d for d in MULTI_TURN if d.startswith("tools.")][:6]
SANDBOX_SAMPLE = [d for d in MULTI_TURN if d.startswith(("terminal.", "long_horizon."))][:1]


@pytest.mark.parametrize("did", TOOL_SAMPLE)
def test_tool_domains_survive_hostile_calls(did):
    assert _domain_escapes(did) == []


@pytest.mark.parametrize("did", SANDBOX_SAMPLE)
def test_a_sandboxed_domain_survives_hostile_calls(did):
    assert _domain_escapes(did, every=7) == []


@pytest.mark.slow
@pytest.mark.parametrize("did", MULTI_TURN)
def test_every_multi_turn_domain_survives_every_hostile_call(did):
    assert _domain_escapes(did) == []


def test_actions_for_plays_multi_turn_texts_as_turns():
    dom = DOMAINS.get(MULTI_TURN[0])
    assert actions_for(dom, "x") == ["x", "<answer>x</answer>"]
