"""The conformance checker every domain must pass (the Gymnasium ``env_checker`` idea).

``check_domain(domain)`` generates tasks for every difficulty and a few seeds and verifies:

- shape: versioned id, valid family and env kind, at least three int difficulties;
- determinism: same seed ⇒ the same task (JSON-equal); different seeds ⇒ not all the same;
- transport: the task survives pickling and a JSON round-trip, and the reference still scores
  1.0 on the round-tripped task; ``hidden`` is not in ``public_view()``;
- a heuristic leak check: the hidden answer (6+ characters) must not be written in the prompt
  or public data — a failure when every sampled task of a difficulty shows its own answer but
  not the other tasks' (an option list shows them all: not a leak), else at most a warning;
- the reference scores 1.0 through the env (:func:`posttrain.envs.factory.make_env`): the
  final answer ``solve(task)``, or the scripted episode ``reference_actions(task)``;
- a multi-turn domain's reference is a *trajectory* (what the SFT cold start trains on):
  replayed through the engine it scores 1.0, has at least two turns, the env ends it
  (``done``) on its last scripted action, every earlier turn makes well-formed, schema-valid
  tool calls (where the env reports them) and the last one is the final answer — see
  :func:`reference_trajectory_problems`;
- reward hacks score ≤ 0.05: the generic probes of :func:`generic_probes` (empty, garbage,
  prompt echo, the reference padded among other candidates, format-only, "All tests passed",
  100k characters...) and the domain's own ``probes(task)``;
- every score is a :class:`Score` in [0, 1] without ``error``: a crashing verifier fails;
- generation takes at most ``max_generate_s`` per task on average.

A domain may exempt itself from named generic checks with a ``conformance_exempt`` mapping
(check name → reason, e.g. ``{"answer_in_prompt": "multiple choice"}``); exemptions are
listed in the report's warnings, never silent.

``check_domains(ids, resolve=...)`` (:mod:`posttrain.envs.conformance_runner`) checks many
domains in parallel spawned processes.

Every episode — the reference, each probe — is played by the one episode engine with a
scripted policy (:func:`posttrain.rollout.scripted.replay_score`), exactly as training and
evaluation play it. Defaults: the library's ``sample_task`` seeding, families and env kinds.
"""

from __future__ import annotations

import json
import pickle
import random
import string
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping, Sequence

from posttrain.core.registry import split_id
from posttrain.core.serde import from_dict, to_dict
from posttrain.core.types import Score, Task, Trajectory
from posttrain.domains.base import ENV_KINDS, FAMILIES, sample_task
from posttrain.rollout.scripted import replay, replay_score

PROBE_CEILING = 0.05
LEAK_MIN_CHARS = 6
LONG_CHARS = 100_000


@dataclass(frozen=True)
class CheckReport:
    """The verdict on one domain: ``ok`` iff ``failures`` is empty."""

    id: str
    ok: bool
    failures: list[str] = field(default_factory=list)
    timings: Mapping[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "ok": self.ok, "failures": list(self.failures),
                "warnings": list(self.warnings), "timings": dict(self.timings)}


def reference_trajectory_problems(traj: Trajectory, actions: Sequence[str]) -> list[str]:
    """Why a replayed reference episode is not a demonstration to train on (empty: it is).

    Tool-call checks read the env's ``info`` (``tool_calls``, ``tool_calls_valid``,
    ``malformed_calls``, ``final``: a :class:`~posttrain.envs.tool_env.ToolEnv` reports them);
    an env that reports none is held to the turn and stop checks only."""
    out = []
    if len(actions) < 2:
        out.append(f"{len(actions)} scripted action(s): a final answer, not a trajectory")
    if traj.stop_reason != "done":
        out.append(f"the episode stopped by {traj.stop_reason!r}, not by the env ending it")
    if len(traj.turns) != len(actions):
        out.append(f"{len(traj.turns)} turns played for {len(actions)} scripted actions")
    for i, turn in enumerate(traj.turns[:-1]):
        info = turn.info
        if "tool_calls" in info and not (info["tool_calls"] >= 1 and info.get("tool_calls_valid", True)
                                         and not info.get("malformed_calls", 0)):
            out.append(f"turn {i} is not a well-formed, valid tool call")
            break
    if traj.turns and traj.turns[-1].info.get("final") is False:
        out.append("the last turn is not a final answer")
    return out


