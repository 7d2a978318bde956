"""The TreeDomain terminal domains (``posttrain/domains/terminal/``, built on ``_kit.TreeDomain``): the reference
scores 1.0 at every level, and wrong or half-done work scores below 1 (partial where the
domain claims continuous credit). Conformance (probes) runs in tests/domains."""

import pytest

from posttrain.domains import get_domain, sample_task
from posttrain.rollout import replay_score as run_episode
from posttrain.envs.tool_env import format_answer, format_call

NEW = ["rename_pattern", "dedupe", "archive", "split_file", "csv_merge", "find_replace", "regex_extract",
       "disk_usage", "dir_spec", "line_endings", "log_counts", "json_to_csv", "symlinks", "makefile",
       "cron_schedule", "clean_build", "apply_patch", "config_edit", "fix_script", "py_project",
       "world_writable"]
DONE = format_answer("done")


def sh(cmd):
    return format_call("shell", {"command": cmd})


def wr(path, content):
    return format_call("write_file", {"path": path, "content": content})


def score(name, d, actions, seed=0):
    dom = get_domain(f"terminal.{name}")
    task = sample_task(dom, seed, d)
    acts = actions(task) if callable(actions) else actions
    return run_episode(dom, task, list(acts) + [DONE])


@pytest.mark.parametrize("name", NEW)
def test_reference_every_level(name):
    dom = get_domain(f"terminal.{name}")
    assert dom.family == "terminal" and dom.id.endswith("-v1")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        s = run_episode(dom, task, dom.reference_actions(task))
        assert s.value == pytest.approx(1.0), (name, d, s.reason)


def _half(pairs):
    return pairs[: max(1, len(pairs) // 2)]


PARTIAL = {  # name -> (difficulty, actions builder): each must land strictly between 0 and 1
    "rename_pattern": (2, lambda t: [sh(" && ".join(f"mv '{s}' '{d}'" for s, d in _half(list(t.hidden["renames"].items()))))]),
    "dedupe": (2, lambda t: [sh("rm -f " + " ".join(f"'{m}'" for m in t.hidden["groups"][0][1:]))]),
    "archive": (1, lambda t: [sh(f"tar -czf backup.tar.gz --exclude='{sorted(t.hidden['members'])[0]}' project")]),
    "split_file": (1, lambda t: [wr(*next(iter(t.hidden["chunks"].items())))]),
    "csv_merge": (3, lambda t: [wr("merged.csv", "\n".join([t.hidden["lines"][0]] + sorted(t.hidden["lines"][1:])) + "\n")]),
    "find_replace": (2, lambda t: [wr(*next(iter(t.hidden["targets"].items())))]),
    "regex_extract": (2, lambda t: [wr("matches.txt", "\n".join(_half(t.hidden["want"])) + "\n")]),
    "disk_usage": (2, lambda t: [wr("usage.txt", "\n".join(t.hidden["want"][:-1] + ["zzz 0"]) + "\n")]),
    "dir_spec": (2, lambda t: [dom_ref_first_dir(t)]),
    "line_endings": (1, lambda t: [wr(*next(iter(t.hidden["targets"].items())))]),
    "log_counts": (2, lambda t: [wr("top.txt", "\n".join(t.hidden["want"][:2]) + "\n")]),
    "symlinks": (2, lambda t: [sh(f"ln -s {t.hidden['links']['current']} current")]),
    "clean_build": (2, lambda t: [sh("rm -f " + " ".join(t.hidden["gen"]["obj"]))]),
    "apply_patch": (2, lambda t: [wr(*next(iter(t.hidden["after"].items())))]),
    "config_edit": (3, lambda t: [wr("conf/app.env", t.hidden["after"]["conf/app.env"])]),
    "cron_schedule": (2, lambda t: [wr("schedule.cron", t.hidden["lines"][0] + "\n0 0 1 1 0 /opt/jobs/x\n")]),
    "world_writable": (1, lambda t: [sh(f"chmod {m} '{p}'") for p, m in _half(list(t.hidden["fixed"].items()))]),
}


def dom_ref_first_dir(task):
    """Satisfy exactly the first per-directory predicate (a folder, its files, its empty leaves)."""
    cmds = []
    for p in task.hidden["predicates"][0]["of"]:
        if p["op"] == "dir":
            cmds.append(f"mkdir -p '{p['path']}'")
        elif p["op"] == "file":
            cmds.append(f"printf '%s' '{p['content']}' > '{p['path']}'")
    return sh(" && ".join(cmds))


@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_partial_work_scores_strictly_between(name):
    d, build = PARTIAL[name]
    s = score(name, d, build)
    assert 0.0 < s.value < 1.0, (name, s.value, s.reason)


def test_makefile_without_incremental_build_loses_that_component():
    always = ("all:\n\tmkdir -p build\n\tcat $(sort $(wildcard src/*.txt)) > build/book.txt\n"
              "\twc -l < build/book.txt | tr -d ' ' > build/stats.txt\n"
              "clean:\n\trm -rf build\n.PHONY: all clean\n")
    s = score("makefile", 3, [wr("Makefile", always)])
    assert s.components["build"][0] == 1.0 and s.components["clean"][0] == 1.0
    assert s.components["incremental"][0] == 0.0 and s.value == pytest.approx(2 / 3)


def test_json_csv_unquoted_values_lose_rows():
    dom = get_domain("terminal.json_to_csv")
    for seed in range(8):
        task = sample_task(dom, seed, 3)
        rows = task.hidden["rows"]
        if any("," in c or '"' in c for r in rows for c in r):
            naive = ",".join(task.hidden["cols"]) + "\n" + "".join(",".join(r) + "\n" for r in rows)
            s = run_episode(dom, task, [wr("out.csv", naive), DONE])
            assert 0.0 < s.value < 1.0
            return
    pytest.fail("no task with a value needing quotes in 8 seeds")


def test_fix_script_and_py_project_wrong_answers():
    assert score("fix_script", 2, [sh("sh report.sh data.csv 2")]).value == 0.0  # left broken
    s = score("py_project", 3, lambda t: [
        wr("pyproject.toml", f'[project]\nname = "{t.hidden["pkg"]}"\nversion = "{t.hidden["ver"]}"\n'),
        wr(f"src/{t.hidden['pkg']}/__init__.py", "import re\n\ndef slugify(t):\n"
           "    return re.sub(r'[^a-z0-9]+', '-', t.lower()).strip('-')\n")])
    assert 0.0 < s.value < 1.0 and s.components["hidden"][0] == pytest.approx(0.5)


def test_symlink_to_host_file_is_not_followed():
    s = score("symlinks", 1, [sh("ln -s /etc/passwd current")])
    assert s.value == 0.0


@pytest.mark.parametrize("d,seed", [(1, 5), (1, 17), (2, 18), (2, 83), (3, 21)])
def test_world_writable_reference_where_a_folder_holds_no_file(d, seed):
    """Seeds where srv/tmp or srv/www holds no file: the mode the task gives such a folder
    creates it (it used to be missing, so the reference failed its mode guard)."""
    dom = get_domain("terminal.world_writable")
    task = sample_task(dom, seed, d)
    files = task.public["files"]
    assert any(p not in files and not any(f.startswith(p + "/") for f in files) for p in task.public["modes"])
    s = run_episode(dom, task, dom.reference_actions(task))
    assert s.value == pytest.approx(1.0), s.reason
