"""Permission bits and links: modes by a policy, a world-writable audit, symbolic links.

Domains (each one's description is its ``*_DOC`` text below): ``permissions``, ``world_writable``, ``symlinks``.
"""

from __future__ import annotations

import posixpath
import random

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import collect_state, fs_score

from ._kit import TreeDomain, done, files_task, shell, tree_task, write


# -------------------- permissions
PERMS_DOC = """Fix permissions: ``terminal.permissions-v1`` — set file and directory modes by a policy.

Trains: ``chmod`` with exact octal modes. A project tree has ``bin/*.sh`` (must be 755),
``secrets/*`` (600), ``docs/*`` (644); difficulty 2 adds the directory ``secrets`` (700);
difficulty 3 adds ``shared/*`` (664) and ``logs/`` (750). Every file starts with a mode
different from its target.

Reward: fraction of ``mode`` predicates holding, guarded by every file's content unchanged.

Probes (≤ 0.05): ``chmod_all`` (777 everywhere), ``wipe_tree``, ``recreate_files`` (delete
and recreate every file empty), ``claim_success``, plus the generic ones.
"""

GROUPS = {"bin": ("755", ".sh", "#!/bin/sh\necho {w}\n"), "secrets": ("600", ".key", "{w}-secret\n"),
          "docs": ("644", ".md", "# {w}\n"), "shared": ("664", ".txt", "{w}\n")}
WRONG = ["600", "640", "644", "664", "700", "711", "744", "755", "775", "444", "400"]
NAMES = ["build", "deploy", "api", "db", "root", "guide", "faq", "notes", "setup", "data", "cert", "token"]


ID_PERMS = "terminal.permissions-v1"


def _build_perms(rng: random.Random, difficulty: int) -> Task:
    groups = ["bin", "secrets", "docs"] + (["shared"] if difficulty >= 3 else [])
    files, modes, preds = {}, {}, []
    for g in groups:
        target, ext, tmpl = GROUPS[g]
        for name in rng.sample(NAMES, rng.randint(1, 2 + difficulty)):
            path = f"{g}/{name}{ext}"
            files[path] = tmpl.format(w=name)
            modes[path] = rng.choice([m for m in WRONG if m != target])
            preds.append({"op": "mode", "path": path, "mode": target})
            preds.append({"op": "file", "path": path, "content": files[path], "guard": True})
    rules = ["bin/*.sh 755", "secrets/* 600", "docs/* 644"]
    if difficulty >= 2:
        modes["secrets"] = "755"
        preds.append({"op": "mode", "path": "secrets", "mode": "700"})
        rules.append("the secrets directory itself 700")
    if difficulty >= 3:
        rules.append("shared/* 664")
        files["logs/app.log"] = "start\n"
        modes["logs"] = "777"
        preds.append({"op": "mode", "path": "logs", "mode": "750"})
        preds.append({"op": "file", "path": "logs/app.log", "content": "start\n", "guard": True})
        rules.append("the logs directory 750")
    text = "Set exactly these permission modes: " + "; ".join(rules) + ". Do not change file contents."
    return files_task(ID_PERMS, difficulty, text, files, preds, modes=modes)


def _reference_perms(task: Task) -> list[str]:
    cmds = [f"chmod {p['mode']} '{p['path']}'" for p in task.hidden["predicates"] if p["op"] == "mode"]
    return [shell(" && ".join(cmds))]


def _probes_perms(task: Task) -> dict[str, list[str]]:
    recreate = " ".join(f"'{p}'" for p in task.public["files"])
    return {"recreate_files": [shell(f"for f in {recreate}; do rm -f \"$f\"; : > \"$f\"; done"), done()]}


register_domain(TreeDomain(ID_PERMS, _build_perms, _reference_perms, _probes_perms, description=PERMS_DOC))


# -------------------- world_writable
WW_DOC = """Permissions audit: ``terminal.world_writable-v1`` — find world-writable entries and fix them.

Trains: ``find -perm -o+w``, ``chmod o-w`` (removing one bit, keeping the others), and
reporting. ``srv/`` holds files and folders with assorted modes, some world-writable.
Difficulty 1: remove the world-write bit from every world-writable regular file (all other
bits kept: 666 → 664, 777 → 775, 646 → 644); 2: directories too, and write ``audit.txt``
listing the fixed paths (relative, e.g. ``srv/a``), sorted, one per line; 3: sticky
directories (mode 1777, shared drop folders) are exempt and must stay as they are.

Reward: one ``mode`` predicate per entry to fix, the audit as graded lines (2+); guarded by
the modes of every other entry and by the file contents left unchanged.

Probes (≤ 0.05): ``chmod_go_w_everything`` (``chmod -R go-w``: other entries' group bits lost),
``chmod_755_all``, plus the terminal and generic probes.
"""

WW_FILE = ["666", "777", "646", "662", "606"]
OK_FILE = ["644", "664", "600", "755", "640", "660"]


