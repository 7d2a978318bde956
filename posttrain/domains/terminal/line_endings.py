"""Fix line endings: ``terminal.line_endings-v1`` (CRLF → LF, selectively).

Trains: ``sed -i 's/\\r$//'``/``tr -d '\\r'`` over a chosen set of files, and looking at bytes
(``file``, ``od -c``, ``grep -l $'\\r'``). ``repo/`` holds text files with Windows line
endings; every ``*.sh``, ``*.py`` and ``*.txt`` file must end up with LF endings while
``*.bat`` files keep CRLF. Difficulty 2 also strips trailing spaces and tabs on each line of
the converted files; difficulty 3 adds files that mix both endings and files missing a final
newline (which must get one).

Reward: one exact-bytes ``file`` predicate per file to convert (``lines`` mode would hide
the ``\\r``), guarded by the ``.bat`` files and the files already right left unchanged.

Converting only some of the files earns partial credit (one predicate per file).

Probes (≤ 0.05): ``convert_everything`` (``.bat`` converted too: a guard fails),
``delete_cr_everywhere_but_keep_bat`` (``.bat`` files deleted and rewritten empty), plus the
terminal and generic probes.
"""

from __future__ import annotations

import random
import re

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, shell, tree_task, write

WORDS = ["echo", "set", "path", "value", "run", "build", "clean", "start"]


def _text(rng, d: int, crlf: bool) -> str:
    lines = [" ".join(rng.sample(WORDS, 3)) + (rng.choice(["", "  ", "\t"]) if d >= 2 else "")
             for _ in range(rng.randint(3, 6))]
    if d >= 3 and crlf:
        ends = [rng.choice(["\r\n", "\n"]) for _ in lines]
        ends[0] = "\r\n"
        text = "".join(ln + e for ln, e in zip(lines, ends))
        return text[:-len(ends[-1])] if rng.random() < 0.4 else text
    return "".join(ln + ("\r\n" if crlf else "\n") for ln in lines)


def _fix(text: str, d: int) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if d >= 2:
        lines = [re.sub(r"[ \t]+$", "", ln) for ln in lines]
    return "\n".join(lines) + "\n"


def _build(rng: random.Random, d: int):
    files, targets = {}, {}
    for name in rng.sample(["setup", "deploy", "notes", "tool", "readme", "helper"], 3 + d):
        ext = rng.choice(["sh", "py", "txt"])
        path = f"repo/{rng.choice(['', 'scripts/'])}{name}.{ext}"
        files[path] = _text(rng, d, True)
        targets[path] = _fix(files[path], d)
    for name in rng.sample(["build", "install"], 2):
        files[f"repo/{name}.bat"] = _text(random.Random(rng.random()), 1, True)
    files["repo/ok.txt"] = "already unix\n"
    preds = [{"op": "file", "path": p, "content": c} for p, c in targets.items()]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items() if p not in targets]
    text = ("Convert every *.sh, *.py and *.txt file under repo/ to Unix line endings (LF); *.bat files must keep "
            "their Windows (CRLF) endings")
    if d >= 2:
        text += "; in the converted files also strip trailing spaces and tabs from every line"
    if d >= 3:
        text += "; every converted file must end with exactly one newline"
    return tree_task(DOMAIN_ID, d, text + ". Change nothing else.", files, preds, hidden={"targets": targets})


def _reference(task):
    return [write(p, c) for p, c in task.hidden["targets"].items()]


def _probes(task):
    return {"convert_everything": [shell("find repo -type f -exec sed -i 's/\\r$//' {} +")],
            "delete_cr_everywhere_but_keep_bat": [shell("for f in repo/*.bat; do : > $f; done")]}


DOMAIN_ID = "terminal.line_endings-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
