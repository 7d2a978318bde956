"""Editing files in place: find and replace, applying a patch, configuration edits.

Domains (each one's description is its ``*_DOC`` text below): ``find_replace``, ``apply_patch``, ``config_edit``.
"""

from __future__ import annotations

import difflib
import random
import re

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

from ._kit import TreeDomain, shell, text_of, tree_task, write


# -------------------- find_replace
REPLACE_DOC = """Find and replace across files: ``terminal.find_replace-v1``.

Trains: ``sed -i`` with word boundaries over a set of files chosen with ``find``/``grep -l``.
``app/`` holds config and source files mentioning a host name; every whole-word occurrence
of the old name must become the new one in the asked files. Difficulty 2 adds look-alikes
that must not change (``<old>_backup``, ``pre<old>``); difficulty 3 restricts the change to
``*.conf`` files (``*.md`` notes mentioning the name stay as they are) and to lines that
are not comments (``#`` first).

Reward: one ``file`` predicate per file that must change (exact new content), guarded by
every file that must not change left unchanged.

Probes (≤ 0.05): ``naive_sed`` (difficulty ≥ 2: substring replace, no word boundary, all files),
``delete_lines`` (lines with the name deleted), plus the terminal and generic probes.
"""

HOSTS = ["dbhost", "cachebox", "mailer", "queuesrv", "authnode", "logsink"]
REPLACE_KEYS = ["url", "backup", "primary", "fallback", "mirror", "target"]


def _file(rng, old: str, d: int, comment_ok: bool) -> str:
    lines = []
    for k in rng.sample(REPLACE_KEYS, 4):
        r = rng.random()
        if d >= 2 and r < 0.25:
            lines.append(f"{k} = {old}_backup:{rng.randint(1000, 9999)}")
        elif d >= 2 and r < 0.4:
            lines.append(f"{k} = pre{old}.local")
        elif comment_ok and r < 0.55:
            lines.append(f"# {k} used to be {old}")
        else:
            lines.append(f"{k} = {old}:{rng.randint(1000, 9999)}")
    return "\n".join(lines) + "\n"


def _replace(text: str, old: str, new: str, d: int) -> str:
    pat = re.compile(rf"(?<![A-Za-z0-9_]){old}(?![A-Za-z0-9_])" if d >= 2 else re.escape(old))
    return "".join(ln if d >= 3 and ln.startswith("#") else pat.sub(new, ln)
                   for ln in text.splitlines(keepends=True))


def _build_replace(rng: random.Random, d: int):
    old, new = rng.sample(HOSTS, 2)
    files = {}
    for i, name in enumerate(rng.sample(["web", "worker", "cron", "api", "batch"], 2 + d)):
        files[f"app/{name}.conf"] = _file(rng, old, d, d >= 3)
        if i % 2 == 0:
            f = f"app/sub/{name}.conf"
            files[f] = _file(rng, old, d, d >= 3)
    if d >= 3:
        files["app/NOTES.md"] = f"We moved off {old} last year.\n"
    targets = {p: _replace(c, old, new, d) for p, c in files.items() if p.endswith(".conf")}
    targets = {p: c for p, c in targets.items() if c != files[p]}
    preds = [{"op": "file", "path": p, "content": c} for p, c in targets.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in targets]
    text = f"Replace the host name {old} with {new} in every file under app/ (sub-folders included)"
    if d >= 2:
        text += f", whole words only ({old}_backup or pre{old} are other names and stay)"
    if d >= 3:
        text += "; only in *.conf files, and not on comment lines (lines starting with #)"
    return tree_task(ID_REPLACE, d, text + ". Change nothing else.", files, preds,
                     hidden={"targets": targets, "old": old, "new": new})


def _reference_replace(task):
    # Up to 4 files per turn: level 3 has up to 8 files to change, and one write per turn
    # would not finish within the default 8-turn episode (``episode.max_turns``).
    writes = [write(p, c) for p, c in task.hidden["targets"].items()]
    return ["\n".join(writes[i:i + 4]) for i in range(0, len(writes), 4)]


def _probes_replace(task):
    o, n = task.hidden["old"], task.hidden["new"]
    naive = {"naive_sed": [shell(f"grep -rl {o} app | xargs sed -i 's/{o}/{n}/g'")]} if task.difficulty >= 2 else {}
    return {**naive, "delete_lines": [shell(f"grep -rl {o} app | xargs sed -i '/{o}/d'")]}


ID_REPLACE = "terminal.find_replace-v1"
register_domain(TreeDomain(ID_REPLACE, _build_replace, _reference_replace, _probes_replace,
                           description=REPLACE_DOC))


