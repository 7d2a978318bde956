"""Write tests that kill mutants: ``code.misc_mutant_kill-v1``.

Trains: writing discriminating unit tests. The policy sees a function's specification and
its correct source and writes ``def check(f)``, which must return normally for a correct
implementation ``f`` and raise (an ``assert``) for a wrong one. Hidden: 2, 3 or 4 mutants
(difficulty; each a one-point AST mutation of the source — a comparison, an arithmetic
operator, an integer constant — kept only when it differs from the source on some input, so
no mutant is equivalent).

Verifier: the family's static gate (``check`` defined; allow-listed imports; no open, exit,
eval, dunders...), then in one fresh sandbox each variant runs in its *own* forked copy of a
clean interpreter (the tests are imported after the fork, so no state survives a run), always
under the same module name (``impl.f``): the correct source first, every mutant, the correct
source again last. The parent reports each run through a line tagged with a random
per-verification nonce the tests never see; a child that crashes, exits or runs past 3 s
(alarm) reports nothing and counts as a failure of ``check``.
Reward = gate × killed / mutants, where gate = ``check`` passed both correct runs (a test
that fails everything earns 0; a test that passes everything kills nothing). Components:
``passes_correct`` and ``killed``.

Probes (≤ 0.05): ``check`` that always fails, that asserts nothing, that raises SystemExit,
that fails from its second call on (state kept in a list: each run is a fresh fork,
and the correct source also runs last), and the reference source itself.
Does not: measure test quality beyond these mutants.
"""

from __future__ import annotations

import ast
import json
import random
import secrets

from posttrain.core.errors import SandboxError
from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer, pool_lease
from posttrain.verifiers.code import extract_code, static_check

from ._kit import answer_reference
from ._problems import TEMPLATES, run_source

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.Mod: ast.FloorDiv}


def _sites(tree: ast.AST) -> list[ast.AST]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _FLIP:
            out.append(node)
        elif isinstance(node, ast.BinOp) and type(node.op) in _FLIP:
            out.append(node)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            out.append(node)
    return out


def mutant(source: str, k: int) -> str:
    """The k-th one-point mutant of ``source``."""
    tree = ast.parse(source)
    node = _sites(tree)[k]
    if isinstance(node, ast.Compare):
        node.ops[0] = _FLIP[type(node.ops[0])]()
    elif isinstance(node, ast.BinOp):
        node.op = _FLIP[type(node.op)]()
    else:
        node.value += 1
    return ast.unparse(tree) + "\n"


_RUNNER = '''import json, os, signal, sys, types
variants = json.load(open("_variants.json"))
for i, src in enumerate(variants):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a fresh copy of this interpreter: nothing the tests keep survives the run
        os.close(r)
        signal.alarm(3)
        ok = False
        try:
            mod = types.ModuleType("impl")
            exec(compile(src, "impl.py", "exec"), mod.__dict__)
            sys.modules["impl"] = mod
            import tests
            tests.check(getattr(mod, "{fn}"))
            ok = True
        except BaseException:
            ok = False
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    print("{nonce}", i, json.dumps(got == b"1"), flush=True)
'''


def run_variants(code: str, fn: str, variants: list[str]) -> list[bool]:
    """Whether ``check`` passed on each variant (each in a forked copy of a clean interpreter)."""
    nonce = secrets.token_hex(16)
    with pool_lease()() as sb:
        sb.write_file("tests.py", code)
        sb.write_file("_run.py", _RUNNER.format(fn=fn, nonce=nonce))
        sb.write_file("_variants.json", json.dumps(variants))
        res = sb.exec(["python3", "-B", "-E", "-s", "_run.py"], timeout=15, cpu_time=15)
        if res.status == "sandbox_error":
            raise SandboxError(f"sandbox failed while running tests: {res.reason}")
    out = [False] * len(variants)
    seen = set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == nonce and parts[1].isdigit():
            i = int(parts[1])
            if 0 <= i < len(variants) and i not in seen:
                seen.add(i)
                out[i] = parts[2] == "true"
    return out


def _draw(rng: random.Random, difficulty: int) -> Draft:
    pool = [t for t in TEMPLATES if t.level == difficulty and "while" not in t.source]
    for _ in range(40):
        t = rng.choice(pool)
        c = t.consts(rng)
        src = ast.unparse(ast.parse(t.source.format(**c))) + "\n"
        inputs = [t.inputs(rng, c) for _ in range(40)]
        want = json.dumps(run_source(src, t.name, inputs))
        sites = list(range(len(_sites(ast.parse(src)))))
        rng.shuffle(sites)
        muts = []
        for k in sites:
            m = mutant(src, k)
            if m not in muts and json.dumps(run_source(m, t.name, inputs)) != want:
                muts.append(m)
            if len(muts) == difficulty + 1:
                break
        if len(muts) == difficulty + 1:
            break
    else:
        raise RuntimeError("no mutants")
    prompt = (f"Specification: {t.spec.format(**c)}\nA correct implementation:\n```python\n{src}```\n"
              f"Write a Python test: a function check(f) that returns normally when f is a correct "
              f"implementation of {t.name} and raises (e.g. fails an assert) when f is subtly wrong. "
              "Hidden mutants of the code will be run through it. Reply with the test module "
              "inside <answer>...</answer>.")
    ref_test = (f"{src}\n\ndef check(f):\n    cases = {json.dumps(inputs)}\n"
                f"    for args in cases:\n        assert f(*args) == {t.name}(*args)\n")
    return Draft(prompt, public={"function": t.name, "source": src},
                 hidden={"mutants": muts, "reference": ref_test})


def _check(task: Task, answer: str) -> Score:
    code = extract_code(answer)
    why = static_check(code, "check")
    muts = task.hidden["mutants"]
    if why is not None:
        return Score(0.0, components={"passes_correct": (0.0, 0.0), "killed": (0.0, 1.0)},
                     passed=0, total=len(muts), reason=f"static check: {why}",
                     verifier_version=task.domain)
    src = task.public["source"]
    res = run_variants(code, task.public["function"], [src] + muts + [src])
    gate = res[0] and res[-1]
    killed = sum(not ok for ok in res[1:-1])
    frac = killed / len(muts) if gate else 0.0
    return Score(frac, components={"passes_correct": (float(gate), 0.0), "killed": (frac, 1.0)},
                 passed=killed, total=len(muts),
                 reason=f"killed {killed}/{len(muts)} mutants" if gate
                 else "the tests fail the correct implementation", verifier_version=task.domain)


def _exploits(task: Task) -> dict:
    fn = task.public["function"]
    return {"always_fail": format_answer("def check(f):\n    assert False\n"),
            "asserts_nothing": format_answer("def check(f):\n    pass\n"),
            "system_exit": format_answer("def check(f):\n    raise SystemExit(0)\n"),
            "stateful": format_answer("CALLS = []\ndef check(f):\n    CALLS.append(1)\n"
                                      "    assert len(CALLS) == 1 or CALLS[0] == 2\n"
                                      "    CALLS[0] = 2\n"),
            "source_only": format_answer(task.public["source"] + f"\ncheck = {fn}\n")}


MutantKill = register_domain(SingleTurnDomain(
    "code.misc_mutant_kill-v1", _draw, _check, _exploits, reference=answer_reference,
    description=__doc__, env_kind="sandbox"))
