"""Edit key=value configuration files in place: ``terminal.config_edit-v1``.

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

from __future__ import annotations

import random

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import _norm_lines, collect_state, fs_score

from ._kit import TreeDomain, text_of, tree_task, write

KEYS = ["PORT", "HOST", "WORKERS", "TIMEOUT", "LOG_LEVEL", "CACHE_MB", "RETRIES", "REGION", "DEBUG", "MODE"]


def _val(rng) -> str:
    return rng.choice([str(rng.randint(1, 9999)), rng.choice(["on", "off", "info", "eu-west", "fast"])])


def _env(rng, d: int) -> tuple[str, str, list[str]]:
    keys = rng.sample(KEYS, 6)
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


def _build(rng: random.Random, d: int):
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
    return tree_task(DOMAIN_ID, d, text, files, preds, hidden={"after": after, "edits": edits})


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
    return fs_score(h["predicates"], collect_state(env.sandbox), DOMAIN_ID, extra=extra)


def _reference(task):
    return [write(p, c) for p, c in task.hidden["after"].items()]


def _probes(task):
    after = task.hidden["after"]["conf/app.env"]
    asked = "".join(ln + "\n" for ln in after.splitlines() if ln and not ln.startswith("#"))[:200]
    return {"rewrite_only_asked": [write("conf/app.env", asked)],
            "append_duplicates": [write("conf/app.env", task.public["files"]["conf/app.env"] + after)]}


DOMAIN_ID = "terminal.config_edit-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
