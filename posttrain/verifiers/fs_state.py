"""File-system state verifier: predicates over a sandbox's final ``/work`` tree.

What it is: :func:`collect_state` reads a sandbox's tree once (kinds and permission bits via
``find -printf`` in the sandbox; contents through the sandbox's own ``read_file``, which never
follows links planted by the policy), and :func:`evaluate` checks JSON predicates on it:

- ``{"op": "file", "path", "content"}`` — a regular file with exactly this content
  (``"lines": true`` compares lines with trailing whitespace and a final newline ignored);
- ``{"op": "moved", "src", "dst", "content"}`` — ``dst`` holds the content and ``src`` is gone
  (one predicate, so deleting the sources alone earns nothing);
- ``{"op": "absent", "path"}``, ``{"op": "dir", "path"}``;
- ``{"op": "unchanged", "path"}`` — nothing at or under ``path`` changed since the snapshot
  given to :func:`collect_state` (e.g. the tests, as a guard);
- ``{"op": "all", "of": [...]}`` — 1 when every listed predicate holds (a clean-up step that
  only counts together with the work it cleans up after, so wiping the tree earns nothing);
- ``{"op": "mode", "path", "mode": "755"}`` — a regular file or directory with these bits;
- ``{"op": "lines_match", "path", "lines": [...]}`` — *graded*: expected lines found in
  order / max(expected, produced) lines, so padding a file with candidates lowers it;
- any predicate with ``"guard": true`` is a condition that must hold (an input left
  unchanged): if a guard fails the whole score is 0.

:func:`fs_score` turns the results into a Score: the mean of the non-guard predicates (named
components ``p0``, ``p1``... with their descriptions in ``reason``), times the guards.

Guarantees: pure reads (nothing in the sandbox is changed); any path that is a link, a
FIFO or unreadable counts as absent for ``file``/``moved``; a state that could not be read
whole (listing truncated, diff past its limits) scores 0, never passes on what it missed. Domains construct predicates so
that none holds in the initial state (an episode that does nothing scores 0).

Does not: check owners or timestamps, or run anything the policy wrote (see
:func:`run_script` for output checks, which run in a fresh sandbox).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Mapping, Sequence

from posttrain.core.types import Score


@dataclass(frozen=True)
class Entry:
    kind: str  # f (file), d (dir), l (link), other letters as find prints them
    mode: str  # permission bits in octal, e.g. "644"


class FsState:
    """A lazily read view of a sandbox's tree (contents are read on demand, once).

    ``incomplete`` names why the view is partial (the listing was truncated or failed, or
    the diff hit its limits): :func:`fs_score` then scores 0, because a predicate such as
    ``absent`` or ``unchanged`` would otherwise hold for whatever the listing missed."""

    def __init__(self, sandbox: Any, entries: Mapping[str, Entry], incomplete: str | None = None,
                 changes: Sequence[Any] | None = None):
        self._sb, self.entries = sandbox, dict(entries)
        self.incomplete, self.changes = incomplete, changes
        self._content: dict[str, str | None] = {}

    def content(self, path: str) -> str | None:
        if path not in self._content:
            e = self.entries.get(path)
            text = None
            if e is not None and e.kind == "f":
                try:
                    text = self._sb.read_file(path, max_bytes=1 << 20).decode("utf-8", "replace")
                except Exception:  # unreadable, swapped for a link, too large: not a file
                    text = None
            self._content[path] = text
        return self._content[path]


def collect_state(sandbox: Any, since: Any = None) -> FsState:
    """The tree's entries; with ``since`` (a snapshot id) also ``sandbox.diff(since)`` for
    ``unchanged`` predicates. A truncated or failed listing, or a diff past its limits
    (``TreeLimitExceeded``), marks the state ``incomplete``."""
    from posttrain.sandbox.treewalk import TreeLimitExceeded

    res = sandbox.exec(["find", ".", "-mindepth", "1", "-printf", "%P\\t%y\\t%m\\n"], timeout=10)
    incomplete = None
    if res.status != "ok" or res.stdout_truncated:
        incomplete = f"listing the tree failed ({res.status}{', truncated' if res.stdout_truncated else ''})"
    entries = {}
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            entries[parts[0]] = Entry(parts[1], parts[2])
    changes = None
    if since is not None:
        try:
            changes = sandbox.diff(since)
        except TreeLimitExceeded as exc:
            incomplete = incomplete or f"diff since the start incomplete ({exc})"
    return FsState(sandbox, entries, incomplete, changes)


def _norm_lines(text: str) -> list[str]:
    return [ln.rstrip() for ln in text.rstrip("\n").split("\n")] if text.strip() else []


def check(pred: Mapping[str, Any], st: FsState) -> float:
    """The value of one predicate in [0, 1] (unknown ops are 0)."""
    op = pred.get("op")
    if op == "file":
        got = st.content(pred["path"])
        if got is None:
            return 0.0
        if pred.get("lines"):
            return float(_norm_lines(got) == _norm_lines(pred["content"]))
        return float(got == pred["content"])
    if op == "moved":
        return float(st.content(pred["dst"]) == pred["content"] and pred["src"] not in st.entries)
    if op == "absent":
        return float(pred["path"] not in st.entries)
    if op == "dir":
        e = st.entries.get(pred["path"])
        return float(e is not None and e.kind == "d")
    if op == "mode":
        e = st.entries.get(pred["path"])
        return float(e is not None and e.kind in ("f", "d") and e.mode == pred["mode"])
    if op == "unchanged":  # nothing at or under the path changed since the snapshot
        if st.changes is None:
            return 0.0
        root = pred["path"].strip("/")
        return float(not any(c.path == root or c.path.startswith(root + "/") for c in st.changes))
    if op == "all":
        return float(all(check(q, st) >= 1.0 for q in pred["of"]))
    if op == "lines_match":
        got = st.content(pred["path"])
        if got is None:
            return 0.0
        want, have = list(pred["lines"]), _norm_lines(got)
        j = hits = 0
        for line in have:  # expected lines found in order
            if j < len(want) and line == want[j]:
                hits, j = hits + 1, j + 1
        return hits / max(len(want), len(have), 1)
    return 0.0


def describe(pred: Mapping[str, Any]) -> str:
    keys = [k for k in ("path", "src", "dst", "mode") if k in pred]
    return f"{pred.get('op')}(" + ", ".join(f"{pred[k]}" for k in keys) + ")"


def fs_score(predicates: Sequence[Mapping[str, Any]], st: FsState, version: str,
             extra: Mapping[str, float] | None = None) -> Score:
    """Mean of the non-guard predicates (and ``extra`` values), zero when a guard fails or
    the state is incomplete."""
    if st.incomplete:
        return Score(0.0, components={"complete": (0.0, 0.0)}, passed=0,
                     total=sum(not p.get("guard") for p in predicates) + len(extra or {}),
                     reason=f"file-system state incomplete: {st.incomplete}", verifier_version=version)
    values, failed_guards, comps = [], [], {}
    for i, p in enumerate(predicates):
        v = check(p, st)
        if p.get("guard"):
            if v < 1.0:
                failed_guards.append(describe(p))
            continue
        values.append(v)
        comps[f"p{len(values) - 1}"] = (v, 1.0)
    for name, v in (extra or {}).items():
        values.append(v)
        comps[name] = (v, 1.0)
    mean = sum(values) / len(values) if values else 0.0
    if failed_guards:
        return Score(0.0, components={**comps, "guards": (0.0, 0.0)},
                     reason=f"guard failed: {', '.join(failed_guards[:3])}", verifier_version=version)
    held = sum(v >= 1.0 for v in values)
    missing = [describe(p) for p in predicates if not p.get("guard") and check(p, st) < 1.0]
    return Score(mean, components={**comps, "guards": (1.0, 0.0)}, passed=held, total=len(values),
                 reason=f"{held}/{len(values)} predicates hold" +
                        (f"; not: {', '.join(missing[:4])}" if missing else ""),
                 verifier_version=version)


def run_script(files: Mapping[str, str], cmd: Sequence[str],
               sandbox_factory: Callable[[], ContextManager[Any]], timeout: float = 10.0) -> tuple[int | None, str]:
    """(exit code, stdout) of ``cmd`` in a fresh sandbox holding only ``files``."""
    with sandbox_factory() as sb:
        for path, text in files.items():
            sb.write_file(path, text)
        res = sb.exec(list(cmd), timeout=timeout, cpu_time=timeout)
        return res.exit_code, res.stdout
