"""Screen state, terminal: a terminal screenshot → the next shell command (``tools.screen_command-v1``).

Visual, single turn: the task's only image is a terminal window; the text states the goal
but none of the names, numbers or commands on the screen, so the policy must read it. Four
situations (chosen per task):

- ``ps``: a process table → stop the process using the most memory (``kill PID``);
- ``ls``: a long listing → delete the largest regular file (``rm NAME``; directories are
  never the answer, and from level 3 a directory may show the largest size);
- ``git``: ``git status`` → stage the modified files and no untracked one (``git add ...``);
- ``typo``: a command that failed with "command not found" → the corrected command with the
  same arguments.

Levels: 1 = a short screen with only that output; 2 = more rows below two earlier, unrelated
commands; 3 = many rows below up to five (the task's rows always fit on the screen). Score: 1 when the command (one line, parsed with ``shlex``) is one of the
accepted spellings (``kill -9 PID`` and ``rm -f NAME`` count; argument order of ``git add``
does not matter), else 0. Probes: the runner-up row, the first row, blanket commands
(``kill -9 -1``, ``rm -rf *``, ``git add -A``), the failed command unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import shlex
from typing import Callable

from posttrain.core.types import Score, Task
from posttrain.domains._vision_kit import SeeDomain, one_answer, visual_task
from posttrain.domains.base import register_domain
from posttrain.domains.tools._screens import TERM_ROWS, terminal_png

DOMAIN = "tools.screen_command-v1"
ROWS = {1: (3, 5), 2: (8, 11), 3: (13, 17)}
USERS = ("alice", "bob", "carol", "dmitri", "erin", "root", "www")
PROGRAMS = ("python3 serve.py", "node app.js", "postgres -D /var/db", "redis-server", "java -jar api.jar",
            "nginx: worker", "ruby worker.rb", "sshd", "cron", "bash", "vim notes.md", "go run .",
            "celery worker", "gunicorn app:wsgi", "tmux", "rsync -a src dst")
WORDS = ("report", "data", "backup", "model", "notes", "trace", "build", "cache", "photo", "draft",
         "export", "index", "sample", "config", "ledger", "audit")
EXTS = (".csv", ".log", ".tar.gz", ".bin", ".json", ".txt", ".pdf", ".db")
NOISE = ("$ echo $SHELL", "/bin/bash", "$ whoami", "alice", "$ date -u +%F", "2024-03-05",
         "$ uptime", " 10:42:01 up 3 days,  2:11,  1 user,  load average: 0.42, 0.37, 0.30",
         "$ pwd", "/home/alice/project", "$ uname -s", "Linux")
TYPO_CMDS = (("python3", ("train.py", "--epochs", "{n}")), ("git", ("commit", "-m", "fix-{w}")),
             ("docker", ("run", "--rm", "{w}:latest")), ("make", ("-j", "{n}", "{w}")),
             ("grep", ("-rn", "{w}", "src")), ("npm", ("run", "{w}")),
             ("tar", ("-xzf", "{w}.tar.gz")), ("curl", ("-s", "http://localhost:{p}/{w}")))


def _noise(rng: random.Random, level: int, room: int) -> list[str]:
    """Earlier, unrelated commands and their output, never pushing the task's rows off screen."""
    pairs = [NOISE[i:i + 2] for i in range(0, len(NOISE), 2)]
    k = min({1: 0, 2: 2, 3: 5}[level], max(0, room) // 2)
    return [line for pair in rng.sample(pairs, k) for line in pair]


def _names(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        name = f"{rng.choice(WORDS)}_{rng.randint(1, 99)}{rng.choice(EXTS)}"
        if name not in out:
            out.append(name)
    return out


def _ps(rng: random.Random, level: int) -> tuple:
    n = rng.randint(*ROWS[level])
    pids = rng.sample(range(300, 39999), n)
    mems = [round(rng.uniform(0.1, 30.0), 1) for _ in range(n)]
    order = sorted(range(n), key=lambda i: -mems[i])
    if mems[order[0]] - mems[order[1]] < 0.5:
        return None
    lines = ["$ ps -eo pid,user,%mem,command", "  PID USER      %MEM COMMAND"]
    lines += [f"{pids[i]:>5} {rng.choice(USERS):<8} {mems[i]:>5.1f} {rng.choice(PROGRAMS)}" for i in range(n)]
    top = str(pids[order[0]])
    accept = [["kill", top]] + [["kill", s, top] for s in ("-9", "-15", "-TERM", "-KILL")]
    probes = {"runner_up": f"kill {pids[order[1]]}", "first_row": f"kill {pids[0]}" if order[0] else None,
              "kill_everything": "kill -9 -1", "pkill_all": "pkill -u alice"}
    return lines, "Stop the process that is using the most memory.", accept, f"kill {top}", probes


def _ls(rng: random.Random, level: int) -> tuple:
    n = rng.randint(*ROWS[level])
    names = _names(rng, n)
    sizes = [rng.randint(100, 900_000) for _ in range(n)]
    dirs = set(rng.sample(range(n), min(n - 2, level - 1))) if level > 1 else set()
    files = [i for i in range(n) if i not in dirs]
    order = sorted(files, key=lambda i: -sizes[i])
    if len(order) < 2 or sizes[order[0]] < 1.2 * sizes[order[1]]:
        return None
    lines = ["$ ls -l", f"total {sum(sizes) // 1024}"]
    for i in range(n):
        kind = "drwxr-xr-x" if i in dirs else "-rw-r--r--"
        name = names[i].split(".")[0] if i in dirs else names[i]
        size = sizes[i] * 4 if i in dirs and level == 3 else (4096 if i in dirs else sizes[i])
        lines.append(f"{kind} 1 alice staff {size:>9} Mar {rng.randint(1, 28):>2} "
                     f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {name}")
    big = names[order[0]]
    accept = [["rm", big], ["rm", "-f", big], ["rm", "./" + big], ["rm", "-f", "./" + big]]
    probes = {"runner_up": f"rm {names[order[1]]}", "smallest": f"rm {names[order[-1]]}",
              "remove_all": "rm -rf *", "glob": "rm *"}
    return lines, "Delete the largest regular file in this directory.", accept, f"rm {big}", probes


def _git(rng: random.Random, level: int) -> tuple:
    n_mod = min(3, level)
    paths = [f"src/{w}.py" for w in rng.sample(WORDS, n_mod + level)]
    mod, untracked = paths[:n_mod], paths[n_mod:]
    lines = ["$ git status", f"On branch {rng.choice(('main', 'dev', 'feature/x'))}",
             "Changes not staged for commit:", '  (use "git add <file>..." to update what will be committed)']
    lines += [f"        modified:   {p}" for p in mod] + ["", "Untracked files:"]
    lines += [f"        {p}" for p in untracked]
    accept = [["git", "add", *perm] for perm in itertools.permutations(mod)]
    probes = {"add_all": "git add -A", "add_dot": "git add .", "untracked": f"git add {untracked[0]}",
              "some": f"git add {mod[0]}" if len(mod) > 1 else None}
    goal = "Stage every modified file for commit, and none of the untracked files."
    return lines, goal, accept, "git add " + " ".join(mod), probes


def _typo(rng: random.Random, level: int) -> tuple:
    prog, args = rng.choice(TYPO_CMDS)
    args = [a.format(n=rng.randint(2, 64), w=rng.choice(WORDS), p=rng.randint(3000, 9000)) for a in args]
    i = rng.randrange(len(prog) - 1)
    bad = prog[:i] + prog[i + 1] + prog[i] + prog[i + 2:]
    if bad == prog:
        return None
    good = " ".join([prog, *args])
    lines = [f"$ {bad} {' '.join(args)}", f"bash: {bad}: command not found"]
    probes = {"unchanged": f"{bad} {' '.join(args)}", "program_only": prog, "list": "ls"}
    goal = "The last command failed because its program name is mistyped. Run it again correctly, with the same arguments."
    return lines, goal, [shlex.split(good)], good, probes


SITUATIONS: dict[str, Callable[[random.Random, int], tuple | None]] = {
    "ps": _ps, "ls": _ls, "git": _git, "typo": _typo}


def build(rng: random.Random, level: int) -> Task:
    kind = rng.choice(sorted(SITUATIONS))
    for _ in range(200):
        made = SITUATIONS[kind](rng, level)
        if made is not None:
            break
    else:
        raise RuntimeError(f"no {kind} screen found for level {level}")
    lines, goal, accept, answer, probes = made
    ref = hashlib.sha256(repr(lines).encode()).hexdigest()[:6]
    screen = _noise(rng, level, TERM_ROWS - len(lines) - 1) + lines + ["$ "]
    text = (f"Terminal session {ref}: the screenshot shows the terminal. {goal} Reply with the one "
            "shell command to type next, as <answer>COMMAND</answer>.")
    return visual_task(DOMAIN, level, text, [terminal_png(screen, f"alice@devbox: ~ ({ref})")],
                       answer=answer, hidden={"accept": accept, "situation": kind,
                                              "probes": {k: v for k, v in probes.items() if v}})


def score(task: Task, answer: str) -> Score:
    got = one_answer(answer)
    tokens = None
    if got is not None and "\n" not in got:
        try:
            tokens = shlex.split(got.removeprefix("$").strip())
        except ValueError:  # unbalanced quotes: not a command
            tokens = None
    ok = tokens is not None and tokens in [list(a) for a in task.hidden["accept"]]
    return Score(float(ok), components={"command": (float(ok), 1.0)},
                 reason="accepted command" if ok else "not an accepted command", verifier_version=DOMAIN)


register_domain(SeeDomain(
    DOMAIN, "tools", build, lambda t: str(t.hidden["answer"]), score,
    lambda t: dict(t.hidden["probes"]),
    description="Screen state (visual): a terminal screenshot -> the next shell command."))
