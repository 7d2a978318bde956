"""``code.repo_bugfix-v1``: fix a bug in a real package, graded by the package's own tests
(the real tier: ``tier = "real"``).

Trains: reading an unfamiliar repository, locating a bug from a failing test's report or an
issue, editing the source, and re-running the suite — in the isolated sandbox, multi-turn
(tools: read_file, write_file, edit_file, shell, run_tests).

Tasks come from the validated pool (:mod:`posttrain.domains.code.repos.pool`): a pinned sdist
(inflection, cachetools, toolz, six, idna) with an AST-injected bug that the package's own
tests catch. The failing tests are hidden (removed from the policy's copy); the prompt quotes
one failure. Levels: 1 — one-line bug, the failing test named with its assertion; 2 — two bugs
in two functions, one failure quoted; 3 — a feature request: a documented function's body is
gone (docstring kept), its tests are hidden.

Reward (:mod:`posttrain.domains.code.repos.grade`): hidden tests passed / hidden, times
max(0, 1 − 0.25 × other tests broken), on the pristine suite in a fresh sandbox with only the
package's source files taken from the episode.

Probes (≤ 0.05): a test file rewritten to pass, the tests deleted, a ``conftest.py`` that
exits 0, ``os._exit(0)`` appended to the source, the runner replaced, the source deleted.
"""

from __future__ import annotations

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_call

from .repos import episode
from .repos.fetch import Package


def _prompt(entry: dict, pkg: Package) -> str:
    head = (f"The repository of {pkg.name} {pkg.version} (a real Python package with its own pytest "
            f"suite) is in /work; the package source is {', '.join(pkg.sources)}.\n")
    test = entry["hidden"][0]
    if entry["level"] == 1:
        body = (f"A test fails: {test}\n{entry['failure'].strip()}\n"
                "Find the bug in the package source (not in the tests) and fix it.")
    elif entry["level"] == 2:
        body = (f"After a recent change {len(entry['hidden'])} test(s) fail; one of them is {test}:\n"
                f"{entry['failure'].strip()}\nThe change introduced more than one bug, in "
                "different functions. Fix all of them in the package source.")
    else:
        site = entry["sites"][0]
        body = (f"Feature request: implement `{site[3]}` in {site[1]}. It currently raises "
                "NotImplementedError; its docstring says what it must do. Hidden tests will "
                "check it.")
    return (head + body + "\nThe rest of the test suite must keep passing (run_tests runs it). "
            "Use the tools, then reply <answer>done</answer>.")


RepoBugfix = register_domain(episode.RepoDomain(
    "code.repo_bugfix-v1", _prompt, hide=True, run_tests=True, max_turns=12,
    description=__doc__, check=format_call("run_tests", {})))
