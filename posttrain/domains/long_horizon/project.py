"""Set up a small project in stages: ``long_horizon.project_setup-v1``.

Trains: following a multi-stage specification to a final file-system state. Stages:

1. layout: ``src/<pkg>/__init__.py`` containing ``__version__ = "<version>"`` and an empty
   ``tests/`` directory holding ``tests/test_<pkg>.py`` with the given first line;
2. configuration: ``config.ini`` with a ``[<pkg>]`` section and the given keys, one
   ``key = value`` line each, in the given order;
3. (difficulty ≥ 2) a script ``scripts/version.sh``, mode 755, whose content is given;
4. (difficulty 3) ``README.md`` whose first line is ``# <pkg> <version>`` and the file
   ``notes.txt`` from the starting tree removed.

Process rewards (checkpoints): all predicates of a stage hold — 1/stages the first time.

Outcome: fraction of all predicates holding in the final tree
(:mod:`posttrain.verifiers.fs_state`), guarded by ``data.txt`` (given) left unchanged.

Probes (≤ 0.05): ``touch_expected`` (every expected path created empty), ``wipe_tree``,
``wrong_values`` (every file written with other values), plus the generic probes.
"""

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.verifiers.fs_state import check, collect_state, fs_score

from ._kit import LongDomain, done, files_task, shell, stage_env, write

PKGS = ["orbit", "quill", "ember", "tally", "prism", "harbor", "lumen"]
KEYS = ["port", "workers", "timeout", "retries", "cache_mb", "log_level"]


def _stages(rng: random.Random, difficulty: int) -> tuple[list[list[dict]], list[str], dict[str, str]]:
    pkg = rng.choice(PKGS)
    ver = f"{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
    keys = rng.sample(KEYS, 2 + difficulty)
    vals = {k: str(rng.randint(1, 9000)) if k != "log_level" else rng.choice(["info", "warn", "debug"]) for k in keys}
    init = f'__version__ = "{ver}"\n'
    test = f"from {pkg} import __version__\n"
    ini = f"[{pkg}]\n" + "".join(f"{k} = {vals[k]}\n" for k in keys)
    script = f"#!/bin/sh\necho {pkg} {ver}\n"
    content = {f"src/{pkg}/__init__.py": init, f"tests/test_{pkg}.py": test, "config.ini": ini,
               "scripts/version.sh": script, "README.md": f"# {pkg} {ver}\n"}
    stages = [[{"op": "file", "path": f"src/{pkg}/__init__.py", "content": init, "lines": True},
               {"op": "file", "path": f"tests/test_{pkg}.py", "content": test, "lines": True}],
              [{"op": "file", "path": "config.ini", "content": ini, "lines": True}]]
    text = [f"1. create src/{pkg}/__init__.py containing the line __version__ = \"{ver}\", and "
            f"tests/test_{pkg}.py whose only line is: from {pkg} import __version__",
            f"2. write config.ini: a [{pkg}] section then, in this order, " +
            ", ".join(f"{k} = {vals[k]}" for k in keys) + " (one 'key = value' per line)"]
    if difficulty >= 2:
        stages.append([{"op": "all", "of": [{"op": "file", "path": "scripts/version.sh", "content": script},
                                            {"op": "mode", "path": "scripts/version.sh", "mode": "755"}]}])
        text.append(f"3. write scripts/version.sh, mode 755, exactly: #!/bin/sh (newline) echo {pkg} {ver}")
    if difficulty >= 3:
        stages.append([{"op": "file", "path": "README.md", "content": content["README.md"], "lines": True},
                       {"op": "all", "of": [{"op": "absent", "path": "notes.txt"}] + stages[0]}])
        text.append(f"4. write README.md with the single line '# {pkg} {ver}' and delete notes.txt")
    return stages, text, content


DOMAIN_ID = "long_horizon.project_setup-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    stages, text, content = _stages(rng, difficulty)
    files = {"data.txt": f"seed {rng.randint(0, 10**6)}\n"}
    if difficulty >= 3:
        files["notes.txt"] = "scratch\n"
    guard = {"op": "file", "path": "data.txt", "content": files["data.txt"], "guard": True}
    prompt = "Set up a project in these stages (leave data.txt as it is):\n" + "\n".join(text)
    return files_task(DOMAIN_ID, difficulty, prompt, files,
                      {"stages": stages, "predicates": [p for s in stages for p in s] + [guard],
                       "content": content})


def _env(task: Task):
    stages = task.hidden["stages"]

    def stage_ok(env, k):
        st = collect_state(env.sandbox)
        return all(check(p, st) >= 1.0 for p in stages[k])

    checks = [(f"stage{k + 1}", lambda env, k=k: stage_ok(env, k)) for k in range(len(stages))]
    return stage_env(task, _verify, checks)


def _verify(env, trajectory) -> Score:
    return fs_score(env.task.hidden["predicates"], collect_state(env.sandbox), env.task.domain,
                    extra=None)


def _reference(task: Task) -> list[str]:
    content, n = task.hidden["content"], len(task.hidden["stages"])
    order = [p for p in content if p.startswith(("src/", "tests/"))] + ["config.ini"]
    order += ["scripts/version.sh"] if n >= 3 else []
    order += ["README.md"] if n >= 4 else []
    acts = [write(p, content[p]) for p in order]
    if n >= 3:
        acts.append(shell("chmod 755 scripts/version.sh"))
    if n >= 4:
        acts.append(shell("rm -f notes.txt"))
    return acts + [done()]


def _probes(task: Task) -> dict:
    paths = sorted(task.hidden["content"])
    touch = " ".join(paths)
    return {
        "touch_expected": [shell(f"for p in {touch}; do mkdir -p $(dirname $p); : > $p; chmod 755 $p; done"),
                           done()],
        "wipe_tree": [shell("rm -rf /work/*"), done()],
        "wrong_values": [write(p, "x = 1\n") for p in paths] + [done()],
    }


register_domain(LongDomain(DOMAIN_ID, _build, _env, _reference, _probes, description=__doc__))
