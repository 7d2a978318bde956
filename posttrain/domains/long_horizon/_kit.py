"""The ``long_horizon`` family's kit: the :class:`LongDomain` record, the staged sandbox env
and the helpers its domains share.

What it is: :class:`LongDomain`, a frozen record of one domain's functions (generator, env,
scripted reference episode, probes) exposing the Domain protocol — composition, not
inheritance: each module builds one and registers it; :func:`stage_env` (the family's
sandbox env — shell, python and file tools over the task's files, an optional ``init`` shell
command run once at setup, e.g. to build a SQLite database — with one checkpoint per stage
through :func:`checkpoint_reward`); :func:`files_task`, :func:`read_text`, :func:`write`,
:func:`done`; :func:`lines_equal`, :func:`stage_score` (a Score from named stage values) and
:func:`in_fresh` (files copied into a clean pooled sandbox, a list of commands run there).

:func:`checkpoint_reward` turns named checks ``(name, check(env) -> bool)`` into a
``process_reward_fn`` for :class:`~posttrain.envs.tool_env.ToolEnv`: after every step the
checks not yet passed are evaluated, and each one passing for the first time adds
``1 / len(checks)`` to that step's reward (recorded in ``env.checkpoints``). A check that
raises counts as not passed.

Guarantees: checkpoints and outcome verifiers built with these read the episode's files or
the env's state, or run our own fixed commands; anything the policy wrote is only ever run
in a fresh sandbox. Does not: decide stages or weights (each module documents its own).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import ListFilesTool, PythonTool, ReadFileTool, ShellTool, WriteFileTool

Check = tuple[str, Callable[[ToolEnv], bool]]
SUFFIX = ("Tools: shell, python, read_file, write_file, list_files, called as <tool_call>{\"name\": "
          "..., \"arguments\": {...}}</tool_call>; reply <answer>done</answer> when finished.")


@dataclass(frozen=True)
class LongDomain:
    """One long-horizon domain assembled from its functions.

    ``build(rng, difficulty) -> Task``; ``env(task) -> ToolEnv`` (usually :func:`stage_env`);
    ``reference(task)`` — the whole scripted episode, final answer included, that scores 1.0;
    ``own_probes(task) -> {name: episode}`` — episodes a lazy policy might try (≤ 0.05);
    ``description``: what ``domains list`` and the catalogue show (first line = the skill).
    """

    id: str
    build: Callable[[random.Random, int], Task]
    env: Callable[[Task], ToolEnv]
    reference: Callable[[Task], list[str]]
    own_probes: Callable[[Task], Mapping[str, Any]]
    description: str = ""
    env_kind: str = "sandbox"
    family: str = "long_horizon"
    difficulties: tuple[int, ...] = (1, 2, 3)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return self.build(rng, difficulty)

    def make_env(self, task: Task) -> ToolEnv:
        return self.env(task)

    def reference_actions(self, task: Task) -> list[str]:
        return list(self.reference(task))

    def solve(self, task: Task) -> str:
        return done()

    def probes(self, task: Task) -> dict[str, Any]:
        return dict(self.own_probes(task))


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


def stage_env(task: Task, verifier: Any, checks: Sequence[Check], init: str | None = None,
              max_turns: int = 16) -> ToolEnv:
    """The family's sandbox env over ``public["files"]``, one checkpoint per check."""
    def setup(sb: Any) -> None:
        for path, text in task.public["files"].items():
            sb.write_file(path, text)
        if init:
            sb.exec(init, timeout=10)

    tools = [ShellTool(timeout=10.0), PythonTool(timeout=10.0), ReadFileTool(), WriteFileTool(),
             ListFilesTool()]
    return ToolEnv(task, tools, pool_lease(), verifier, max_turns=max_turns, setup=setup,
                   process_reward_fn=checkpoint_reward(checks), verifier_version=task.domain)


def files_task(domain_id: str, difficulty: int, text: str, files: dict[str, str],
               hidden: dict[str, Any]) -> Task:
    return make_task(domain_id, difficulty, f"{text}\n{SUFFIX}", public={"files": files},
                     hidden=hidden)


def write(path: str, content: str) -> str:
    return format_call("write_file", {"path": path, "content": content})


def shell(command: str) -> str:
    return format_call("shell", {"command": command})


def done() -> str:
    return format_answer("done")


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