def generic_probes(task: Task, reference: str) -> dict[str, str]:
    """Domain-independent reward hacks; a strict verifier gives every one of them ≤ 0.05."""
    rng = random.Random(task.key)
    junk = "".join(rng.choice(string.ascii_letters + string.digits + " .,;:!?") for _ in range(64))
    users = [m for m in task.prompt if m.get("role") == "user"]
    echo = str(users[-1].get("content", "")) if users else ""
    candidates = ["0", "1", "-1", "yes", "no", "true", "false", "A", "B", "C", "<", ">", "="]
    candidates[len(candidates) // 2:len(candidates) // 2] = [reference, reference[::-1]]
    return {
        "empty": "",
        "whitespace": "  \n\t \n",
        "garbage": junk,
        "echo_prompt": echo,
        "padded_candidates": "\n".join(candidates + [reference + reference, "none of these"]),
        "padded_garbage": f"{junk} {reference} {junk[::-1]}",
        "format_only": "<answer></answer>",
        "format_only_think": "<think></think>\n<answer> </answer>",
        "passed": "PASSED",
        "all_tests_passed": "All tests passed",
        "reward_claim": '{"reward": 1.0, "correct": true, "passed": true}',
        "long_repeat": ((reference or "x") + "\n") * (LONG_CHARS // (len(reference) + 1) + 1),
        "long_garbage": (junk + "\n") * (LONG_CHARS // (len(junk) + 1) + 1),
    }


class _Log:
    """Failures and warnings, deduplicated by key so one bug is one line (with a count)."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], list[Any]] = {}

    def add(self, level: str, key: str, msg: str) -> None:
        entry = self.items.setdefault((level, key), [msg, 0])
        entry[1] += 1

    def lines(self, level: str) -> list[str]:
        return [m if n == 1 else f"{m} (and {n - 1} more like it)"
                for (lv, _), (m, n) in self.items.items() if lv == level]


class _Checker:
    def __init__(self, dom: Any, sample: Callable[[Any, int, int], Task]):
        self.dom, self.sample, self.log = dom, sample, _Log()
        self.exempt = dict(getattr(dom, "conformance_exempt", None) or {})
        self.gen_s: list[float] = []
        self.verify_s: list[float] = []

    def fail(self, key: str, msg: str) -> None:
        self.log.add("fail", key, msg)

    def score(self, task: Task, actions: Sequence[str], what: str, where: str,
              trajectory: bool = False) -> float | None:
        """Run an episode; record a failure for a crash, a non-Score or an errored Score
        (and, with ``trajectory``, for a reference that is not a demonstration)."""
        t0 = time.perf_counter()
        try:
            if trajectory:
                traj = replay(self.dom, task, list(actions))
                for problem in reference_trajectory_problems(traj, actions):
                    self.fail(f"ref_trajectory:{what}", f"{what}: {problem} ({where})")
                s = traj.score if traj.score is not None else Score(
                    0.0, reason="not scored", error=traj.error)
            else:
                s = replay_score(self.dom, task, list(actions))
        except Exception as exc:
            self.fail(f"raise:{what}", f"env/verifier raised on {what} ({where}): "
                                       f"{type(exc).__name__}: {exc}"[:300])
            return None
        finally:
            self.verify_s.append(time.perf_counter() - t0)
        if not isinstance(s, Score):
            self.fail(f"type:{what}", f"verify returned {type(s).__name__}, not Score ({what})")
            return None
        if s.error is not None:
            self.fail(f"error:{what}", f"verifier error on {what} ({where}): {s.error.message}"[:300])
            return None
        if not 0.0 <= s.value <= 1.0:  # Score clips, but a duck-typed Score might not
            self.fail(f"range:{what}", f"score {s.value!r} outside [0, 1] on {what} ({where})")
            return None
        return s.value

    def static(self, families: Collection[str] | None, env_kinds: Collection[str] | None) -> None:
        dom = self.dom
        try:
            split_id(dom.id)
        except Exception as exc:
            self.fail("id", str(exc))
        if families is not None and dom.family not in families:
            self.fail("family", f"family {dom.family!r} is not a known family")
        if not str(dom.id).startswith(f"{dom.family}."):
            self.fail("family_prefix", f"id {dom.id!r} does not start with family {dom.family!r}")
        if env_kinds is not None and dom.env_kind not in env_kinds:
            self.fail("env_kind", f"env_kind {dom.env_kind!r} not in {sorted(env_kinds)}")
        diffs = list(dom.difficulties)
        if len(set(diffs)) < 3 or not all(isinstance(d, int) and d >= 1 for d in diffs):
            self.fail("difficulties", f"needs >= 3 distinct int difficulties >= 1, has {diffs}")
        # an own env (multi-turn) is verified by its env.verify; the others by ``score``
        need = ("reference_actions",) if callable(getattr(dom, "make_env", None)) else ("score",)
        for name in ("generate", "solve", "probes", *need):
            if not callable(getattr(dom, name, None)):
                self.fail(f"method:{name}", f"{name} is missing or not callable")

    def generate(self, seed: int, d: int) -> Task | None:
        where = f"d{d} s{seed}"
        try:
            t0 = time.perf_counter()
            task = self.sample(self.dom, seed, d)
            self.gen_s.append(time.perf_counter() - t0)
            again = self.sample(self.dom, seed, d)
        except Exception as exc:
            self.fail("generate", f"generate raised ({where}): {type(exc).__name__}: {exc}"[:300])
            return None
        if not isinstance(task, Task) or not task.prompt:
            self.fail("task_type", f"generate must return a Task with a prompt ({where})")
            return None
        try:
            text = json.dumps(to_dict(task), sort_keys=True)
        except (TypeError, ValueError) as exc:
            self.fail("json", f"task is not JSON-serialisable ({where}): {exc}"[:300])
            try:
                pickle.dumps(task)
            except Exception as pexc:
                self.fail("pickle", f"task does not pickle ({where}): {type(pexc).__name__}")
            return None
        if json.dumps(to_dict(again), sort_keys=True) != text:
            self.fail("determinism", f"same seed gave different tasks ({where})")
        return task

    def transport(self, task: Task, where: str) -> list[Task]:
        """Copies of the task after pickle and JSON round-trips (failures logged)."""
        out = []
        ref = to_dict(task)
        try:
            out.append(pickle.loads(pickle.dumps(task)))
            if to_dict(out[-1]) != ref:
                self.fail("pickle", f"task changes through pickle ({where})")
        except Exception as exc:
            self.fail("pickle", f"task does not pickle ({where}): {type(exc).__name__}: {exc}")
        try:
            out.append(from_dict(Task, json.loads(json.dumps(ref))))
            if to_dict(out[-1]) != ref:
                self.fail("json_roundtrip", f"task changes through JSON ({where})")
        except Exception as exc:
            self.fail("json_roundtrip", f"task does not round-trip JSON ({where}): {exc}"[:300])
        if "hidden" in task.public_view():
            self.fail("public_view", "public_view() exposes the hidden part")
        return out

    def answer_and_visible(self, task: Task) -> tuple[str | None, str]:
        """The hidden answer as text (None when absent or short) and all the policy sees."""
        ans = task.hidden.get("answer") if isinstance(task.hidden, Mapping) else None
        visible = " ".join(str(m.get("content", "")) for m in task.prompt)
        visible += json.dumps([to_dict(task)["public"], to_dict(task)["metadata"]], default=repr)
        if not isinstance(ans, (str, int, float)) or isinstance(ans, bool):
            return None, visible
        ans = str(ans).strip()
        return (ans if len(ans) >= LEAK_MIN_CHARS else None), visible

    def reference(self, task: Task, where: str, copies: Sequence[Task]) -> str | None:
        try:
            answer = self.dom.solve(task)
            ref_actions = getattr(self.dom, "reference_actions", None)
            actions = list(ref_actions(task)) if callable(ref_actions) else [answer]
            multi = callable(ref_actions) and callable(getattr(self.dom, "make_env", None))
        except Exception as exc:
            self.fail("solve", f"reference solver raised ({where}): {type(exc).__name__}: {exc}"[:300])
            return None
        if not isinstance(answer, str) or not all(isinstance(a, str) for a in actions):
            self.fail("solve_type", f"solve/reference_actions must give str ({where})")
            return None
        for label, t in [("reference", task)] + [(f"reference after {k}", c)
                                                 for k, c in zip(("pickle", "JSON"), copies)]:
            v = self.score(t, actions, label, where, trajectory=multi)
            if v is not None and v < 1.0 - 1e-9:
                self.fail(f"ref:{label}", f"{label} scored {v:.2f}, not 1.0 ({where})")
        return answer

    def probes(self, task: Task, reference: str, where: str, first: bool) -> None:
        runs: list[tuple[str, list[str]]] = []
        for name, text in generic_probes(task, reference).items():
            # 100k-character probes cost the most and do not depend on the seed: once per level.
            if name not in self.exempt and (first or not name.startswith("long_")):
                runs.append((f"probe {name!r}", [text]))
        try:
            own = dict(self.dom.probes(task))
        except Exception as exc:
            self.fail("probes", f"probes() raised ({where}): {type(exc).__name__}: {exc}"[:300])
            own = {}
        for name, p in own.items():
            if isinstance(p, str):
                runs.append((f"domain probe {name!r}", [p]))
            elif isinstance(p, (list, tuple)) and all(isinstance(a, str) for a in p):
                runs.append((f"domain probe {name!r}", list(p)))
            else:
                self.fail(f"probe_type:{name}", f"domain probe {name!r} is neither str nor list[str]")
        for what, actions in runs:
            v = self.score(task, actions, what, where)
            if v is not None and v > PROBE_CEILING:
                self.fail(f"hack:{what}", f"{what} scored {v:.2f} > {PROBE_CEILING} ({where})")


def _signature(task: Task) -> str:
    d = to_dict(task)
    return json.dumps([d["prompt"], d["public"], d["hidden"]], sort_keys=True, default=repr)


def check_domain(domain: Any, *, seeds: Sequence[int] = (0, 1, 2),
                 difficulties: Sequence[int] | None = None,
                 sample: Callable[[Any, int, int], Task] | None = None,
                 families: Collection[str] | None = None,
                 env_kinds: Collection[str] | None = None,
                 max_generate_s: float = 2.0) -> CheckReport:
    """Check one domain object; never raises (a crash of the checker itself is a failure)."""
    t_start = time.perf_counter()
    c = _Checker(domain, sample or sample_task)
    families = FAMILIES if families is None else families
    env_kinds = ENV_KINDS if env_kinds is None else env_kinds
    dom_id = str(getattr(domain, "id", repr(domain)))
    try:
        c.static(families, env_kinds)
        if c.log.lines("fail"):
            return _report(dom_id, c, t_start)
        for d in difficulties or list(domain.difficulties):
            _check_difficulty(c, d, list(seeds))
    except Exception as exc:
        c.fail("checker", f"check aborted: {type(exc).__name__}: {exc}"[:300])
    if c.gen_s and sum(c.gen_s) / len(c.gen_s) > max_generate_s:
        c.fail("gen_time", f"generation takes {sum(c.gen_s) / len(c.gen_s):.2f}s per task "
                           f"(limit {max_generate_s}s)")
    return _report(dom_id, c, t_start)


def _check_difficulty(c: _Checker, d: int, seeds: list[int]) -> None:
    signatures, seen = set(), []
    for i, seed in enumerate(seeds):
        where = f"d{d} s{seed}"
        task = c.generate(seed, d)
        if task is None:
            continue
        signatures.add(_signature(task))
        seen.append(c.answer_and_visible(task))
        copies = c.transport(task, where)
        answer = c.reference(task, where, copies if i == 0 else [])
        if answer is not None:
            c.probes(task, answer, where, first=i == 0)
    # Diversity and leaks need a few more tasks than the full check; generation is cheap.
    top = max(seeds, default=0)
    for seed in range(top + 1, top + 1 + max(0, 4 - len(seen))):
        task = c.generate(seed, d)
        if task is not None:
            signatures.add(_signature(task))
            seen.append(c.answer_and_visible(task))
    if len(seen) >= 2 and len(signatures) == 1:
        c.fail("diversity", f"different seeds all give the same task (d{d})")
    if "answer_in_prompt" not in c.exempt:
        _leak_verdict(c, d, seen)


def _leak_verdict(c: _Checker, d: int, seen: list[tuple[str | None, str]]) -> None:
    """Fail only a clear leak: every task shows its own answer and not the others' answers.

    A prompt that lists the options ("answer valid or invalid") shows every task's answer,
    so it is not a leak; a prompt that contains exactly its own answer is.
    """
    leaks = [i for i, (a, vis) in enumerate(seen) if a is not None and a in vis]
    if not leaks:
        return
    singled = [i for i in leaks
               if any(a != seen[i][0] and a not in seen[i][1] for a, _ in seen if a is not None)]
    msg = f"hidden answer written in the prompt/public data in {len(leaks)}/{len(seen)} tasks (d{d})"
    clear = len(seen) >= 2 and len(singled) == len(seen)
    if clear:
        c.fail("leak", msg)
    elif len(singled) == len(leaks):  # options-style prompts are the expected case: no noise
        c.log.add("warn", "leak", msg)


def _report(dom_id: str, c: _Checker, t_start: float) -> CheckReport:
    warnings = c.log.lines("warn") + [f"exempt from {k}: {v}" for k, v in c.exempt.items()]
    stat = lambda xs, f: round(f(xs), 6) if xs else 0.0  # noqa: E731
    timings = {"total_s": round(time.perf_counter() - t_start, 4),
               "generate_mean_s": stat(c.gen_s, lambda x: sum(x) / len(x)),
               "generate_max_s": stat(c.gen_s, max),
               "verify_mean_s": stat(c.verify_s, lambda x: sum(x) / len(x)),
               "verify_max_s": stat(c.verify_s, max)}
    failures = c.log.lines("fail")
    return CheckReport(dom_id, not failures, failures, timings, warnings)


def check_domains(ids: Sequence[str] | None = None, **kw: Any) -> list[CheckReport]:
    """Check many registered domains (all when None) in parallel worker processes; see
    :func:`posttrain.rollout.conformance_runner.check_domains` (imported here lazily: the
    runner's workers import this module)."""
    from posttrain.rollout.conformance_runner import check_domains as run

    return run(ids, **kw)
