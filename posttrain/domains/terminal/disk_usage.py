"""Disk-usage summary into a file: ``terminal.disk_usage-v1``.

Trains: ``find -printf '%s'``/``du -b``/``wc -c`` with ``awk`` sums and ``sort``. ``store/``
holds top-level folders of files of known sizes. Difficulty 1: ``usage.txt`` with
``DIR FILES`` (regular files per top-level folder, recursively), sorted by folder name;
2: ``DIR BYTES`` (sum of file sizes in bytes, recursively), sorted by bytes descending then
name; 3: ``EXT BYTES`` per file extension (``none`` for files without one) over the whole
tree, sorted by bytes descending then extension, plus a last line ``TOTAL <bytes>``.

Reward: the graded ``lines_match`` on usage.txt and the exact file; guarded by the tree left
unchanged. (Directory entry sizes from ``du`` without ``-b``/apparent sizes are wrong:
the values are file byte counts.)

Probes (≤ 0.05): ``du_blocks`` (``du -s`` in blocks), ``names_only`` (folder names with 0),
plus the terminal and generic probes.
"""

from __future__ import annotations

import random
from collections import Counter

from posttrain.domains.base import register_domain

from ._kit import TreeDomain, report_predicates, shell, tree_task, write_lines

DIRS = ["audio", "backups", "cache", "docs", "images", "logs", "video"]
EXTS = ["txt", "log", "csv", "json", ""]


def _build(rng: random.Random, d: int):
    files, count, size, ext = {}, Counter(), Counter(), Counter()
    dirs = sorted(rng.sample(DIRS, 3 + d))
    for top in dirs:
        for i in range(rng.randint(1, 4)):
            e = rng.choice(EXTS)
            path = f"store/{top}/{rng.choice(['', 'sub/'])}f{i}" + (f".{e}" if e else "")
            body = "x" * rng.randint(1, 400) + "\n"
            files[path] = body
            count[top] += 1
            size[top] += len(body)
            ext[e or "none"] += len(body)
    if d == 1:
        want = [f"{t} {count[t]}" for t in dirs]
        text = "Write usage.txt with one line 'DIR FILES' per top-level folder of store/ (regular files in it, recursively), sorted by folder name"
    elif d == 2:
        want = [f"{t} {size[t]}" for t in sorted(dirs, key=lambda t: (-size[t], t))]
        text = ("Write usage.txt with one line 'DIR BYTES' per top-level folder of store/ (the sum of the sizes in "
                "bytes of the regular files in it, recursively), sorted by bytes descending, then name")
    else:
        want = [f"{e} {ext[e]}" for e in sorted(ext, key=lambda e: (-ext[e], e))] + [f"TOTAL {sum(ext.values())}"]
        text = ("Write usage.txt with one line 'EXT BYTES' per file extension under store/ (without the dot; "
                "'none' for files without one; sum of file sizes in bytes), sorted by bytes descending, then "
                "extension, and a last line 'TOTAL <bytes>'")
    preds = report_predicates("usage.txt", want, files)
    return tree_task(DOMAIN_ID, d, text + ". Do not change store/.", files, preds, hidden={"want": want})


def _reference(task):
    return [write_lines("usage.txt", task.hidden["want"])]


def _probes(task):
    return {"du_blocks": [shell("cd store && du -s * | awk '{print $2, $1}' > ../usage.txt")],
            "names_only": [shell("ls store | sed 's/$/ 0/' > usage.txt")]}


DOMAIN_ID = "terminal.disk_usage-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, description=__doc__))
