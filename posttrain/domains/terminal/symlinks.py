"""Set up symbolic links: ``terminal.symlinks-v1``.

Trains: ``ln -s``/``ln -sfn`` with relative targets, replacing links, removing dangling ones.
``releases/`` holds versioned folders; the policy must create ``current`` → the newest
release and, from difficulty 2, ``bin/<tool>`` → ``../releases/<newest>/<tool>`` for each
tool (relative, so the tree can move); difficulty 3 starts with a stale ``current`` (→ an
old release) to replace and a dangling ``bin/old-tool`` link to remove.

Reward: the final links are read with ``find -printf '%l'`` inside the sandbox (link text,
never followed by the harness); a link holds when the entry is a symlink whose target,
resolved lexically against the link's folder (``/work/...`` absolute targets accepted),
names the expected path. One predicate per link (+ the dangling link gone, together with the
``current`` link); guarded by the release files left unchanged.

Probes (≤ 0.05): ``copy_instead`` (``cp -r`` copies, not links), ``link_oldest``,
``host_targets`` (links to ``/etc/passwd``), plus the terminal and generic probes.
"""

from __future__ import annotations

import posixpath
import random

from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, shell, tree_task

TOOLS = ["fmt", "lint", "serve", "pack", "probe"]


def _build(rng: random.Random, d: int):
    vers = sorted({(1, rng.randint(0, 9), rng.randint(0, 20)) for _ in range(4)})
    while len(vers) < 3:
        vers.append((2, len(vers), 0))
    vers = sorted(vers)
    names = [f"v{a}.{b}.{c}" for a, b, c in vers]
    newest = names[-1]
    tools = rng.sample(TOOLS, 2) if d >= 2 else []
    files = {}
    for n in names:
        files[f"releases/{n}/VERSION"] = n + "\n"
        for t in tools:
            files[f"releases/{n}/{t}"] = f"#!/bin/sh\necho {t} {n}\n"
    links = {"current": f"releases/{newest}"}
    links.update({f"bin/{t}": f"releases/{newest}/{t}" for t in tools})
    init = {}
    text = ("Make current a symbolic link to the newest release folder under releases/ (versions compare "
            "numerically)")
    if d >= 2:
        text += (f"; create bin/ with symbolic links {', '.join(f'bin/{t}' for t in tools)} to the same-named "
                 "programs of that release, using relative targets (../releases/...)")
    if d >= 3:
        init = {"current": f"releases/{names[0]}", "bin/old-tool": "../releases/v0.0.1/old-tool"}
        text += "; current exists and points to an old release: replace it; remove the dangling link bin/old-tool"
    preds = [{"op": "link", "path": p, "target": t} for p, t in links.items()]
    if d >= 3:
        preds[0] = {"op": "all_links", "of": [preds[0], {"op": "absent", "path": "bin/old-tool"}]}
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    return tree_task(DOMAIN_ID, d, text + ". Do not copy or change the release files.", files, preds,
                     links=init, hidden={"links": links, "oldest": names[0]})


def _targets(env) -> dict[str, str]:
    res = env.sandbox.exec(["find", ".", "-mindepth", "1", "-type", "l", "-printf", "%P\\t%l\\n"], timeout=10)
    return dict(line.split("\t", 1) for line in res.stdout.splitlines() if "\t" in line)


def link_ok(links: dict[str, str], path: str, want: str) -> bool:
    t = links.get(path)
    if t is None:
        return False
    if t.startswith("/"):
        if not t.startswith("/work/"):
            return False
        resolved = posixpath.normpath(t[len("/work/"):])
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), t))
    return resolved == want


def _verify(env, trajectory):
    h = env.task.hidden
    st = collect_state(env.sandbox)
    links = _targets(env)

    def value(p) -> float:
        if p["op"] == "link":
            return float(link_ok(links, p["path"], p["target"]))
        return float(all(value(q) >= 1.0 for q in p["of"])) if p["op"] == "all_links" else \
            fs_score([p], st, DOMAIN_ID).value
    link_preds = [p for p in h["predicates"] if not p.get("guard")]
    extra = {f"link{i}": value(p) for i, p in enumerate(link_preds)}
    return fs_score([p for p in h["predicates"] if p.get("guard")], st, DOMAIN_ID, extra=extra)


def _reference(task):
    cmds = ["rm -f bin/old-tool"] if task.difficulty >= 3 else []
    for p, t in task.hidden["links"].items():
        rel = posixpath.relpath(t, posixpath.dirname(p) or ".")
        cmds.append(f"mkdir -p \"$(dirname {p})\" && ln -sfn {rel} {p}")
    return [shell(" && ".join(cmds))]


def _probes(task):
    links = task.hidden["links"]
    return {"copy_instead": [shell(" && ".join(f"rm -rf {p}; mkdir -p \"$(dirname {p})\" && cp -r {t} {p}" for p, t in links.items()))],
            "link_oldest": [shell(" && ".join(f"mkdir -p \"$(dirname {p})\" && ln -sfn /work/{t.replace(links['current'].split('/')[-1], task.hidden['oldest'])} {p}" for p, t in links.items()))],
            "host_targets": [shell(" && ".join(f"rm -rf {p}; mkdir -p \"$(dirname {p})\" && ln -s /etc/passwd {p}" for p in links))]}


DOMAIN_ID = "terminal.symlinks-v1"
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify, description=__doc__))
