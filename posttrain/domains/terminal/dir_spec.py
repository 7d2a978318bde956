"""Create a directory structure from a spec: ``terminal.dir_spec-v1``.

Trains: reading an indented tree spec and realising it with ``mkdir -p``, ``printf`` and
``chmod``. ``spec.txt`` lists directories (``name/``, indented two spaces per level) and
files (``name = content``). Difficulty 1: two levels; 2: three levels with empty leaf
directories; 3: also modes (``name/ [700]``, ``name = content [755]``).

Reward: one ``all`` predicate per directory of the spec: the directory exists (with its mode
at difficulty 3) and each file directly in it holds its content (and mode) — so touching
the expected paths, or making directories alone, earns nothing; an empty leaf directory is
part of its parent's predicate. Guarded by ``spec.txt`` left unchanged.

Probes (≤ 0.05): ``flat_files`` (every file created at the top level), ``dirs_only`` (only
the folders with files, files left empty), plus the terminal and generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task

NAMES = ["app", "lib", "conf", "data", "docs", "bin", "tests", "assets", "web", "jobs", "share"]
FILES = ["main.py", "README", "settings.ini", "run.sh", "index.html", "notes.txt"]


def _tree(rng, d: int, depth: int, prefix: str, out: dict):
    for name in rng.sample(NAMES, 2 if depth else rng.randint(2, 3)):
        path = f"{prefix}{name}"
        if path in out:
            continue
        leaf_empty = d >= 2 and depth == d - 1 and rng.random() < 0.4
        files = {} if leaf_empty else {f"{path}/{f}": f"{f.split('.')[0]} {rng.randint(0, 999)}"
                                       for f in rng.sample(FILES, rng.randint(1, 2))}
        fmodes = {f: rng.choice(["600", "755", "644"]) for f in files} if d >= 3 else {}
        out[path] = {"files": files, "mode": rng.choice(["700", "750", "755"]) if d >= 3 else None,
                     "fmodes": fmodes}
        if depth < d - 1 and not leaf_empty:
            _tree(rng, d, depth + 1, path + "/", out)


def _spec(tree: dict) -> str:
    lines = []
    for path in sorted(tree):
        node, depth = tree[path], path.count("/")
        mode = f" [{node['mode']}]" if node["mode"] else ""
        lines.append("  " * depth + path.split("/")[-1] + "/" + mode)
        for f, c in sorted(node["files"].items()):
            fm = f" [{node['fmodes'][f]}]" if node["fmodes"] else ""
            lines.append("  " * (depth + 1) + f"{f.split('/')[-1]} = {c}{fm}")
    return "\n".join(lines) + "\n"


def _build(rng: random.Random, d: int):
    tree: dict = {}
    _tree(rng, d, 0, "out/", tree)
    spec = _spec({p.removeprefix("out/"): v for p, v in tree.items()})
    groups: dict[str, list] = {}
    for path, node in sorted(tree.items()):
        of = [{"op": "dir", "path": path}] + ([{"op": "mode", "path": path, "mode": node["mode"]}] if node["mode"] else [])
        for f, c in node["files"].items():
            of.append({"op": "file", "path": f, "content": c + "\n"})
            if node["fmodes"]:
                of.append({"op": "mode", "path": f, "mode": node["fmodes"][f]})
        parent = path.rsplit("/", 1)[0]
        if not node["files"] and parent in groups:  # an empty leaf counts with its parent
            groups[parent].extend(of)
        else:
            groups[path] = of
    preds = [{"op": "all", "of": of} for of in groups.values()]
    preds.append({"op": "file", "path": "spec.txt", "content": spec, "guard": True})
    text = ("Create under out/ the tree described in spec.txt: 'name/' is a directory (children indented two "
            "more spaces), 'name = text' a file whose content is text plus a newline"
            + ("; a [NNN] suffix is the entry's permission mode" if d >= 3 else "") + ".")
    return tree_task(DOMAIN_ID, d, text, {"spec.txt": spec}, preds, hidden={"tree": tree})


def _reference(task):
    cmds = []
    for path, node in sorted(task.hidden["tree"].items()):
        cmds.append(f"mkdir -p '{path}'")
        for f, c in node["files"].items():
            cmds.append(f"printf '%s\\n' '{c}' > '{f}'")
            if node["fmodes"]:
                cmds.append(f"chmod {node['fmodes'][f]} '{f}'")
    for path, node in sorted(task.hidden["tree"].items(), reverse=True):
        if node["mode"]:
            cmds.append(f"chmod {node['mode']} '{path}'")
    return [shell(" && ".join(cmds))]


def _probes(task):
    tree = task.hidden["tree"]
    files = [f for n in tree.values() for f in n["files"]]
    return {"flat_files": [shell("mkdir -p out && " + " && ".join(f"echo x > 'out/{f.split('/')[-1]}'" for f in files))],
            "dirs_only": [shell(" && ".join(f"mkdir -p '{p}'" for p in tree) + " && " +
                                " && ".join(f": > '{f}'" for f in files))]}


DOMAIN_ID = "terminal.dir_spec-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
