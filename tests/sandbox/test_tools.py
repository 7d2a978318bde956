"""Tools on top of a real isolated sandbox: specs, validation, dispatch, refusals."""

import json

import pytest

from posttrain.sandbox import Limits, open_sandbox
from posttrain.tools import ToolResult, default_tools, validate


@pytest.fixture(scope="module")
def sb():
    with open_sandbox({"src/app.py": "def f():\n    return 1\n"}, backend="isolated",
                      limits=Limits(memory_bytes=128 << 20, store_bytes=64 << 20)) as s:
        yield s


@pytest.fixture(scope="module")
def tools():
    return default_tools(timeout=5)


def test_specs_are_openai_function_shape(tools):
    names = [s["function"]["name"] for s in tools.specs]
    assert names == ["shell", "python", "read_file", "write_file", "edit_file", "list_files"]
    for spec in tools.specs:
        assert spec["type"] == "function"
        params = spec["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
        json.dumps(spec)


def test_shell_and_python(sb, tools):
    r = tools.call(sb, "shell", {"command": "echo hi; exit 2"})
    assert isinstance(r, ToolResult) and not r.ok and "exit code: 2" in r.content and "hi" in r.content
    assert r.data["exit_code"] == 2
    r = tools.call(sb, "python", '{"code": "print(21 * 2)"}')
    assert r.ok and "42" in r.content
    r = tools.call(sb, "shell", {"command": "sleep 5", "timeout": 0.3})
    assert not r.ok and r.data["status"] == "timeout" and "[timeout" in r.content


def test_file_tools_roundtrip_and_edit(sb, tools):
    assert tools.call(sb, "write_file", {"path": "notes/a.txt", "content": "x = 1\ny = 1\n"}).ok
    r = tools.call(sb, "read_file", {"path": "notes/a.txt", "start_line": 2, "end_line": 2})
    assert r.content == "y = 1\n"
    bad = tools.call(sb, "edit_file", {"path": "notes/a.txt", "old": "= 1", "new": "= 2"})
    assert not bad.ok and bad.data["occurrences"] == 2
    ok = tools.call(sb, "edit_file", {"path": "notes/a.txt", "old": "y = 1", "new": "y = 3"})
    assert ok.ok and sb.read_file("notes/a.txt") == b"x = 1\ny = 3\n"
    listing = tools.call(sb, "list_files", {"path": ""}).content.splitlines()
    assert "notes/" in listing and "notes/a.txt" in listing and "src/app.py" in listing


def test_malformed_calls_never_raise(sb, tools):
    cases = [("nope", {}), ("shell", "{not json"), ("shell", {}), ("shell", {"command": 3}),
             ("shell", {"command": "x", "extra": 1}), ("read_file", {"path": "../../etc/shadow"}),
             ("read_file", {"path": "missing.txt"}), ("shell", {"command": "x", "timeout": True}),
             (None, None), ("list_files", [])]
    kinds = []
    for name, args in cases:
        r = tools.call(sb, name, args)
        assert isinstance(r, ToolResult) and not r.ok and r.content.startswith("Error")
        kinds.append(r.data["kind"])
    assert kinds[:3] == ["unknown_tool", "bad_json", "invalid_arguments"]
    assert kinds[5] == "refused"


def test_link_planted_by_policy_is_refused(sb, tools):
    tools.call(sb, "shell", {"command": "ln -sf /etc/passwd /work/pw"})
    r = tools.call(sb, "read_file", {"path": "pw"})
    assert not r.ok and r.data["kind"] == "refused"


def test_validate_rejects_bool_as_number():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert validate({"n": 1}, schema) == []
    assert validate({"n": True}, schema) and validate({}, schema) and validate([], schema)


def test_schema_validator_type_lists_and_item_counts_never_raise():
    from posttrain.tools.schema import validate

    assert validate(3, {"type": ["string", "integer"]}) == []
    assert validate(3.5, {"type": ["string", "integer"]})  # neither type
    assert validate(None, {"type": ["null", "string"]}) == []
    assert validate([], {"type": "array", "minItems": 1}) == ["arguments: fewer than 1 items"]
    assert validate([1, 2, 3], {"type": "array", "maxItems": 2})
    assert validate("", {"type": "string", "minLength": 1})
    assert validate({"a": 1}, "not a schema") == []  # malformed schema: reported nothing, no raise
