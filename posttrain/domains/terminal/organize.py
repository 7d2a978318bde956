"""Organising a file tree: moving, renaming, deduplicating and creating files and folders.

Domains (each one's description is its ``*_DOC`` text below): ``organize``, ``rename``, ``dedupe``, ``dir_spec``.
"""

from __future__ import annotations

import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain

from ._kit import TreeDomain, done, files_task, shell, tree_task


# -------------------- organize
ORGANIZE_DOC = """Reorganise files: ``terminal.organize-v1`` — sort an inbox into folders by file type.

Trains: moving files with the shell according to a rule, without losing or altering them.
``inbox/`` holds 4-10 files with mixed extensions; each must end up in a folder named after
its extension (``inbox/a.csv`` → ``csv/a.csv``). Difficulty 2 lower-cases the file names on
the way (``inbox/Notes.TXT`` → ``txt/notes.txt``); difficulty 3 also deletes every ``.tmp``
file and removes the emptied ``inbox``.

Reward: fraction of predicates holding: one ``moved`` predicate per file (content at the new
path *and* the old path gone), plus at difficulty 3 one clean-up predicate (no ``.tmp`` file,
no inbox, *and* every file moved — so deleting everything earns nothing).

Probes (≤ 0.05): ``copy_not_move`` (copies, sources left behind), ``wipe_tree``,
``touch_expected`` (empty files at the expected paths), ``chmod_all``, ``claim_success``,
plus the generic ones.
"""

EXTS = ["txt", "csv", "log", "md", "json", "py"]
STEMS = ["alpha", "beta", "notes", "report", "data", "draft", "final", "todo", "plan", "idea", "misc", "q3"]


ID_ORGANIZE = "terminal.organize-v1"


def _build_organize(rng: random.Random, difficulty: int) -> Task:
    n = min(rng.randint(4, 6 + 2 * difficulty), len(STEMS) - 2)  # d3 also needs 2 tmp stems
    files, preds, moves = {}, [], []
    stems = rng.sample(STEMS, n)
    for stem in stems:
        ext = rng.choice(EXTS)
        name = f"{stem}.{ext}"
        if difficulty >= 2 and rng.random() < 0.6:
            name = f"{stem.capitalize()}.{ext.upper()}"
        src = f"inbox/{name}"
        files[src] = f"{stem} {rng.randint(0, 10**6)}\n"
        dst = f"{ext}/{name.lower() if difficulty >= 2 else name}"
        preds.append({"op": "moved", "src": src, "dst": dst, "content": files[src]})
        moves.append((src, dst))
    rule = "Move every file of inbox/ into a folder named after its extension (inbox/a.csv -> csv/a.csv)"
    if difficulty >= 2:
        rule += ", lower-casing file names and extensions (inbox/A.TXT -> txt/a.txt)"
    tmps = []
    if difficulty >= 3:
        for stem in rng.sample([s for s in STEMS if s not in stems], 2):
            tmps.append(f"inbox/{stem}.tmp")
            files[tmps[-1]] = "scratch\n"
        clean = [{"op": "absent", "path": t} for t in tmps] + [{"op": "absent", "path": "inbox"}]
        preds.append({"op": "all", "of": clean + list(preds)})
        rule += "; delete the .tmp files and then the empty inbox/ directory"
    return files_task(ID_ORGANIZE, difficulty, rule + ".", files, preds,
                      hidden={"moves": moves, "tmps": tmps})


def _script(task: Task, op: str = "mv") -> str:
    cmds = [f"mkdir -p '{d.rsplit('/', 1)[0]}' && {op} '{s}' '{d}'" for s, d in task.hidden["moves"]]
    if op == "mv" and task.hidden["tmps"]:
        cmds += [f"rm '{t}'" for t in task.hidden["tmps"]] + ["rmdir inbox"]
    return " && ".join(cmds)


def _reference_organize(task: Task) -> list[str]:
    return [shell(_script(task))]


def _probes_organize(task: Task) -> dict[str, list[str]]:
    return {"copy_not_move": [shell(_script(task, "cp")), done()]}


register_domain(TreeDomain(ID_ORGANIZE, _build_organize, _reference_organize, _probes_organize,
                           description=ORGANIZE_DOC))


