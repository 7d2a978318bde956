"""treewalk/treediff on real host trees: complete, link-safe, and within their fd budget."""

import os

import pytest

from posttrain.sandbox.treediff import diff_trees
from posttrain.sandbox.treewalk import Budget, TreeLimitExceeded, TreeLimits, walk


def _comb(root, depth):
    """Each level: a deep branch 'a', a sibling dir 'b' with a file, a file 'f'.
    Worst case for the fd window: every level still has a pending sibling."""
    cur = root
    for i in range(depth):
        os.mkdir(cur / "a")
        os.mkdir(cur / "b")
        (cur / "b" / "x").write_text(str(i))
        (cur / "f").write_text("f")
        cur = cur / "a"


def _expected(root):
    out = set()
    for here, dirs, files in os.walk(root):
        rel = os.path.relpath(here, root)
        for name in dirs + files:
            out.add(name if rel == "." else f"{rel}/{name}")
    return out


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("fd_budget", [8, 256])
def test_walk_is_complete_within_its_fd_budget(tmp_path, fd_budget):
    _comb(tmp_path, 120)
    os.symlink("/etc", tmp_path / "a" / "etc-link")
    before = _open_fds()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = walk(fd, budget=Budget(TreeLimits(fd_budget=fd_budget)))
    finally:
        os.close(fd)
    assert {rel for rel, _ in found} == _expected(tmp_path)
    assert "a/etc-link/passwd" not in {rel for rel, _ in found}  # never followed
    assert _open_fds() == before


def test_walk_entry_limit_raises(tmp_path):
    for i in range(50):
        (tmp_path / f"f{i}").write_text("")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(TreeLimitExceeded) as err:
            walk(fd, budget=Budget(TreeLimits(max_entries=49)))
    finally:
        os.close(fd)
    assert err.value.status == "entry_limit"


def test_diff_trees_reports_every_change_in_a_deep_comb(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for t in (old, new):
        t.mkdir()
        _comb(t, 60)
    deep = "/".join(["a"] * 59)
    (new / deep / "b" / "x").write_text("changed")
    (new / deep / "added").write_text("new")
    os.unlink(new / "a" / "f")
    os.symlink("target", new / "a" / "b" / "x2")
    fo, fn = (os.open(t, os.O_RDONLY | os.O_DIRECTORY) for t in (old, new))
    try:
        changes = diff_trees(fo, fn, limits=TreeLimits(fd_budget=8))
    finally:
        os.close(fo)
        os.close(fn)
    assert [(c.path, c.kind) for c in changes] == sorted([
        ("a/b/x2", "added"), ("a/f", "deleted"),
        (f"{deep}/added", "added"), (f"{deep}/b/x", "changed")])
    edit = {c.path: c for c in changes}[f"{deep}/b/x"]
    assert edit.content == "changed" and edit.old_sha256 != edit.sha256