# -------------------- apply_patch
PATCH_DOC = """Apply a unified diff without git: ``terminal.apply_patch-v1``.

Trains: ``patch -p1 < fix.diff`` (strip level, dry runs, offsets) and checking the result.
``fix.diff`` (``a/``/``b/`` prefixes) changes files of ``src/``. Difficulty 1: one file, one
hunk; 2: two or three files, several hunks; 3: the files have drifted since the diff was made
(lines inserted above the hunks, so ``patch`` applies them at an offset) and one diff is for
a file that must be created.

Reward: one predicate per patched file: the exact expected content, *and* no ``.orig`` /
``.rej`` left next to it; guarded by the files the diff does not touch, and the diff itself,
left unchanged.

Probes (≤ 0.05): ``reverse_patch`` (``patch -R``), ``first_file_only_wrong_strip``
(``patch -p0``: nothing applies), ``delete_patched_files``, plus the terminal and generic
probes.
"""

WORDS = ["total", "count", "limit", "offset", "scale", "ratio", "index", "width"]


def _source(rng, n: int) -> list[str]:
    return [f"{rng.choice(WORDS)}_{i} = {rng.randint(0, 999)}\n" for i in range(n)]


def _edit(rng, lines: list[str], hunks: int) -> list[str]:
    out = list(lines)
    for k in sorted(rng.sample(range(2, len(lines) - 2), hunks), reverse=True):
        out[k] = out[k].replace(" = ", " = 1 + ")
        if rng.random() < 0.5:
            out.insert(k + 1, f"# checked {rng.randint(0, 99)}\n")
    return out


def _build_patch(rng: random.Random, d: int):
    files, after, diffs = {}, {}, []
    for name in rng.sample(["config", "model", "views", "tasks", "utils"], 1 if d == 1 else rng.randint(2, 3)):
        path = f"src/{name}.py"
        before = _source(rng, rng.randint(10, 16) + 8 * (d >= 2))
        new = _edit(rng, before, 1 if d == 1 else 2)
        diffs += difflib.unified_diff(before, new, f"a/{path}", f"b/{path}")
        drift = [f"# header {rng.randint(0, 9)}\n" for _ in range(rng.randint(2, 4))] if d >= 3 else []
        files[path] = "".join(drift + before)
        after[path] = "".join(drift + new)
    if d >= 3:
        created = [f"VERSION = '{rng.randint(1, 9)}.{rng.randint(0, 9)}'\n"]
        diffs += difflib.unified_diff([], created, "/dev/null", "b/src/version.py")
        after["src/version.py"] = "".join(created)
    files["src/untouched.py"] = "".join(_source(rng, 5))
    files["fix.diff"] = "".join(diffs)
    preds = [{"op": "all", "of": [{"op": "file", "path": p, "content": c},
                                  {"op": "absent", "path": p + ".orig"}, {"op": "absent", "path": p + ".rej"}]}
             for p, c in after.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in after]
    text = ("Apply the unified diff fix.diff (paths prefixed a/ and b/) to the files in /work. Leave no .orig or "
            ".rej files behind and keep fix.diff.")
    return tree_task(ID_PATCH, d, text, files, preds, hidden={"after": after})


def _reference_patch(task):
    return [shell("patch -p1 --no-backup-if-mismatch < fix.diff && find src -name '*.orig' -delete")]


def _probes_patch(task):
    return {"reverse_patch": [shell("patch -R -p1 -f --no-backup-if-mismatch < fix.diff; rm -f src/*.rej src/*.orig")],
            "first_file_only_wrong_strip": [shell("patch -p0 -f < fix.diff; rm -f src/*.rej src/*.orig")],
            "delete_patched_files": [shell(" ; ".join(f"rm -f {p}" for p in task.hidden["after"]))]}


ID_PATCH = "terminal.apply_patch-v1"
register_domain(TreeDomain(ID_PATCH, _build_patch, _reference_patch, _probes_patch, description=PATCH_DOC))


# -------------------- config_edit
CONFIG_DOC = """Edit key=value configuration files in place: ``terminal.config_edit-v1``.

Trains: ``sed -i 's/^key=.*/key=value/'``, appending missing keys, deleting keys, while
preserving comments, blank lines, order and every other setting. ``conf/app.env`` holds
``KEY=value`` lines and comments. Difficulty 1: change 2 existing keys; 2: also add 1-2 new
keys (appended at the end, in the given order) and delete one key; 3: a second file
``conf/db.ini`` with ``[sections]`` where keys must be set inside the named section only (the
same key exists in another section) — plus commented-out look-alikes (``# KEY=old``) that
must stay commented.

Reward: per file, ``changes`` = the fraction of asked edits present (key holds the new value
/ new key present / deleted key gone), times ``preserved`` = 1 when every other line is
unchanged and in order (the expected file is exact); value = mean over edits of both files,
each edit 0 when its file is not preserved. Guarded by ``conf/README`` left unchanged.

Probes (≤ 0.05): ``rewrite_only_asked`` (the file replaced by just the asked keys),
``append_duplicates`` (new lines appended, old values left: first match wins), plus the
terminal and generic probes.
"""

CONFIG_KEYS = ["PORT", "HOST", "WORKERS", "TIMEOUT", "LOG_LEVEL", "CACHE_MB", "RETRIES", "REGION", "DEBUG", "MODE"]


