"""The real repository tier (code.repo_bugfix-v1, terminal.repo_test_triage-v1): pinned sdists,
AST mutation validated by the packages' own tests in the isolated sandbox, grading.

A small pool (inflection, the quickest suite: a few candidates per level) is built here into a
temporary file; the committed 200+-task pool is checked for shape and replayability by
default and re-validated end to end in the slow tier. The sdists come from PyPI once (CI
reaches it) and are cached under ``~/.cache/posttrain/repos`` (or ``$POSTTRAIN_CACHE``).
"""

from __future__ import annotations

import os
import shutil

import pytest

from posttrain.core.types import Completion
from posttrain.domains.base import get_domain, sample_task
from posttrain.domains.code.repos import episode
from posttrain.domains.code.repos.fetch import (Package, RepoCacheError, RepoFetchError, load_manifest,
                                                package, sdist_path)
from posttrain.domains.code.repos.grade import grade
from posttrain.domains.code.repos.image import read_source
from posttrain.domains.code.repos.mutate import Hunk, apply_hunks, diff_hunk, hide_tests, mutate, sites
from posttrain.domains.code.repos.pool import build_pool, load_pool
from posttrain.domains.code.repos.validate import Validator

pytestmark = pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
INFL = package("inflection")


@pytest.fixture(scope="module")
def small_pool(tmp_path_factory):
    out = tmp_path_factory.mktemp("pool") / "pool.json"
    pool = build_pool([INFL], want={1: 1, 2: 1, 3: 1}, max_tries={1: 6, 2: 2, 3: 3}, out=out)
    before = os.environ.get("POSTTRAIN_REPO_POOL")
    os.environ["POSTTRAIN_REPO_POOL"] = str(out)
    yield pool
    if before is None:
        os.environ.pop("POSTTRAIN_REPO_POOL", None)
    else:
        os.environ["POSTTRAIN_REPO_POOL"] = before


def _play(domain_id, task, actions):
    env = get_domain(domain_id).make_env(task)
    env.reset()
    try:
        for a in actions:
            if env.step(Completion(text=a)).done:
                break
        return env.verify(None)
    finally:
        env.close()


# ------------------------------------------------------------------ manifest and cache
def test_manifest_pins_five_packages_by_version_and_hash():
    pkgs = load_manifest()
    assert len({p.name for p in pkgs}) >= 5
    for p in pkgs:
        assert len(p.sha256) == 64 and p.version and p.url.endswith(p.filename)


def test_a_tampered_cached_sdist_is_refused(tmp_path):
    good = sdist_path(INFL)  # fetched once, verified
    cache = tmp_path / "cache"
    (cache / "sdists").mkdir(parents=True)
    copy = cache / "sdists" / INFL.filename
    shutil.copy(good, copy)
    assert sdist_path(INFL, fetch=False, cache=cache) == copy
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(RepoCacheError, match="refused"):
        sdist_path(INFL, fetch=False, cache=cache)


def test_a_missing_network_names_the_package(tmp_path):
    dead = Package("nopkg", "1.0", "nopkg-1.0.tar.gz", "http://127.0.0.1:9/nopkg-1.0.tar.gz",
                   "0" * 64, ".", (), ())
    with pytest.raises(RepoFetchError, match="nopkg-1.0"):
        sdist_path(dead, cache=tmp_path)
    assert not list((tmp_path / "sdists").iterdir())  # nothing half-written is left


# ------------------------------------------------------------------ mutation
def test_sites_are_deterministic_and_hunks_replay():
    src = read_source(INFL, "inflection/__init__.py")
    a, b = sites("inflection/__init__.py", src), sites("inflection/__init__.py", src)
    assert a == b and {s.op for s in a} >= {"binop", "compare", "constant", "negate_if",
                                             "drop_stmt", "swap_args", "remove_function"}
    for s in a[::15]:
        h = mutate(src, s)
        assert h is not None and apply_hunks(src, [h]) != src
        assert diff_hunk(h.path, src, apply_hunks(src, [h])) == h


def test_hide_tests_removes_functions_and_methods_only():
    src = ("import x\n\nclass T:\n    @dec\n    def test_a(self):\n        assert 1\n\n"
           "def test_b():\n    assert 2\n\ndef test_c():\n    pass\n")
    out = hide_tests(src, [("T", "test_a"), ("test_b",)])
    assert "test_a" not in out and "test_b" not in out and "def test_c" in out
    compile(out, "t.py", "exec")  # the emptied class keeps a body


# ------------------------------------------------------------------ validation
def test_validation_rejects_a_mutation_no_test_catches_and_keeps_a_caught_one():
    src = read_source(INFL, "inflection/__init__.py")
    # an equivalent mutation: a docstring line of a public function reworded
    line = next(i for i, t in enumerate(src.splitlines(keepends=True)) if "Convert strings to CamelCase." in t)
    old = src.splitlines(keepends=True)[line]
    dead = Hunk("inflection/__init__.py", line, (old,), (old.replace("CamelCase", "camel case"),))
    caught = mutate(src, next(s for s in sites("inflection/__init__.py", src)
                              if s.op == "remove_function" and s.function == "dasherize"))
    with Validator(INFL) as val:
        assert len(val.baseline) > 400
        v_dead, v_caught = val.check([dead]), val.check([caught])
    assert not v_dead.kept and "no test fails" in v_dead.reason
    assert v_caught.kept and v_caught.failing and all("dasherize" in t for t in v_caught.failing)


