"""The ``terminal`` family's kit: the sandbox record :class:`TreeDomain` and its helpers.

What it is: :class:`TreeDomain`, a frozen record holding one domain's generator, reference
episode, own probes and (optionally) a custom verifier, exposing the Domain protocol
(composition, not inheritance: each module builds its records and registers them); the task
builders :func:`tree_task` (an initial tree that may also hold empty directories, symlinks and
modes) and :func:`files_task` (files and modes only — the layout of the family's first
domains, kept so their tasks stay byte-identical); the family's probes (:func:`common_probes`)
and action helpers (:func:`shell`, :func:`write`, :func:`done`); and small helpers used by
several verifiers — :func:`read` / :func:`text_of` (a file of the final tree, never following
links), :func:`fresh_run` (files copied into a clean pooled sandbox and a command run there,
for verifiers that must not trust the episode's sandbox), :func:`graded_lines`.

Task layout: ``public["files"]`` is the initial tree (path → text), ``public["modes"]``
permission bits (path → octal string; a path that is not a file is a directory, created if
no file lies in it), ``public["dirs"]`` / ``public["links"]`` (``tree_task`` only) empty
directories and symlinks; ``hidden["predicates"]`` the expected final state (see
:mod:`posttrain.verifiers.fs_state`).

Guarantees: the env is a warm pooled sandbox with shell + file tools holding the task's
initial tree; the default verifier scores the predicates on the real final tree (it opens
the sandbox even when the policy never did), so a do-nothing episode scores 0 by
measurement; every domain gets the family's probes (wipe, touch, chmod, claim success) on
top of its own; verifiers never run anything the policy wrote in the episode's sandbox
(they read it, or copy files out into a fresh one).

Does not: decide what a task is worth; each module documents its predicates and probes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.envs.tool_env import ToolEnv, format_answer, format_call, pool_lease
from posttrain.tools import ListFilesTool, ReadFileTool, ShellTool, WriteFileTool
from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

__all__ = ["TreeDomain", "tree_task", "files_task", "common_probes", "read", "text_of",
           "fresh_run", "graded_lines", "write", "write_lines", "report_predicates", "report_task", "report_reference", "shell", "done",
           "Score", "SUFFIX"]

SUFFIX = ("Work in /work with the tools shell, read_file, write_file, list_files "
          "(<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>); "
          "reply <answer>done</answer> when finished.")


def shell(command: str) -> str:
    return format_call("shell", {"command": command})


def write(path: str, content: str) -> str:
    return format_call("write_file", {"path": path, "content": content})


def done() -> str:
    return format_answer("done")


def write_lines(path: str, lines: list[str]) -> str:
    """A write_file action putting ``lines`` in ``path``, one per line."""
    return write(path, "\n".join(lines) + "\n")


def report_predicates(path: str, want: list[str], inputs: Mapping[str, str]) -> list[dict[str, Any]]:
    """A report file's predicates: its lines graded in order, the exact text (line endings
    normalised), and every input file left unchanged (guards)."""
    return ([{"op": "lines_match", "path": path, "lines": want},
             {"op": "file", "path": path, "content": "\n".join(want) + "\n", "lines": True}]
            + [{"op": "file", "path": p, "content": c, "guard": True} for p, c in inputs.items()])


def _task(domain_id: str, difficulty: int, text: str, listing: str, public: dict[str, Any],
          predicates: list[dict[str, Any]], hidden: Mapping[str, Any] | None) -> Task:
    return make_task(domain_id, difficulty, f"{text}\nFiles: {listing}\n{SUFFIX}", public=public,
                     hidden={"predicates": predicates, **dict(hidden or {})})


def files_task(domain_id: str, difficulty: int, text: str, files: Mapping[str, str],
               predicates: list[dict[str, Any]], modes: Mapping[str, str] | None = None,
               hidden: Mapping[str, Any] | None = None) -> Task:
    """A Task over files (path → text) and ``modes``; public holds only those two keys."""
    return _task(domain_id, difficulty, text, ", ".join(sorted(files)),
                 {"files": dict(files), "modes": dict(modes or {})}, predicates, hidden)


def tree_task(domain_id: str, difficulty: int, text: str, files: Mapping[str, str],
              predicates: list[dict[str, Any]], *, modes: Mapping[str, str] | None = None,
              dirs: list[str] | None = None, links: Mapping[str, str] | None = None,
              hidden: Mapping[str, Any] | None = None) -> Task:
    """A Task over an initial tree: files (path → text), empty ``dirs``, ``links`` (path →
    target, created as symlinks) and ``modes`` (path → octal string, files or dirs)."""
    shown = sorted(set(files) | set(dirs or []) | set(links or {}))
    listing = ", ".join(shown[:60]) + (f" ... ({len(shown)} entries)" if len(shown) > 60 else "")
    return _task(domain_id, difficulty, text, listing,
                 {"files": dict(files), "modes": dict(modes or {}), "dirs": list(dirs or []),
                  "links": dict(links or {})}, predicates, hidden)


def report_task(domain_id: str, difficulty: int, text: str, files: Mapping[str, str], path: str,
                want: list[str]) -> Task:
    """A task whose answer is a report file ``path`` holding the lines ``want`` (kept in
    ``hidden["want"]``), every input left unchanged (see :func:`report_predicates`)."""
    return tree_task(domain_id, difficulty, text, files, report_predicates(path, want, files),
                     hidden={"want": want})


def report_reference(path: str) -> Callable[[Task], list[str]]:
    """The reference of a :func:`report_task`: write the wanted lines to ``path``."""
    def reference(task: Task) -> list[str]:
        return [write_lines(path, task.hidden["want"])]
    return reference


def _setup(task: Task) -> Callable[[Any], None]:
    def setup(sb: Any) -> None:
        pub = task.public
        for path, text in pub["files"].items():
            sb.write_file(path, text, mode=int(pub["modes"].get(path, "644"), 8))
        cmds = [f"mkdir -p '{d}'" for d in pub.get("dirs", [])]
        cmds += [f"mkdir -p \"$(dirname '{p}')\" && ln -s '{t}' '{p}'" for p, t in pub.get("links", {}).items()]
        # a mode for a path that is not a file declares a directory: create it (no file may lie
        # in it, e.g. an empty srv/www) before setting its bits
        cmds += [f"(test -e '{p}' || test -L '{p}' || mkdir -p '{p}') && chmod {m} '{p}'"
                 for p, m in pub["modes"].items() if p not in pub["files"]]
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


def predicate_verifier(env: ToolEnv, trajectory: Any) -> Score:
    """The default verifier: the fraction of ``hidden["predicates"]`` holding on the final tree."""
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), env.task.domain)


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


@dataclass(frozen=True)
class TreeDomain:
    """One terminal domain assembled from its parts (see the module docstring).

    ``build(rng, difficulty) -> Task``; ``reference(task)`` — the reference episode's actions
    (``done()`` is appended); ``own_probes(task) -> {name: actions}``; ``verifier(env,
    trajectory) -> Score`` (default: the predicates); ``skip_common`` — family probes that do
    not apply (e.g. ``touch_expected`` when no predicate names a path).
    """

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
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        return self.build(rng, difficulty)

    def make_env(self, task: Task) -> ToolEnv:
        tools = [ShellTool(timeout=10.0), ReadFileTool(), WriteFileTool(), ListFilesTool()]
        return ToolEnv(task, tools, pool_lease(), self.verifier or predicate_verifier,
                       max_turns=self.max_turns, setup=_setup(task), verifier_version=self.id)

    def reference_actions(self, task: Task) -> list[str]:
        return list(self.reference(task)) + [done()]

    def solve(self, task: Task) -> str:
        return done()

    def probes(self, task: Task) -> dict[str, list[str]]:
        common = {k: v for k, v in common_probes(task).items() if k not in self.skip_common}
        return {**self.own_probes(task), **common}
