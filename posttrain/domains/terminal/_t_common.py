"""Shared plumbing of the second batch of ``terminal`` domains (the ``t_*`` modules).

What it is: :class:`TreeDomain`, a frozen record holding one domain's generator, reference
episode, own probes and (optionally) a custom verifier, exposing the Domain protocol
(composition, not inheritance: each ``t_*`` module builds one and registers it); plus small
helpers used by several of them — :func:`tree_task` (a Task whose initial tree may also hold
empty directories, symlinks and modes), :func:`read` (a file of the final tree, never
following links), :func:`fresh_run` (files copied into a clean pooled sandbox and a command
run there, for verifiers that must not trust the episode's sandbox), :func:`graded_lines`.

Guarantees: the env is :func:`posttrain.domains.terminal._common.terminal_env` (shell + file
tools, warm pooled sandbox), so every domain gets the family's probes (wipe, touch, chmod,
claim success) on top of its own; verifiers never run anything the policy wrote in the
episode's sandbox (they read it, or copy files out into a fresh one).

Does not: decide what a task is worth; each module documents its predicates and probes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_call, pool_lease
from posttrain.tools import ListFilesTool, ReadFileTool, ShellTool, WriteFileTool
from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

from ._common import SUFFIX, common_probes, done, shell

__all__ = ["TreeDomain", "tree_task", "read", "fresh_run", "graded_lines", "write", "shell",
           "done", "Score"]


def write(path: str, content: str) -> str:
    return format_call("write_file", {"path": path, "content": content})


def tree_task(domain_id: str, difficulty: int, text: str, files: Mapping[str, str],
              predicates: list[dict[str, Any]], *, modes: Mapping[str, str] | None = None,
              dirs: list[str] | None = None, links: Mapping[str, str] | None = None,
              hidden: Mapping[str, Any] | None = None) -> Task:
    """A Task over an initial tree: files (path → text), empty ``dirs``, ``links`` (path →
    target, created as symlinks) and ``modes`` (path → octal string, files or dirs)."""
    shown = sorted(set(files) | set(dirs or []) | set(links or {}))
    listing = ", ".join(shown[:60]) + (f" ... ({len(shown)} entries)" if len(shown) > 60 else "")
    prompt = f"{text}\nFiles: {listing}\n{SUFFIX}"
    return make_task(domain_id, difficulty, prompt,
                     public={"files": dict(files), "modes": dict(modes or {}),
                             "dirs": list(dirs or []), "links": dict(links or {})},
                     hidden={"predicates": predicates, **dict(hidden or {})})


def _setup(task: Task) -> Callable[[Any], None]:
    def setup(sb: Any) -> None:
        pub = task.public
        for path, text in pub["files"].items():
            sb.write_file(path, text, mode=int(pub["modes"].get(path, "644"), 8))
        cmds = [f"mkdir -p '{d}'" for d in pub.get("dirs", [])]
        cmds += [f"mkdir -p \"$(dirname '{p}')\" && ln -s '{t}' '{p}'" for p, t in pub.get("links", {}).items()]
        cmds += [f"chmod {m} '{p}'" for p, m in pub["modes"].items() if p not in pub["files"]]
        if cmds:
            sb.exec(" && ".join(cmds), timeout=10)
    return setup


def read(env: ToolEnv, path: str, max_bytes: int = 1 << 20) -> bytes | None:
    """Bytes of a regular file of the episode's final tree (None: absent, a link, a dir)."""
    if not env.sandbox_opened:
        return None
    try:
        return env.sandbox.read_file(path, max_bytes=max_bytes)
    except Exception:  # absent, a link, not a regular file, too large
        return None


def text_of(env: ToolEnv, path: str) -> str | None:
    raw = read(env, path)
    return None if raw is None else raw.decode("utf-8", "replace")


def fresh_run(files: Mapping[str, bytes | str], cmd: str, timeout: float = 10.0,
              after: Callable[[Any], Any] | None = None) -> tuple[Any, Any]:
    """Run ``cmd`` in a clean pooled sandbox holding only ``files``; (ExecResult, after(sb))."""
    with pool_lease()() as sb:
        for path, data in files.items():
            sb.write_file(path, data)
        res = sb.exec(cmd, timeout=timeout, cpu_time=timeout)
        return res, (after(sb) if after else None)


def graded_lines(got: str | None, want: list[str]) -> float:
    """Expected lines found in order / max(expected, produced) (padding lowers it)."""
    if got is None:
        return 0.0
    have = _norm_lines(got)
    j = hits = 0
    for line in have:
        if j < len(want) and line == want[j]:
            hits, j = hits + 1, j + 1
    return hits / max(len(want), len(have), 1)


def predicate_verifier(domain_id: str):
    def verify(env: ToolEnv, trajectory: Any) -> Score:
        return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), domain_id)
    return verify


@dataclass(frozen=True)
class TreeDomain:
    """One terminal domain assembled from its parts (see the module docstring)."""

    id: str
    build: Callable[[random.Random, int], Task]
    reference: Callable[[Task], list[str]]
    own_probes: Callable[[Task], dict[str, list[str]]]
    verifier: Callable[[ToolEnv, Any], Score] | None = None
    max_turns: int = 10
    skip_common: tuple[str, ...] = ()
    family: str = "terminal"
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "sandbox"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return self.build(rng, difficulty)

    def make_env(self, task: Task) -> ToolEnv:
        tools = [ShellTool(timeout=10.0), ReadFileTool(), WriteFileTool(), ListFilesTool()]
        return ToolEnv(task, tools, pool_lease(), self.verifier or predicate_verifier(self.id),
                       max_turns=self.max_turns, setup=_setup(task), verifier_version=self.id)

    def reference_actions(self, task: Task) -> list[str]:
        return list(self.reference(task)) + [done()]

    def solve(self, task: Task) -> str:
        return done()


    def probes(self, task: Task) -> dict[str, list[str]]:
        common = {k: v for k, v in common_probes(task).items() if k not in self.skip_common}
        return {**self.own_probes(task), **common}
