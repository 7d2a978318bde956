"""Rename files by a pattern: ``terminal.rename_pattern-v1``.

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

from __future__ import annotations

import random

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task

WORDS = ["beach", "dinner", "hike", "party", "city", "garden", "snow", "lake", "museum"]


def _build(rng: random.Random, d: int):
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
    return tree_task(DOMAIN_ID, d, text, files, preds, hidden={"renames": renames})


def _reference(task):
    return [shell(" && ".join(f"mv '{s}' '{t}'" for s, t in task.hidden["renames"].items()))]


def _probes(task):
    ren = task.hidden["renames"]
    return {
        "copy_not_move": [shell(" && ".join(f"cp '{s}' '{t}'" for s, t in ren.items()))],
        "lowercase_only": [shell(" && ".join(f"mv '{s}' '{s.lower()}.x'" for s in ren))],
        "rename_everything": [shell(" && ".join(f"mv '{s}' '{t}'" for s, t in ren.items())
                                    + " && cd shots && for f in notes_* IMG_info.md; do mv \"$f\" \"x_$f\"; done")],
    }


DOMAIN_ID = "terminal.rename_pattern-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
