"""A simulated file-system API: ``tools.fs_organize-v1``.

Trains: tidying a folder whose contents are hidden, through ``list_dir``, ``read_file``,
``make_dir``, ``move`` and ``delete`` (a pure-Python tree, not a sandbox): list the inbox,
create the target folder, move files by extension, delete temporary files, and (level 3)
read text files to delete the drafts among them. The API refuses moves into missing folders,
existing destinations and deleting non-empty folders, with readable errors.

Difficulty: 1 = move the ``.log`` files; 2 = also delete the ``.tmp`` files; 3 = also delete
every ``.txt`` file whose content starts with ``DRAFT`` (read each ``.txt`` first).

Reward: validity² × (0.3·calls + 0.7·state·precision²·[all calls made]); ``state_ok`` compares
the whole tree after the episode with the expected one (paths and contents).

Probes (≤ 0.05): the kit's set (:mod:`._kit`), plus ``delete_everything`` (every listed
file deleted). Partial credit, not a probe: listing only then ``done`` keeps the calls part
(0.3 × recall).
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer, format_calls

from ._kit import ApiDomain, chunk, Plan, S, tool

STEMS = ["build", "nightly", "deploy", "auth", "cache", "notes", "plan", "todo", "ideas", "minutes",
         "report", "sync", "backup", "draft", "agenda", "errors"]


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _list(st, path):
    fs = st["fs"]
    if fs.get(path, "") is not None:
        raise ValueError(f"{path!r} is not a directory")
    pre = path.rstrip("/") + "/"
    return sorted(p[len(pre):] + ("/" if fs[p] is None else "") for p in fs
                  if p.startswith(pre) and p != pre and "/" not in p[len(pre):])


def _read(st, path):
    c = st["fs"].get(path)
    if not isinstance(c, str):
        raise ValueError(f"{path!r} is not a file")
    return c


def _mkdir(st, path):
    if path in st["fs"]:
        raise ValueError(f"{path!r} exists")
    if st["fs"].get(_parent(path), "") is not None:
        raise ValueError(f"parent of {path!r} does not exist")
    st["fs"][path] = None
    return "ok"


def _move(st, source, destination):
    fs = st["fs"]
    if not isinstance(fs.get(source), str):
        raise ValueError(f"{source!r} is not a file")
    if destination in fs:
        raise ValueError(f"{destination!r} exists (give the full destination path)")
    if fs.get(_parent(destination), "") is not None:
        raise ValueError(f"folder {_parent(destination)!r} does not exist")
    fs[destination] = fs.pop(source)
    return "ok"


def _delete(st, path):
    fs = st["fs"]
    if path not in fs:
        raise ValueError(f"{path!r} does not exist")
    if fs[path] is None and any(p.startswith(path + "/") for p in fs):
        raise ValueError(f"{path!r} is not empty")
    del fs[path]
    return "ok"


ID = "tools.fs_organize-v1"


def _tools(st: dict[str, Any]):
    return [tool("list_dir", "Names in a folder (folders end with /).", {"path": S}, _list, st),
            tool("read_file", "Content of a file.", {"path": S}, _read, st),
            tool("make_dir", "Create a folder (its parent must exist).", {"path": S}, _mkdir, st),
            tool("move", "Move a file to a full destination path.", {"source": S, "destination": S}, _move, st),
            tool("delete", "Delete a file or an empty folder.", {"path": S}, _delete, st)]


def _plan(rng: random.Random, difficulty: int) -> Plan:
    stems = rng.sample(STEMS, 8)
    exts = ["log", "log", "md", "csv"] + (["tmp", "tmp"] if difficulty >= 2 else ["csv", "md"])
    exts += ["txt", "txt"] if difficulty == 3 else ["md", "log"]
    fs: dict[str, Any] = {"/": None, "/inbox": None, "/archive": None, "/home": None,
                          "/home/readme.md": "hello"}
    for s, e in zip(stems, exts):
        body = f"{s} {rng.randint(1, 999)}"
        if e == "txt":
            body = ("DRAFT " if rng.random() < 0.5 else "FINAL ") + body
        fs[f"/inbox/{s}.{e}"] = body
    if difficulty == 3 and not any(str(v).startswith("DRAFT") for v in fs.values()):
        txt = next(p for p in fs if p.endswith(".txt"))
        fs[txt] = "DRAFT " + fs[txt][6:]
    target = rng.choice(["/archive/logs", "/archive/old-logs"])
    files = sorted(p for p in fs if p.startswith("/inbox/"))
    logs = [p for p in files if p.endswith(".log")]
    txts = [p for p in files if p.endswith(".txt")]
    drafts = [p for p in txts if fs[p].startswith("DRAFT")]
    tmps = [p for p in files if p.endswith(".tmp")]
    rules = [f"move every .log file from /inbox into {target} (create that folder; /archive exists), "
             "keeping file names"]
    if difficulty >= 2:
        rules.append("delete every .tmp file in /inbox")
    if difficulty == 3:
        rules.append("delete every .txt file in /inbox whose content starts with DRAFT")
    prompt = "Tidy the file system: " + "; ".join(rules) + ". Leave everything else. Reply ok when finished."
    turns = [[("list_dir", {"path": "/inbox"})]]
    if txts:
        turns.append([("read_file", {"path": p}) for p in txts])
    work = [("make_dir", {"path": target})] + [("move", {"source": p, "destination": target + p[6:]}) for p in logs]
    work += [("delete", {"path": p}) for p in tmps + drafts]
    turns += chunk(work)
    return Plan(prompt, {"fs": fs}, turns, "ok")


def _extra_probes(task):
    files = [p for p in task.hidden["world"]["fs"] if p.startswith("/inbox/")]
    dels = [("delete", {"path": p}) for p in files]
    return {"delete_everything": [format_calls(("list_dir", {"path": "/inbox"}))]
            + [format_calls(*dels[i:i + 8]) for i in range(0, len(dels), 8)] + [format_answer("ok")]}


DOMAIN = register_domain(ApiDomain(
    ID, _tools, _plan, description=__doc__, extra_probes=_extra_probes, result="state"))