def _build_ww(rng: random.Random, d: int):
    files, modes, fixed = {}, {}, {}
    dirs = ["srv/data", "srv/www", "srv/tmp"]
    for i in range(4 + 2 * d):
        path = f"{rng.choice(dirs)}/f{i}.{rng.choice(['txt', 'sh', 'cfg'])}"
        files[path] = f"content {i} {rng.randint(0, 999)}\n"
        ww = rng.random() < 0.5 or i == 0
        modes[path] = rng.choice(WW_FILE if ww else OK_FILE)
        if ww:
            fixed[path] = f"{int(modes[path], 8) & ~0o002:o}"
    files["srv/data/shared.txt"], modes["srv/data/shared.txt"] = "team file\n", "664"  # group-writable, stays
    for dr in dirs:
        modes[dr] = "755"
    if d >= 2:
        modes["srv/www"] = rng.choice(["777", "757"])
        fixed["srv/www"] = f"{int(modes['srv/www'], 8) & ~0o002:o}"
    if d >= 3:
        modes["srv/tmp"] = "1777"
    preds = [{"op": "mode", "path": p, "mode": m} for p, m in fixed.items()]
    if d >= 2:
        preds.append({"op": "lines_match", "path": "audit.txt", "lines": sorted(fixed)})
    preds += [{"op": "mode", "path": p, "mode": m, "guard": True} for p, m in modes.items() if p not in fixed]
    preds += [{"op": "file", "path": p, "content": c, "guard": True} for p, c in files.items()]
    text = {1: "Remove the world-write permission bit from every world-writable regular file under srv/, keeping "
               "all their other permission bits",
            2: "Remove the world-write permission bit from every world-writable file and directory under srv/ "
               "(keep all other bits), and write audit.txt listing the paths you fixed (like srv/www), sorted, one "
               "per line",
            3: "Remove the world-write permission bit from every world-writable file and directory under srv/ "
               "(keep all other bits), except sticky directories (like mode 1777), which stay as they are; write "
               "audit.txt listing the paths you fixed (like srv/www), sorted, one per line"}[d]
    return tree_task(ID_WW, d, text + ". Change nothing else.", files, preds, modes=modes,
                     hidden={"fixed": fixed})


def _reference_ww(task):
    fixed = task.hidden["fixed"]
    acts = [shell(" && ".join(f"chmod {m} '{p}'" for p, m in fixed.items()))]
    return acts + ([write("audit.txt", "".join(f"{p}\n" for p in sorted(fixed)))] if task.difficulty >= 2 else [])


def _probes_ww(task):
    return {"chmod_go_w_everything": [shell("chmod -R go-w srv && find srv -perm -o+w > audit.txt")],
            "chmod_755_all": [shell("chmod -R 755 srv && find srv | sort > audit.txt")]}


ID_WW = "terminal.world_writable-v1"
register_domain(TreeDomain(ID_WW, _build_ww, _reference_ww, _probes_ww, description=WW_DOC))


# -------------------- symlinks
LINKS_DOC = """Set up symbolic links: ``terminal.symlinks-v1``.

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

TOOLS = ["fmt", "lint", "serve", "pack", "probe"]


def _build_links(rng: random.Random, d: int):
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
    return tree_task(ID_LINKS, d, text + ". Do not copy or change the release files.", files, preds,
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
            fs_score([p], st, ID_LINKS).value
    link_preds = [p for p in h["predicates"] if not p.get("guard")]
    extra = {f"link{i}": value(p) for i, p in enumerate(link_preds)}
    return fs_score([p for p in h["predicates"] if p.get("guard")], st, ID_LINKS, extra=extra)


def _reference_links(task):
    cmds = ["rm -f bin/old-tool"] if task.difficulty >= 3 else []
    for p, t in task.hidden["links"].items():
        rel = posixpath.relpath(t, posixpath.dirname(p) or ".")
        cmds.append(f"mkdir -p \"$(dirname {p})\" && ln -sfn {rel} {p}")
    return [shell(" && ".join(cmds))]


def _probes_links(task):
    links = task.hidden["links"]
    return {"copy_instead": [shell(" && ".join(f"rm -rf {p}; mkdir -p \"$(dirname {p})\" && cp -r {t} {p}" for p, t in links.items()))],
            "link_oldest": [shell(" && ".join(f"mkdir -p \"$(dirname {p})\" && ln -sfn /work/{t.replace(links['current'].split('/')[-1], task.hidden['oldest'])} {p}" for p, t in links.items()))],
            "host_targets": [shell(" && ".join(f"rm -rf {p}; mkdir -p \"$(dirname {p})\" && ln -s /etc/passwd {p}" for p in links))]}


ID_LINKS = "terminal.symlinks-v1"
register_domain(TreeDomain(ID_LINKS, _build_links, _reference_links, _probes_links, verifier=_verify,
                           description=LINKS_DOC))
