"""A multi-file change: ``long_horizon.rename_refactor-v1`` — rename a function across a project.

Trains: a change that must be carried through several files over several turns, keeping the
program working. ``util.py`` defines a function used by 2 / 3 / 4 modules (difficulty 1 /
2 / 3) that ``main.py`` calls; the function must be renamed everywhere (definition, imports,
calls) and ``python3 main.py`` must print exactly what it printed before.

Process rewards (checkpoints): each file that no longer mentions the old name and uses the
new one, the first time it does — 1/files each.

Outcome: ``renamed`` = the fraction of files (util and each caller) whose source, parsed on
the host, has no identifier with the old name and defines or uses the new one; ``works`` =
the project's files alone, copied to a fresh sandbox, make ``python3 main.py`` exit 0 with
the original output. Value = renamed × works.

Probes (≤ 0.05): ``alias_only`` (``new = old`` added to util.py), ``print_expected`` (main.py
replaced by prints of the right output, the modules deleted), ``util_only`` (only util.py
renamed: the callers break), plus the generic probes.
"""

from __future__ import annotations

import ast
import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import pool_lease

from ._kit import LongDomain, done, files_task, read_text, shell, stage_env, write

OLD = ["calc", "combine", "blend", "mix", "merge_vals", "fuse"]
NEW = ["compute_total", "weighted_sum", "scaled_add", "mix_values", "join_values", "fold_pair"]
MODS = ["orders", "stock", "prices", "ledger", "survey"]


def _project(rng: random.Random, difficulty: int) -> tuple[dict[str, str], dict[str, str], str, str, str]:
    old, new = rng.choice(OLD), rng.choice(NEW)
    a = rng.randint(2, 9)
    mods = rng.sample(MODS, difficulty + 1)
    files = {"util.py": f"def {old}(x, y):\n    return x * {a} + y\n\n\ndef unrelated(x):\n    return -x\n"}
    after = {"util.py": files["util.py"].replace(old, new)}
    lines, out = [], []
    for m in mods:
        c, k = rng.randint(1, 50), rng.randint(1, 50)
        files[f"{m}.py"] = f"from util import {old}\n\n\ndef run_{m}(v):\n    return {old}(v, {c})\n"
        after[f"{m}.py"] = files[f"{m}.py"].replace(old, new)
        lines.append(f"from {m} import run_{m}")
        out.append((f"print(run_{m}({k}))", k * a + c))
    files["main.py"] = "\n".join(lines + [p for p, _ in out]) + "\n"
    after["main.py"] = files["main.py"]
    expected = "".join(f"{v}\n" for _, v in out)
    return files, after, old, new, expected


def renamed(source: str | None, old: str, new: str) -> bool:
    """No identifier ``old`` anywhere; ``new`` defined or used (parsed, never run)."""
    if source is None:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.alias):
            names.update({n.name, n.asname or n.name})
    return old not in names and new in names


DOMAIN_ID = "long_horizon.rename_refactor-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    files, after, old, new, expected = _project(rng, difficulty)
    text = (f"Rename the function {old} in util.py to {new} everywhere in this project (definition, "
            f"imports, calls). 'python3 main.py' must keep printing exactly the same output.")
    changed = [p for p in files if p != "main.py"]
    return files_task(DOMAIN_ID, difficulty, text, files,
                      {"old": old, "new": new, "after": after, "changed": changed, "output": expected})


def _env(task: Task):
    h = task.hidden
    checks = [(p, lambda env, p=p: renamed(read_text(env, p), h["old"], h["new"])) for p in h["changed"]]
    return stage_env(task, _verify, checks)


def _verify(env, trajectory) -> Score:
    h = env.task.hidden
    src = {p: read_text(env, p) for p in env.task.public["files"]} if env.sandbox_opened else {}
    per = [float(renamed(src.get(p), h["old"], h["new"])) for p in h["changed"]]
    works = 0.0
    if any(per):
        with pool_lease()() as sb:
            for p, text in src.items():
                if text is not None:
                    sb.write_file(p, text)
            res = sb.exec(["python3", "-E", "-s", "main.py"], timeout=10, cpu_time=10)
            works = float(res.exit_code == 0 and res.stdout == h["output"])
    frac = sum(per) / len(per)
    comps = {"renamed": (frac, 1.0), "works": (works, 1.0),
             "checkpoints": (sum(env.checkpoints.values()), 0.0)}
    return Score(frac * works, components=comps, passed=int(sum(per)), total=len(per),
                 reason=f"{int(sum(per))}/{len(per)} files renamed, main.py "
                        f"{'works' if works else 'broken or changed'}", verifier_version=env.task.domain)


def _reference(task: Task) -> list[str]:
    h = task.hidden
    return [write(p, h["after"][p]) for p in h["changed"]] + [shell("python3 main.py"), done()]


def _probes(task: Task) -> dict:
    h, files = task.hidden, task.public["files"]
    prints = "".join(f"print({v})\n" for v in h["output"].split())
    rm = " ".join(p for p in files if p != "main.py")
    return {
        "alias_only": [write("util.py", files["util.py"] + f"\n{h['new']} = {h['old']}\n"), done()],
        "print_expected": [write("main.py", prints), shell("rm -f " + rm), done()],
        "util_only": [write("util.py", h["after"]["util.py"]), done()],
    }


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
