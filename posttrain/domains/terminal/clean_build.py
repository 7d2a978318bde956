"""Clean up a build directory: ``terminal.clean_build-v1`` (delete only generated files).

Trains: ``find -name ... -delete``/``rm`` with precise patterns, without collateral damage.
``proj/`` mixes sources with generated files. Difficulty 1: delete every ``*.o`` file;
2: also every ``__pycache__`` directory and ``*.pyc`` file, and the ``proj/build/`` folder;
3: the patterns are given in ``clean.spec`` (one glob per line, ``dir/`` for folders, ``#``
comments) and the tree holds look-alikes that must stay (``notes.o.txt``, ``build_utils.c``,
``src/build/`` ≠ ``proj/build/``, ``cache.pyc.bak``).

Reward: one ``all`` predicate per kind of generated file (every file/folder of that kind is
gone *and* the sources next to it are intact, so wiping earns nothing); guarded by every
source and look-alike left unchanged.

Probes (≤ 0.05): ``delete_by_substring`` (``find -name '*build*' -o -name '*.o*'``: look-alikes
lost, at difficulty 3; at 1-2 ``rm -rf proj``), ``keep_everything_touch`` (generated files
emptied, not deleted), plus the terminal and generic probes.
"""

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task

MODS = ["parser", "lexer", "io", "net", "math", "cli", "store"]


def _build(rng: random.Random, d: int):
    mods = rng.sample(MODS, 3 + d)
    src, gen = {}, {"obj": [], "py": [], "build": []}
    for m in mods:
        src[f"proj/src/{m}.c"] = f"int {m}(void) {{ return {rng.randint(0, 99)}; }}\n"
        gen["obj"].append(f"proj/src/{m}.o")
        if d >= 2:
            src[f"proj/py/{m}.py"] = f"X = {rng.randint(0, 99)}\n"
            gen["py"].append(f"proj/py/__pycache__/{m}.cpython-311.pyc")
            if rng.random() < 0.5:
                gen["py"].append(f"proj/py/{m}.pyc")
    if d >= 2:
        gen["build"] = [f"proj/build/{m}.bin" for m in mods[:2]] + ["proj/build/out/app"]
    files = {**src, **{p: f"generated {rng.getrandbits(32):08x}\n" for g in gen.values() for p in g}}
    spec = "# generated files\n*.o\n*.pyc\n__pycache__/\nbuild/ (only proj/build, the top-level one)\n"
    if d >= 3:
        files["clean.spec"] = spec
        for p in ["proj/notes.o.txt", "proj/src/build_utils.c", "proj/src/build/keep.c", "proj/py/cache.pyc.bak"]:
            src[p] = f"keep {rng.randint(0, 999)}\n"
            files[p] = src[p]
    preds = []
    for kind, paths in gen.items():
        if paths:
            gone = [{"op": "absent", "path": p} for p in paths]
            if kind == "build":
                gone.append({"op": "absent", "path": "proj/build"})
            if kind == "py":
                gone.append({"op": "absent", "path": "proj/py/__pycache__"})
            keep = [{"op": "file", "path": p, "content": c} for p, c in src.items()]
            preds.append({"op": "all", "of": gone + keep})
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in src.items()]
    ask = {1: "Delete every generated object file (*.o) under proj/",
           2: "Delete the generated files under proj/: every *.o and *.pyc file, every __pycache__ folder, and the "
              "proj/build folder",
           3: "Delete the generated files under proj/ listed by the patterns in clean.spec (match whole names, not "
              "parts of names)"}[d]
    return tree_task(DOMAIN_ID, d, ask + ". Keep every other file exactly as it is.", files, preds,
                     hidden={"gen": gen})


def _reference(task):
    gen = task.hidden["gen"]
    paths = gen["obj"] + gen["py"] + (["proj/py/__pycache__", "proj/build"] if task.difficulty >= 2 else [])
    return [shell("rm -rf " + " ".join(paths))]


def _probes(task):
    gen = task.hidden["gen"]
    wide = ("find proj -depth \\( -name '*build*' -o -name '*.o*' -o -name '*pyc*' \\) -exec rm -rf {} +"
            if task.difficulty >= 3 else "rm -rf proj")
    return {"delete_by_substring": [shell(wide)],
            "keep_everything_touch": [shell(" && ".join(f": > '{p}'" for g in gen.values() for p in g))]}


DOMAIN_ID = "terminal.clean_build-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
