"""Write a script that produces an output: ``terminal.script-v1``.

Trains: writing a small POSIX shell script (awk, sort, uniq...) that turns ``input.txt`` into
a required output. The task shows one input (in the tree) and its expected output; the
policy writes ``run.sh`` (run as ``sh run.sh`` in the directory holding ``input.txt``).
Difficulty 1: sum of the numbers (one per line); 2: the distinct words, sorted, one per line;
3: ``name,score`` CSV rows → ``name max`` per name, sorted by name.

Reward: after the episode, ``run.sh`` alone is copied into a *fresh* sandbox and run on
three hidden inputs; each case holds when the exit code is 0 and stdout equals the expected
output (trailing whitespace ignored). The value is the fraction of cases that hold — the
public example is not scored, so hard-coding it earns nothing.

Probes (≤ 0.05): ``hardcode_public`` (echo the shown output), ``cat_input``, ``exit_zero``
(an empty script that exits 0), plus the terminal and generic probes.
"""

from __future__ import annotations

import random
from collections import defaultdict

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import ToolEnv, pool_lease
from posttrain.verifiers.fs_state import _norm_lines

from ._kit import TreeDomain, done, files_task, read, write

WORDS = ["apple", "pear", "fig", "kiwi", "plum", "lime", "date", "peach", "grape", "melon"]
REFERENCE = {
    1: "awk '{ s += $1 } END { print s + 0 }' input.txt\n",
    2: "tr -s ' \\t' '\\n\\n' < input.txt | grep -v '^$' | sort -u\n",
    3: "awk -F, '{ if (!($1 in m) || $2 > m[$1]) m[$1] = $2 } END { for (k in m) print k, m[k] }' input.txt | sort\n",
}
ASK = {1: "print the sum of the integers in input.txt (one per line)",
       2: "print the distinct words of input.txt (separated by spaces or newlines), sorted, one per line",
       3: "input.txt has rows name,score; print 'name max' with each name's highest score, sorted by name"}


def _case(rng: random.Random, d: int) -> tuple[str, str]:
    if d == 1:
        xs = [rng.randint(-50, 500) for _ in range(rng.randint(3, 9))]
        return "".join(f"{x}\n" for x in xs), f"{sum(xs)}\n"
    if d == 2:
        ws = [rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
        rows = [" ".join(ws[i:i + 3]) for i in range(0, len(ws), 3)]
        return "\n".join(rows) + "\n", "".join(f"{w}\n" for w in sorted(set(ws)))
    best: dict[str, int] = defaultdict(lambda: -1)
    rows = []
    for _ in range(rng.randint(4, 10)):
        n, s = rng.choice(WORDS[:5]), rng.randint(0, 99)
        rows.append(f"{n},{s}")
        best[n] = max(best[n], s)
    return "\n".join(rows) + "\n", "".join(f"{n} {best[n]}\n" for n in sorted(best))


def run_cases(script: str, cases: list[list[str]]) -> list[float]:
    """1.0 per hidden case where ``sh run.sh`` exits 0 with the expected stdout (fresh sandbox)."""
    out = []
    with pool_lease()() as sb:
        sb.write_file("run.sh", script)
        for inp, want in cases:
            sb.write_file("input.txt", inp)
            res = sb.exec(["sh", "run.sh"], timeout=5, cpu_time=5)
            out.append(float(res.exit_code == 0 and _norm_lines(res.stdout) == _norm_lines(want)))
    return out


DOMAIN_ID = "terminal.script-v1"


def _build(rng: random.Random, difficulty: int) -> Task:
    shown, shown_out = _case(rng, difficulty)
    cases = []
    while len(cases) < 3:
        c = _case(rng, difficulty)
        if c[0] != shown and c[1] != shown_out and list(c) not in cases:
            cases.append(list(c))
    text = (f"Write run.sh, a POSIX shell script run as 'sh run.sh' next to input.txt, that "
            f"should {ASK[difficulty]}. For the input.txt given, the output must be:\n{shown_out}"
            "It will also be run on other inputs.")
    return files_task(DOMAIN_ID, difficulty, text, {"input.txt": shown}, [],
                      hidden={"cases": cases, "shown_output": shown_out})


def _verify(env: ToolEnv, trajectory) -> Score:
    raw = read(env, "run.sh", max_bytes=1 << 16)
    script = None if raw is None else raw.decode("utf-8", "replace")
    n = len(env.task.hidden["cases"])
    if not script:
        return Score(0.0, components={f"case{i}": (0.0, 1.0) for i in range(n)}, passed=0,
                     total=n, reason="no run.sh", verifier_version=env.task.domain)
    ok = run_cases(script, env.task.hidden["cases"])
    return Score(sum(ok) / n, components={f"case{i}": (v, 1.0) for i, v in enumerate(ok)},
                 passed=int(sum(ok)), total=n, reason=f"{int(sum(ok))}/{n} hidden inputs",
                 verifier_version=env.task.domain)


def _reference(task: Task) -> list[str]:
    return [write("run.sh", REFERENCE[task.difficulty])]


def _probes(task: Task) -> dict[str, list[str]]:
    shown = task.hidden["shown_output"]
    return {"hardcode_public": [write("run.sh", f"cat <<'EOF'\n{shown}EOF\n"), done()],
            "cat_input": [write("run.sh", "cat input.txt\n"), done()],
            "exit_zero": [write("run.sh", "exit 0\n"), done()]}


# no predicate names a path, so the family's touch_expected probe has nothing to touch
register_domain(TreeDomain(DOMAIN_ID, _build, _reference, _probes, verifier=_verify,
                           skip_common=("touch_expected",), description=__doc__))
