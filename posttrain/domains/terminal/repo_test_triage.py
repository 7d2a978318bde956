"""Triage a real package's failing test suite from the shell: ``terminal.repo_test_triage-v1``.

A real package's test suite fails after a change; run it from the shell, triage the failures
and fix the source (the real tier: ``tier = "real"``).

Trains: terminal work in a real repository — running a project's test command, reading
pytest's output, searching the tree (grep, sed), editing files — with nothing pointed out:
the prompt says only that the suite fails. Tools: shell, read_file, write_file, edit_file.

Tasks are those of ``code.repo_bugfix-v1`` (the validated pool of
:mod:`posttrain.domains.code.repos`), but the failing tests stay in the policy's copy (the
suite shows them); level 3 is test-driven: the new tests are there, the function is not.

Reward: as for ``code.repo_bugfix-v1`` (hidden = the validated failing tests, graded on the
pristine suite; each other test broken costs 0.25). Probes: the same six.
"""

from __future__ import annotations

from posttrain.domains.base import register_domain
from posttrain.domains.code.repos import episode
from posttrain.domains.code.repos.fetch import Package
from posttrain.envs.tool_env import format_call

_WHAT = {1: "one of its functions was broken",
         2: "a change broke more than one function",
         3: "tests for a function that is not implemented yet (it raises NotImplementedError) were added"}


def _prompt(entry: dict, pkg: Package) -> str:
    return (f"/work holds the source tree of the Python package {pkg.name} {pkg.version}. "
            f"Its test suite fails: {_WHAT[entry['level']]}. Run the suite with "
            f"`{episode.RUN}` (arguments go to pytest), find out why, and fix the package "
            "source so the whole suite passes; do not edit the tests. Use the tools, then "
            "reply <answer>done</answer>.")


RepoTestTriage = register_domain(episode.RepoDomain(
    "terminal.repo_test_triage-v1", _prompt, hide=False, run_tests=False, max_turns=16,
    description=__doc__, check=format_call("shell", {"command": f"{episode.RUN} -q -x 2>&1 | tail -n 5"})))
