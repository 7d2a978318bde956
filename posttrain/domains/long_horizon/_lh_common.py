"""Shared parts of the second batch of ``long_horizon`` domains (the ``lh_*`` modules).

What it is: :func:`stage_env` (the family's sandbox env — shell, python and file tools, one
checkpoint per stage through :func:`posttrain.domains.long_horizon._common.checkpoint_reward`
— with an optional ``init`` shell command run once at setup, e.g. to build a SQLite
database), :func:`lines_equal`, :func:`stage_score` (a Score from named stage values) and
:func:`in_fresh` (files copied into a clean pooled sandbox, a list of commands run there).

Guarantees: checkpoints and outcome verifiers built with these read the episode's files or
run our own fixed commands; anything the policy wrote is only ever run in a fresh sandbox.
Does not: decide stages or weights (each module documents its own).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.envs.tool_env import ToolEnv, pool_lease
from posttrain.tools import ListFilesTool, PythonTool, ReadFileTool, ShellTool, WriteFileTool

from ._common import Check, checkpoint_reward


def stage_env(domain_id: str, task: Task, verifier: Any, checks: Sequence[Check],
              init: str | None = None, max_turns: int = 16) -> ToolEnv:
    def setup(sb: Any) -> None:
        for path, text in task.public["files"].items():
            sb.write_file(path, text)
        if init:
            sb.exec(init, timeout=10)

    tools = [ShellTool(timeout=10.0), PythonTool(timeout=10.0), ReadFileTool(), WriteFileTool(),
             ListFilesTool()]
    return ToolEnv(task, tools, pool_lease(), verifier, max_turns=max_turns, setup=setup,
                   process_reward_fn=checkpoint_reward(checks), verifier_version=domain_id)


def lines_equal(got: str | None, want: str) -> bool:
    """Same lines, trailing whitespace and final newlines ignored."""
    if got is None:
        return False
    norm = lambda t: [ln.rstrip() for ln in t.rstrip("\n").split("\n")]  # noqa: E731
    return norm(got) == norm(want)


def stage_score(domain_id: str, values: Mapping[str, float], env: ToolEnv, reason: str = "") -> Score:
    comps = {k: (float(v), 1.0) for k, v in values.items()}
    comps["checkpoints"] = (sum(env.checkpoints.values()), 0.0)
    held = sum(float(v) >= 1.0 for v in values.values())
    v = sum(values.values()) / max(len(values), 1)
    return Score(v, components=comps, passed=held, total=len(values),
                 reason=reason or f"{held}/{len(values)} stages right", verifier_version=domain_id)


def in_fresh(files: Mapping[str, bytes | str], commands: Sequence[Any],
             after: Callable[[Any], Any] | None = None, timeout: float = 10.0) -> tuple[list[Any], Any]:
    """Run ``commands`` one by one in a clean pooled sandbox holding only ``files``."""
    with pool_lease()() as sb:
        for path, data in files.items():
            sb.write_file(path, data)
        results = [sb.exec(c, timeout=timeout, cpu_time=timeout) for c in commands]
        return results, (after(sb) if after else None)