def test_the_small_pool_has_every_level_with_validation_figures(small_pool):
    levels = {t["level"] for t in small_pool["tasks"]}
    assert levels == {1, 2, 3}, small_pool["packages"]
    info = small_pool["packages"]["inflection"]
    assert info["tried"] >= info["kept"] >= 3 and info["seconds_per_run"] > 0
    assert load_pool()["tasks"] == small_pool["tasks"]


# ------------------------------------------------------------------ grading through the env
def test_reference_scores_one_and_the_unfixed_tree_zero(small_pool):
    task = sample_task(get_domain("code.repo_bugfix-v1"), 0, 1)
    ref = _play(task.domain, task, get_domain(task.domain).reference_actions(task))
    assert ref.value == 1.0, ref.reason
    unfixed = _play(task.domain, task, [episode.format_call("run_tests", {}), episode.format_answer("done")])
    assert unfixed.value == 0.0 and unfixed.passed == 0, unfixed.reason


def test_a_fix_that_breaks_another_test_scores_lower(small_pool):
    task = sample_task(get_domain("code.repo_bugfix-v1"), 0, 1)
    path = task.hidden["hunks"][0][0]
    src = read_source(INFL, path)
    other = next(s for s in sites(path, src) if s.op == "remove_function" and s.function == "dasherize")
    broken_fix = {path: apply_hunks(src, [mutate(src, other)])}
    hidden = task.hidden["hidden_tests"]
    gate = [t for t in load_pool()["packages"]["inflection"]["baseline"] if t not in hidden]
    s = grade(INFL, hidden, gate, broken_fix, version="t", lease=episode._lease)
    assert s.passed == len(hidden) and s.components["regressions"][0] >= 1
    assert s.value < 1.0 - 0.2, s.reason


@pytest.mark.parametrize("domain_id", ["code.repo_bugfix-v1", "terminal.repo_test_triage-v1"])
def test_probes_score_at_the_floor(small_pool, domain_id):
    dom = get_domain(domain_id)
    task = sample_task(dom, 1, 1)
    for name, actions in dom.probes(task).items():
        s = _play(domain_id, task, actions)
        assert s.value <= 0.05, (name, s.value, s.reason)


def test_terminal_reference_at_level_three_keeps_the_new_tests_visible(small_pool):
    dom = get_domain("terminal.repo_test_triage-v1")
    task = sample_task(dom, 0, 3)
    assert dom.tier == "real" and get_domain("code.repo_bugfix-v1").tier == "real"
    assert _play(dom.id, task, dom.reference_actions(task)).value == 1.0


# ------------------------------------------------------------------ the committed pool
def test_the_committed_pool_has_200_tasks_over_five_packages_and_three_levels(monkeypatch):
    monkeypatch.delenv("POSTTRAIN_REPO_POOL", raising=False)
    pool = load_pool()
    tasks = pool["tasks"]
    assert len(tasks) >= 200
    assert len({t["package"] for t in tasks}) >= 5
    assert {t["level"] for t in tasks} == {1, 2, 3}
    by_pkg = {p.name: p for p in load_manifest()}
    for t in tasks[::7]:  # every hunk replays on the pinned, verified source
        pkg = by_pkg[t["package"]]
        hunks = [Hunk.from_json(h) for h in t["hunks"]]
        for path in {h.path for h in hunks}:
            assert apply_hunks(read_source(pkg, path), [h for h in hunks if h.path == path])
        assert t["hidden"] and set(t["hidden"]) <= set(pool["packages"][t["package"]]["baseline"])


@pytest.mark.slow
def test_every_committed_task_is_still_valid(monkeypatch):
    """Re-validate the whole committed pool: each bug fails exactly its hidden tests."""
    monkeypatch.delenv("POSTTRAIN_REPO_POOL", raising=False)
    pool = load_pool()
    for pkg in load_manifest():
        tasks = [t for t in pool["tasks"] if t["package"] == pkg.name]
        with Validator(pkg) as val:
            for t in tasks:
                v = val.check([Hunk.from_json(h) for h in t["hunks"]])
                assert v.kept and set(v.failing) == set(t["hidden"]), t["id"]


# ------------------------------------------------------------------ command line
def test_build_pool_command_fetches_the_images_and_refuses_an_unknown_pool():
    import json

    from typer.testing import CliRunner

    from posttrain.cli.main import app

    runner = CliRunner()
    r = runner.invoke(app, ["domains", "build-pool", "repos", "--fetch-only", "--json"])
    assert r.exit_code == 0, r.output
    images = json.loads(r.stdout)
    assert set(images) == {p.key for p in load_manifest()}
    assert all(os.path.isfile(os.path.join(d, ".posttrain", "run-tests")) for d in images.values())
    bad = runner.invoke(app, ["domains", "build-pool", "nope"])
    assert bad.exit_code == 2 and "unknown pool" in bad.output