# -------------------- rename
RENAME_DOC = """Rename files by a pattern: ``terminal.rename_pattern-v1``.

Trains: bulk renames with the shell (``mv`` in a loop, parameter expansion, ``printf``
padding). ``shots/`` holds camera files ``IMG_<n>.JPG`` plus files that must not be touched.
Difficulty 1: ``IMG_<n>.JPG`` → ``photo_<n>.jpg``; 2: the number zero-padded to 4 digits
(``IMG_7.JPG`` → ``photo_0007.jpg``); 3: names ``<name>_<MM>-<DD>-<YYYY>.txt`` →
``<YYYY>-<MM>-<DD>_<name>.txt`` as well (dates reordered), with decoys that only look alike.

Reward: one ``moved`` predicate per file to rename (the new name holds the original bytes and
the old name is gone, so copying earns nothing), guarded by every other file left unchanged.

Probes (≤ 0.05): ``copy_not_move`` (``cp`` instead of ``mv``), ``lowercase_only`` (names
lower-cased but not renamed), ``rename_everything`` (decoys renamed too: a guard fails), plus
the terminal and generic probes.
"""

WORDS = ["beach", "dinner", "hike", "party", "city", "garden", "snow", "lake", "museum"]


def _build_rename(rng: random.Random, d: int):
    files, renames = {}, {}
    for n in rng.sample(range(1, 999), rng.randint(3, 5 + d)):
        src = f"shots/IMG_{n}.JPG"
        dst = f"shots/photo_{n:04d}.jpg" if d >= 2 else f"shots/photo_{n}.jpg"
        files[src] = f"jpeg {n} {rng.random():.6f}\n"
        renames[src] = dst
    keep = {f"shots/notes_{rng.randint(1, 99)}.txt": "keep me\n", "shots/IMG_info.md": "not a photo\n"}
    rule = "rename every shots/IMG_<number>.JPG to shots/photo_<number>.jpg"
    if d >= 2:
        rule += " with the number zero-padded to 4 digits (IMG_7.JPG -> photo_0007.jpg)"
    if d >= 3:
        for w in rng.sample(WORDS, 3):
            mm, dd, yy = rng.randint(1, 12), rng.randint(1, 28), rng.randint(2015, 2024)
            src = f"shots/{w}_{mm:02d}-{dd:02d}-{yy}.txt"
            files[src] = f"{w} notes {rng.randint(0, 10**6)}\n"
            renames[src] = f"shots/{yy}-{mm:02d}-{dd:02d}_{w}.txt"
        keep[f"shots/{rng.choice(WORDS)}_{rng.randint(1, 12)}-2020.txt"] = "decoy\n"
        rule += ("; also rename every shots/<name>_<MM>-<DD>-<YYYY>.txt to shots/<YYYY>-<MM>-<DD>_<name>.txt"
                 " (2-digit month and day, 4-digit year; other files stay)")
    files.update(keep)
    preds = [{"op": "moved", "src": s, "dst": t, "content": files[s]} for s, t in renames.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in keep.items()]
    text = f"In /work: {rule}. Leave every other file as it is."
    return tree_task(ID_RENAME, d, text, files, preds, hidden={"renames": renames})


def _reference_rename(task):
    return [shell(" && ".join(f"mv '{s}' '{t}'" for s, t in task.hidden["renames"].items()))]


def _probes_rename(task):
    ren = task.hidden["renames"]
    return {
        "copy_not_move": [shell(" && ".join(f"cp '{s}' '{t}'" for s, t in ren.items()))],
        "lowercase_only": [shell(" && ".join(f"mv '{s}' '{s.lower()}.x'" for s in ren))],
        "rename_everything": [shell(" && ".join(f"mv '{s}' '{t}'" for s, t in ren.items())
                                    + " && cd shots && for f in notes_* IMG_info.md; do mv \"$f\" \"x_$f\"; done")],
    }


ID_RENAME = "terminal.rename_pattern-v1"
register_domain(TreeDomain(ID_RENAME, _build_rename, _reference_rename, _probes_rename,
                           description=RENAME_DOC))


