"""Shared parts of the ``terminal`` family: the env (shell + file tools over a sandbox holding
the task's initial tree) and the predicate verifier.

Task layout: ``public["files"]`` is the initial tree (path → text) and ``public["modes"]``
optional permission bits (path → octal string); ``hidden["predicates"]`` the expected final
state (see :mod:`posttrain.verifiers.fs_state`). Predicates are built so that none holds in
the initial tree; the verifier always reads the real final tree (it opens the sandbox even
when the policy never did), so a do-nothing episode scores 0 by measurement, not by fiat.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import ListFilesTool, ReadFileTool, ShellTool, WriteFileTool
from posttrain.verifiers.fs_state import collect_state, fs_score

SUFFIX = ("Work in /work with the tools shell, read_file, write_file, list_files "
          "(<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>); "
          "reply <answer>done</answer> when finished.")


def tree_task(domain_id: str, difficulty: int, text: str, files: Mapping[str, str],
              predicates: list[dict[str, Any]], modes: Mapping[str, str] | None = None,
              hidden: Mapping[str, Any] | None = None) -> Task:
    listing = ", ".join(sorted(files))
    prompt = f"{text}\nFiles: {listing}\n{SUFFIX}"
    return make_task(domain_id, difficulty, prompt,
                     public={"files": dict(files), "modes": dict(modes or {})},
                     hidden={"predicates": predicates, **dict(hidden or {})})


def setup_tree(task: Task) -> Callable[[Any], None]:
    def setup(sb: Any) -> None:
        for path, text in task.public["files"].items():
            mode = int(task.public["modes"].get(path, "644"), 8)
            sb.write_file(path, text, mode=mode)
        dirs = {p for p in task.public["modes"] if p not in task.public["files"]}
        for d in sorted(dirs):
            sb.exec(["chmod", task.public["modes"][d], d], timeout=5)
    return setup


def state_verifier(domain_id: str, extra: Callable[[ToolEnv], Mapping[str, float]] | None = None):
    def verify(env: ToolEnv, trajectory: Any) -> Score:
        st = collect_state(env.sandbox)
        return fs_score(env.task.hidden["predicates"], st, domain_id,
                        extra=extra(env) if extra else None)
    return verify


def terminal_env(domain_id: str, task: Task, verifier=None, max_turns: int = 10) -> ToolEnv:
    tools = [ShellTool(timeout=10.0), ReadFileTool(), WriteFileTool(), ListFilesTool()]
    return ToolEnv(task, tools, pool_lease(), verifier or state_verifier(domain_id),
                   max_turns=max_turns, setup=setup_tree(task), verifier_version=domain_id)


def shell(command: str) -> str:
    return format_call("shell", {"command": command})


def done() -> str:
    return format_answer("done")


def common_probes(task: Task) -> dict[str, list[str]]:
    """Hacks every terminal task must resist: wiping the tree, touching expected paths empty,
    opening everything up, and claiming success."""
    paths = sorted({p.get("path") or p.get("dst") for p in task.hidden["predicates"]
                    if p.get("path") or p.get("dst")})
    touch = " ".join(f"'{p}'" for p in paths[:40])
    return {
        "wipe_tree": [shell("rm -rf /work/* /work/.[!.]* 2>/dev/null; ls -la"), done()],
        "touch_expected": [shell(f"for p in {touch}; do mkdir -p \"$(dirname \"$p\")\"; : > \"$p\"; done"), done()],
        "chmod_all": [shell("chmod -R 777 /work"), done()],
        "claim_success": [shell("echo 'All tests passed'; echo PASSED"), format_answer("All tests passed")],
    }
