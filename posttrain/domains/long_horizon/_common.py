"""Checkpoints as process rewards, and the sandbox env of the long-horizon family.

:func:`checkpoint_reward` turns named checks ``(name, check(env) -> bool)`` into a
``process_reward_fn`` for :class:`~posttrain.envs.tool_env.ToolEnv`: after every step the
checks not yet passed are evaluated, and each one passing for the first time adds
``1 / len(checks)`` to that step's reward (recorded in ``env.checkpoints``). Checks read
state only (files in the episode's sandbox, the env's ledger); they run nothing the policy
wrote. A check that raises counts as not passed.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from posttrain.core.types import Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import ListFilesTool, PythonTool, ReadFileTool, ShellTool, WriteFileTool

Check = tuple[str, Callable[[ToolEnv], bool]]
SUFFIX = ("Tools: shell, python, read_file, write_file, list_files, called as <tool_call>{\"name\": "
          "..., \"arguments\": {...}}</tool_call>; reply <answer>done</answer> when finished.")


def checkpoint_reward(checks: Sequence[Check]) -> Callable[[ToolEnv], float]:
    def reward(env: ToolEnv) -> float:
        if env.has_sandbox and not env.sandbox_opened:
            return 0.0  # nothing has happened in the sandbox yet
        gained = 0.0
        for name, check in checks:
            if name in env.checkpoints:
                continue
            try:
                ok = bool(check(env))
            except Exception:  # a missing or unreadable file is simply not there yet
                ok = False
            if ok:
                env.checkpoints[name] = 1.0 / len(checks)
                gained += 1.0 / len(checks)
        return gained
    return reward


def read_text(env: ToolEnv, path: str) -> str | None:
    try:
        return env.sandbox.read_file(path, max_bytes=1 << 20).decode("utf-8", "replace")
    except Exception:  # absent, a link, a directory
        return None


def sandbox_env(domain_id: str, task: Task, verifier: Any, checks: Sequence[Check],
                max_turns: int = 16) -> ToolEnv:
    def setup(sb: Any) -> None:
        for path, text in task.public["files"].items():
            sb.write_file(path, text)

    tools = [ShellTool(timeout=10.0), PythonTool(timeout=10.0), ReadFileTool(), WriteFileTool(),
             ListFilesTool()]
    return ToolEnv(task, tools, pool_lease(), verifier, max_turns=max_turns, setup=setup,
                   process_reward_fn=checkpoint_reward(checks), verifier_version=domain_id)


def files_task(domain_id: str, difficulty: int, text: str, files: dict[str, str],
               hidden: dict[str, Any]) -> Task:
    return make_task(domain_id, difficulty, f"{text}\n{SUFFIX}", public={"files": files},
                     hidden=hidden)


def write(path: str, content: str) -> str:
    return format_call("write_file", {"path": path, "content": content})


def done() -> str:
    return format_answer("done")