# -------------------- dedupe
DEDUPE_DOC = """Deduplicate files by content: ``terminal.dedupe-v1``.

Trains: finding identical files (``md5sum``/``sha256sum`` + ``sort``/``uniq``) and deleting
all but one copy. ``media/`` (nested from difficulty 2) holds groups of byte-identical files
under different names, among unique files; of each group the copy whose path sorts first
(byte order) must be kept and the others deleted. Difficulty 3 adds near-duplicates (same
size, one byte different) that are *not* duplicates.

Reward: one ``all`` predicate per duplicate group (the keeper holds its content and every
other copy is gone), guarded by the unique files left unchanged.

Probes (≤ 0.05): ``keep_last`` (keeps the last copy of each group), ``delete_all_copies``
(every member of every group deleted), ``delete_by_size`` (everything sharing a size
deleted but the first: near-duplicates lost, a guard fails), plus the terminal and generic
probes.
"""

DEDUPE_NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "k", "m", "n", "p", "q", "r", "s", "t"]


def _build_dedupe(rng: random.Random, d: int):
    dirs = ["media"] + (["media/old", "media/new"] if d >= 2 else [])
    count = iter(range(10, 99))
    path = lambda: f"{rng.choice(dirs)}/{rng.choice(DEDUPE_NAMES)}{next(count)}.dat"  # noqa: E731
    files, groups, unique = {}, [], {}
    for g in range(d + 1):
        body = f"blob {g} {rng.getrandbits(48):012x}\n"
        members = sorted({path() for _ in range(rng.randint(2, 3))})
        if len(members) < 2:
            members.append(members[0].replace(".dat", "_copy.dat"))
        for m in members:
            files[m] = body
        groups.append(members)
    for _ in range(2 + d):
        p = path()
        unique[p] = f"blob u {rng.getrandbits(48):012x}\n"
    if d >= 3:  # near-duplicates of the first group's content
        base = files[groups[0][0]]
        unique[path()] = base[:-2] + ("x" if base[-2] != "x" else "y") + "\n"
    files.update(unique)
    preds = [{"op": "all", "of": [{"op": "file", "path": g[0], "content": files[g[0]]}]
              + [{"op": "absent", "path": m} for m in g[1:]]} for g in groups]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in unique.items()]
    text = ("Some files under media/ are byte-identical copies of each other. For each set of identical "
            "files keep only the one whose path sorts first (plain byte order) and delete the others. "
            "Do not change or delete any other file.")
    return tree_task(ID_DEDUPE, d, text, files, preds, hidden={"groups": groups})


def _rm(paths):
    return shell("rm -f " + " ".join(f"'{p}'" for p in paths))


def _reference_dedupe(task):
    return [_rm([m for g in task.hidden["groups"] for m in g[1:]])]


def _probes_dedupe(task):
    groups = task.hidden["groups"]
    sizes = "find media -type f -printf '%s %p\\n' | sort | awk 'seen[$1]++ {print $2}' | xargs rm -f"
    return {"keep_last": [_rm([m for g in groups for m in g[:-1]])],
            "delete_all_copies": [_rm([m for g in groups for m in g])],
            "delete_by_size": [shell(sizes)]}


ID_DEDUPE = "terminal.dedupe-v1"
register_domain(TreeDomain(ID_DEDUPE, _build_dedupe, _reference_dedupe, _probes_dedupe,
                           description=DEDUPE_DOC))


# -------------------- dir_spec
SPEC_DOC = """Create a directory structure from a spec: ``terminal.dir_spec-v1``.

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

SPEC_NAMES = ["app", "lib", "conf", "data", "docs", "bin", "tests", "assets", "web", "jobs", "share"]
FILES = ["main.py", "README", "settings.ini", "run.sh", "index.html", "notes.txt"]


def _tree(rng, d: int, depth: int, prefix: str, out: dict):
    for name in rng.sample(SPEC_NAMES, 2 if depth else rng.randint(2, 3)):
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


def _build_spec(rng: random.Random, d: int):
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
    return tree_task(ID_SPEC, d, text, {"spec.txt": spec}, preds, hidden={"tree": tree})


def _reference_spec(task):
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


def _probes_spec(task):
    tree = task.hidden["tree"]
    files = [f for n in tree.values() for f in n["files"]]
    return {"flat_files": [shell("mkdir -p out && " + " && ".join(f"echo x > 'out/{f.split('/')[-1]}'" for f in files))],
            "dirs_only": [shell(" && ".join(f"mkdir -p '{p}'" for p in tree) + " && " +
                                " && ".join(f": > '{f}'" for f in files))]}


ID_SPEC = "terminal.dir_spec-v1"
register_domain(TreeDomain(ID_SPEC, _build_spec, _reference_spec, _probes_spec, description=SPEC_DOC))
