"""Conformance: both backends honour the Sandbox contract (DESIGN.md §3) the same way."""

import asyncio
import json

import pytest

from posttrain.sandbox import ExecResult, Sandbox, Template


def test_protocol_and_basic_exec(open_sb):
    sb = open_sb({"main.py": "import sys; print(sum(map(int, sys.stdin.read().split())))"})
    assert isinstance(sb, Sandbox)
    r = sb.exec("python3 main.py", stdin="1 2 3 4")
    assert (r.status, r.exit_code, r.stdout) == ("ok", 0, "10\n")
    assert r.wall_s > 0 and r.cpu_s >= 0 and r.peak_memory_bytes > 0
    d = r.to_dict()
    assert json.loads(json.dumps(d))["stdout"] == "10\n" and d["status"] == "ok"


def test_nonzero_exit_signal_and_stderr(open_sb):
    sb = open_sb()
    r = sb.exec("echo oops >&2; exit 7")
    assert (r.status, r.exit_code, r.stderr) == ("nonzero_exit", 7, "oops\n")
    r = sb.exec(["sh", "-c", "kill -SEGV $$"])
    assert r.status == "nonzero_exit" and r.signal == 11 and r.exit_code is None
    assert sb.exec(["definitely-not-a-command"]).exit_code == 127


def test_env_is_cleared_and_extended(open_sb, monkeypatch):
    monkeypatch.setenv("HARNESS_ONLY", "x")
    sb = open_sb()
    out = sb.exec("env", env={"MINE": "1"}).stdout
    assert "MINE=1" in out and "HARNESS_ONLY" not in out and "PATH=" in out


def test_cwd_and_files(open_sb):
    sb = open_sb({"a/b.txt": "hello"})
    assert sb.read_file("a/b.txt") == b"hello"
    sb.write_file("a/c.txt", "from harness")
    assert sb.exec("cat c.txt", cwd="a").stdout == "from harness"
    names = {f.path: f.kind for f in sb.list_files()}
    assert names == {"a": "dir", "a/b.txt": "file", "a/c.txt": "file"}
    with pytest.raises(PermissionError):
        sb.read_file("../etc/passwd")
    sb.remove_file("a/b.txt")
    assert sb.exec("ls a").stdout == "c.txt\n"


def test_timeouts_each_report_their_stage(open_sb):
    sb = open_sb()
    r = sb.exec("sleep 30", timeout=0.5)
    assert r.status == "timeout" and "wall" in r.reason and r.wall_s < 5
    r = sb.exec("echo start; sleep 30", idle_timeout=0.4, timeout=20)
    assert r.status == "timeout" and "idle" in r.reason and r.stdout == "start\n"
    r = sb.exec("while :; do :; done", cpu_time=0.5, timeout=20)
    assert r.status == "cpu_limit"


def test_output_cap_truncates_and_flags(open_sb):
    sb = open_sb()
    r = sb.exec("head -c 100000 /dev/zero | tr '\\0' x; echo done >&2")
    assert r.status == "output_limit" and r.stdout_truncated and len(r.stdout_bytes) == 32 << 10
    small = sb.exec("printf abc")
    assert not small.stdout_truncated and small.stdout == "abc"


def test_snapshot_restore_diff(open_sb):
    sb = open_sb({"keep.txt": "k", "edit.txt": "v1", "gone/x.txt": "x", "gone/y.txt": "y"})
    s0 = sb.snapshot()
    r = sb.exec("echo v2 > edit.txt; rm -r gone; echo new > added.txt; mkdir d; echo z > d/z")
    assert r.ok, r.stderr
    changes = {c.path: c for c in sb.diff(since=s0)}
    assert {p: c.kind for p, c in changes.items()} == {
        "edit.txt": "changed", "gone/x.txt": "deleted", "gone/y.txt": "deleted",
        "added.txt": "added", "d/z": "added"}
    assert changes["added.txt"].content == "new\n" and changes["added.txt"].size == 4
    assert changes["edit.txt"].old_sha256 != changes["edit.txt"].sha256
    s1 = sb.snapshot()
    sb.exec("echo v3 > edit.txt")
    sb.restore(s0)
    assert sorted(f.path for f in sb.list_files()) == ["edit.txt", "gone", "gone/x.txt", "gone/y.txt", "keep.txt"]
    assert sb.read_file("edit.txt") == b"v1"
    sb.restore(s1)
    assert sb.read_file("edit.txt") == b"v2\n" and sb.diff(since=s1) == []


def test_run_python_snippet(open_sb):
    sb = open_sb()
    r = sb.run_python("import sys\nprint(sys.stdin.read().upper())\nraise SystemExit(3)", stdin="hi")
    assert (r.status, r.exit_code, r.stdout) == ("nonzero_exit", 3, "HI\n")
    r = sb.run_python("1/0")
    assert r.exit_code == 1 and "ZeroDivisionError" in r.stderr
    assert sb.run_python("print(__name__)").stdout == "__main__\n"


def test_async_twins(open_sb):
    sb = open_sb()

    async def main():
        await sb.awrite_file("f.txt", "async")
        r = await sb.aexec("cat f.txt")
        return r

    r = asyncio.run(main())
    assert isinstance(r, ExecResult) and r.stdout == "async"


def test_template_of_base_dir(open_sb, tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 5\n")
    sb = open_sb(Template.of({"run.py": "from pkg.mod import X; print(X)"}, base_dir=str(tmp_path)))
    assert sb.exec("python3 run.py").stdout == "5\n"
    sb.exec("echo 'X = 6' > pkg/mod.py")
    assert (tmp_path / "pkg" / "mod.py").read_text() == "X = 5\n"  # the base is never written
