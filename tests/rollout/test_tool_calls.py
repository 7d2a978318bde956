"""The strict tool-call format: what parses, what is malformed, and schema validation."""

from posttrain.tools.calls import format_call, parse_turn, validate_arguments

SHELL = {"type": "function", "function": {"name": "shell", "description": "run", "parameters": {
    "type": "object", "properties": {"cmd": {"type": "string"}, "timeout": {"type": "integer", "minimum": 1}},
    "required": ["cmd"], "additionalProperties": False}}}


def test_clean_calls_and_answer():
    p = parse_turn("thinking\n" + format_call("shell", {"cmd": "ls"}) + "\n" + format_call("shell", {"cmd": "pwd"}), [SHELL])
    assert [c.arguments["cmd"] for c in p.calls] == ["ls", "pwd"]
    assert p.format_ok and not p.is_final and p.invalid_calls == 0
    a = parse_turn("so <answer> 42 </answer>", [SHELL])
    assert a.is_final and a.format_ok and a.final_answer() == "42"
    plain = parse_turn("just text", [SHELL])
    assert plain.is_final and not plain.format_ok and plain.final_answer() == "just text"


def test_malformed_blocks_are_counted_not_raised():
    cases = {
        '<tool_call>{"name": "shell", "arguments": {"cmd": "ls"}': "unclosed",
        "<tool_call>{'name': 'shell'}</tool_call>": "invalid JSON",
        '<tool_call>{"name": "shell", "args": {}}</tool_call>': "exactly the keys",
        '<tool_call>["shell"]</tool_call>': "JSON object",
        format_call("shell", {"cmd": "ls"}) + " and more": "text after",
        format_call("shell", {"cmd": "ls"}) + "<answer>1</answer>": "text after",
        '{"name": "shell"}</tool_call>': "without an opening",
    }
    for text, needle in cases.items():
        p = parse_turn(text, [SHELL])
        assert not p.is_final and not p.format_ok, text
        assert any(needle in e for e in p.errors), (text, p.errors)


def test_unknown_tool_and_schema_violations_are_invalid_calls():
    p = parse_turn(format_call("rm", {"x": 1}) + format_call("shell", {"cmd": 3}) +
                   format_call("shell", {"cmd": "ls", "extra": 1}) + format_call("shell", {"cmd": "ls", "timeout": 0}), [SHELL])
    assert p.format_ok and p.invalid_calls == 4
    assert "unknown tool" in p.calls[0].error and "expected string" in p.calls[1].error
    assert "extra" in p.calls[2].error and "minimum" in p.calls[3].error


def test_call_cap_per_turn():
    p = parse_turn("".join(format_call("shell", {"cmd": str(i)}) for i in range(12)), [SHELL], max_calls=8)
    assert len(p.calls) == 8 and any("12 calls" in e for e in p.errors)


def test_validate_arguments_types():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "xs": {"type": "array", "items": {"type": "number"}},
                                               "u": {"type": "string", "enum": ["a", "b"]}}, "required": ["n"]}
    assert validate_arguments(schema, {"n": 1, "xs": [1, 2.5], "u": "a"}) == []
    assert validate_arguments(schema, {"n": True})  # bool is not an integer
    assert validate_arguments(schema, {"n": 1, "xs": [1, "x"]})
    assert validate_arguments(schema, {"n": 1, "u": "c"})
    assert validate_arguments(schema, {"xs": []})