def _val(rng) -> str:
    return rng.choice([str(rng.randint(1, 9999)), rng.choice(["on", "off", "info", "eu-west", "fast"])])


def _env(rng, d: int) -> tuple[str, str, list[str]]:
    keys = rng.sample(CONFIG_KEYS, 6)
    vals = {k: _val(rng) for k in keys}
    lines = ["# application settings"]
    for i, k in enumerate(keys[:5]):
        if i == 2:
            lines.append("")
        if d >= 3 and i == 1:
            lines.append(f"# {k}=legacy")
        lines.append(f"{k}={vals[k]}")
    change = rng.sample(keys[:5], 2)
    new_vals = {k: _val(rng) + "x" for k in change}
    out = [f"{ln.split('=')[0]}={new_vals[ln.split('=')[0]]}" if not ln.startswith("#") and ln.split("=")[0] in new_vals
           else ln for ln in lines]
    asks = [f"set {k} to {new_vals[k]}" for k in change]
    if d >= 2:
        gone = rng.choice([k for k in keys[:5] if k not in change])
        out = [ln for ln in out if ln.split("=")[0] != gone]
        add = {keys[5]: _val(rng)}
        out += [f"{k}={v}" for k, v in add.items()]
        asks += [f"delete {gone}", f"add {keys[5]}={add[keys[5]]}"]
    return "\n".join(lines) + "\n", "\n".join(out) + "\n", asks


def _ini(rng) -> tuple[str, str, list[str]]:
    key, v1, v2, new = rng.choice(["host", "port", "pool"]), _val(rng), _val(rng), _val(rng) + "y"
    sec = rng.choice(["primary", "replica"])
    other = "replica" if sec == "primary" else "primary"
    vals = {sec: v1, other: v2}
    block = lambda s, v: [f"[{s}]", f"{key} = {v}", f"user = app_{s}", ""]  # noqa: E731
    before = block("primary", vals["primary"]) + block("replica", vals["replica"])
    vals[sec] = new
    after = block("primary", vals["primary"]) + block("replica", vals["replica"])
    return "\n".join(before), "\n".join(after), [f"in conf/db.ini set {key} = {new} in section [{sec}] only"]


def _build_config(rng: random.Random, d: int):
    env, env_after, asks = _env(rng, d)
    files, after, edits = {"conf/app.env": env, "conf/README": "do not edit\n"}, {"conf/app.env": env_after}, {"conf/app.env": asks}
    if d >= 3:
        ini, ini_after, ini_asks = _ini(rng)
        files["conf/db.ini"], after["conf/db.ini"], edits["conf/db.ini"] = ini, ini_after, ini_asks
    text = ("Edit conf/app.env in place: " + "; ".join(asks)
            + (" (new keys go at the end, in this order)" if d >= 2 else "")
            + (f"; and {edits['conf/db.ini'][0]}" if d >= 3 else "")
            + ". Keep every other line (comments, blank lines, other keys) exactly as it is, in order.")
    preds = [{"op": "file", "path": "conf/README", "content": "do not edit\n", "guard": True}]
    return tree_task(ID_CONFIG, d, text, files, preds, hidden={"after": after, "edits": edits})


def _edit_done(lines: list[str], edit: str) -> bool:
    if edit.startswith("delete "):
        k = edit.split()[1]
        return not any(ln.split("=")[0].strip() == k for ln in lines)
    if edit.startswith("in conf/db.ini"):
        words = edit.split()
        want, sec = f"{words[3]} = {words[5]}", words[8][1:-1]
        cur = None
        for ln in lines:
            cur = ln[1:-1] if ln.startswith("[") else cur
            if cur == sec and ln == want:
                return True
        return False
    k, v = (edit.split()[1], edit.split()[3]) if edit.startswith("set") else edit.split()[1].split("=", 1)
    return f"{k}={v}" in lines


def _verify(env, trajectory):
    h, extra = env.task.hidden, {}
    for path, want in h["after"].items():
        got = _norm_lines(text_of(env, path) or "")
        preserved = float(got == _norm_lines(want))
        for i, e in enumerate(h["edits"][path]):
            extra[f"{path.split('/')[-1]}:{i}"] = float(_edit_done(got, e)) * preserved
    return fs_score(h["predicates"], collect_state(env.sandbox), ID_CONFIG, extra=extra)


def _reference_config(task):
    return [write(p, c) for p, c in task.hidden["after"].items()]


def _probes_config(task):
    after = task.hidden["after"]["conf/app.env"]
    asked = "".join(ln + "\n" for ln in after.splitlines() if ln and not ln.startswith("#"))[:200]
    return {"rewrite_only_asked": [write("conf/app.env", asked)],
            "append_duplicates": [write("conf/app.env", task.public["files"]["conf/app.env"] + after)]}


ID_CONFIG = "terminal.config_edit-v1"
register_domain(TreeDomain(ID_CONFIG, _build_config, _reference_config, _probes_config, verifier=_verify,
                           description=CONFIG_DOC))
