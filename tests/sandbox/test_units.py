"""Pure units: test-report parsing, policy parsing, safefs, layer bookkeeping, results."""

import os

import pytest

from posttrain.core.errors import ConfigError, SandboxError
from posttrain.sandbox import ExecResult, Limits, NetworkPolicy, Timeouts, parse_report
from posttrain.sandbox import parse_junit, parse_lines, parse_tap, safefs
from posttrain.sandbox.snapshots import LayerStack

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="test_m" name="test_a" time="0.1"/>
<testcase classname="test_m" name="test_b"><failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="test_m" name="test_c"><error message="boom"/></testcase>
<testcase classname="test_m" name="test_d"><skipped message="no"/></testcase>
</testsuite></testsuites>"""


def test_junit_counts_pass_fail_error_skip():
    r = parse_junit(JUNIT)
    assert (r.passed, r.total, r.skipped) == (1, 3, 1)
    assert [c.outcome for c in r.cases] == ["passed", "failed", "error", "skipped"]
    assert r.cases[1].name == "test_m::test_b" and "assert" in r.cases[1].message
    assert parse_report(JUNIT).passed == 1


def test_junit_rejects_garbage_and_entities():
    assert parse_junit("<not xml").error and parse_junit("<not xml").total == 0
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite/>'
    assert parse_junit(bomb).error


def test_tap_plan_counts_missing_as_failed():
    r = parse_tap("1..4\nok 1 - adds\nnot ok 2 - subtracts\nok 3 # SKIP no float\n")
    assert (r.passed, r.total, r.skipped, r.missing) == (1, 3, 1, 1)
    assert parse_report("TAP version 13\n1..1\nok 1\n").passed == 1


def test_line_format():
    r = parse_lines("PASS: one\nFAIL: two\nnoise\nok three\n")
    assert (r.passed, r.total) == (2, 3)
    assert parse_report("hello world").error and parse_report("hello").total == 0


def test_policy_parsing_names_bad_fields():
    assert Limits.from_mapping({"memory_bytes": 1 << 20}).memory_bytes == 1 << 20
    with pytest.raises(ConfigError, match="memory_byte"):
        Limits.from_mapping({"memory_byte": 1})
    with pytest.raises(ConfigError, match="wall_s"):
        Timeouts.from_mapping({"wall_s": -1})
    with pytest.raises(ConfigError, match="mode"):
        NetworkPolicy(mode="everything")
    assert hash(Limits()) == hash(Limits())


def test_exec_result_rejects_unknown_status():
    with pytest.raises(ValueError):
        ExecResult("fine")


def test_safefs_refuses_traversal_and_links(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    os.symlink("/etc", tmp_path / "l")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert safefs.read_file(fd, "d/f", 10) == (b"x", False)
        assert safefs.read_file(fd, "d/f", 0) == (b"", True)
        for bad in ("../x", "l/passwd", "/etc/passwd", "d/../../x", "a\x00b"):
            with pytest.raises(PermissionError):
                safefs.read_file(fd, bad, 10)
        safefs.write_file(fd, "l", b"replaced")
        assert not os.path.islink(tmp_path / "l") and (tmp_path / "l").read_bytes() == b"replaced"
    finally:
        os.close(fd)


def test_layer_stack_restore_drops_unreferenced_layers():
    ls = LayerStack()
    s1, req1 = ls.snapshot()
    assert req1["lowers"] == ["1", "base"] and req1["upper"] == "2"
    s2, _ = ls.snapshot()
    req = ls.restore(s1)
    # layer 2 is frozen in s2 and must survive; layer 3 (the upper after s2) is dropped
    assert req["lowers"] == ["1", "base"] and req["drop"] == ["3"] and req["upper"] == "4"
    req = ls.restore(s2)
    assert req["lowers"] == ["2", "1", "base"] and req["drop"] == ["4"]
    with pytest.raises(SandboxError):
        ls.restore("nope")


def test_process_backend_warns_once_for_untrusted_code(monkeypatch):
    import warnings

    from posttrain.sandbox import SandboxWarning, factory

    monkeypatch.delenv("POSTTRAIN_SANDBOX_QUIET", raising=False)
    monkeypatch.setattr(factory, "_warned", __import__("threading").Event())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            sb = factory.make_sandbox("process", untrusted=True)
            assert sb.is_security_boundary is False
            sb.close()
    assert [w.category for w in caught] == [SandboxWarning]


def test_unknown_backend_is_a_config_error():
    from posttrain.sandbox import make_sandbox

    with pytest.raises(ConfigError, match="backend"):
        make_sandbox("docker")
