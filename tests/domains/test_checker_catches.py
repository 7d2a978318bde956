"""The conformance checker fails deliberately broken domains, and passes a correct multi-turn one.

Each broken domain is a small in-test object with exactly one defect, so each test shows the
checker catches that defect (and, via ``test_baseline_passes``, that the baseline is clean).
"""

import random
import time
from dataclasses import replace

import pytest

from posttrain.core.types import Observation, Score, StepResult
from posttrain.domains import exact_score, make_task
from posttrain.rollout.conformance import check_domain
from posttrain.rollout.conformance import generic_probes
from posttrain.envs.base import final_answer
from posttrain.verifiers.text import extract_answer


class Good:
    """Reverse a 7-letter string; strict exact match."""

    id = "text_data.testrev-v1"
    family = "text_data"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"

    def generate(self, rng, difficulty):
        s = "".join(rng.choice("abcdefghij") for _ in range(4 + 2 * difficulty))
        return make_task(self.id, difficulty, f"rev {s}=", answer=s[::-1])

    def solve(self, task):
        return task.hidden["answer"]

    def score(self, task, answer):
        return exact_score(task, answer, self.id, case=True)

    def probes(self, task):
        return {"upper": task.hidden["answer"].upper()}


class Nondeterministic(Good):
    def generate(self, rng, difficulty):
        return super().generate(random.Random(time.perf_counter_ns()), difficulty)


class Constant(Good):
    def generate(self, rng, difficulty):
        return super().generate(random.Random(0), difficulty)


class PaddingCredit(Good):
    def score(self, task, answer):  # "contains the answer" — the classic padding hack
        v = 1.0 if task.hidden["answer"] in answer else 0.0
        return Score(v, verifier_version=self.id)


class LastLineCredit(Good):
    def score(self, task, answer):  # only the last line counts: padding before it is free
        last = (answer.strip().splitlines() or [""])[-1]
        return Score(float(last.strip() == task.hidden["answer"]), verifier_version=self.id)


class LenientCase(Good):
    def score(self, task, answer):  # the domain's own probe (upper case) must catch this
        return exact_score(task, answer, self.id, case=False)


class Raising(Good):
    def score(self, task, answer):
        if not answer.strip():
            raise ValueError("empty answer")
        return super().score(task, answer)


class ReturnsFloat(Good):
    def score(self, task, answer):
        return super().score(task, answer).value


class Leaking(Good):
    def generate(self, rng, difficulty):
        t = super().generate(rng, difficulty)
        content = t.prompt[0]["content"] + " (" + t.hidden["answer"] + ")"
        return replace(t, prompt=({"role": "user", "content": content},))


class LeakingPublic(Good):
    def generate(self, rng, difficulty):
        t = super().generate(rng, difficulty)
        return replace(t, public={"hint": t.hidden["answer"]})


class WrongReference(Good):
    def solve(self, task):
        return task.hidden["answer"][::-1]


class Unpicklable(Good):
    def generate(self, rng, difficulty):
        t = super().generate(rng, difficulty)
        return replace(t, metadata={"fn": lambda: 0})


class TwoLevels(Good):
    difficulties = (1, 2)


class BadFamily(Good):
    family = "cooking"
    id = "cooking.testrev-v1"


class RefusesRoundTrip(Good):
    """Verifier needs a tuple in hidden; JSON turns it into a list, so scheduled tasks break."""

    def generate(self, rng, difficulty):
        t = super().generate(rng, difficulty)
        return replace(t, hidden={"answer": t.hidden["answer"], "chars": tuple(t.hidden["answer"])})

    def score(self, task, answer):
        assert isinstance(task.hidden["chars"], tuple)
        return super().score(task, answer)


class Slow(Good):
    def generate(self, rng, difficulty):
        time.sleep(0.005)
        return super().generate(rng, difficulty)


def _check(dom, **kw):
    return check_domain(dom, seeds=(0, 1), **kw)


def test_baseline_passes():
    rep = _check(Good())
    assert rep.ok, rep.failures
    assert rep.failures == [] and rep.timings["generate_max_s"] >= 0.0


@pytest.mark.parametrize("dom,needle", [
    (Nondeterministic(), "same seed gave different tasks"),
    (Constant(), "different seeds all give the same task"),
    (PaddingCredit(), "probe 'padded_candidates' scored 1.00"),
    (LastLineCredit(), "probe 'long_repeat' scored 1.00"),
    (LenientCase(), "domain probe 'upper' scored 1.00"),
    (Raising(), "verifier error on probe 'empty'"),
    (ReturnsFloat(), "not Score"),
    (Leaking(), "hidden answer written in the prompt"),
    (LeakingPublic(), "hidden answer written in the prompt/public data"),
    (WrongReference(), "reference scored 0.00"),
    (Unpicklable(), "does not pickle"),
    (Unpicklable(), "not JSON-serialisable"),
    (TwoLevels(), "needs >= 3 distinct int difficulties"),
    (BadFamily(), "family 'cooking' is not a known family"),
    (RefusesRoundTrip(), "reference after JSON"),
], ids=lambda x: type(x).__name__ if not isinstance(x, str) else "")
def test_checker_fails_broken_domain(dom, needle):
    rep = _check(dom)
    assert not rep.ok
    assert any(needle in f for f in rep.failures), rep.failures


def test_generation_time_limit():
    assert not _check(Slow(), max_generate_s=0.001).ok
    assert _check(Slow()).ok


def test_failures_are_deduplicated_and_concise():
    rep = _check(PaddingCredit())
    assert len(rep.failures) == len(set(rep.failures)) < 20
    assert all(len(f) < 400 for f in rep.failures)
    assert any("more like it" in f for f in rep.failures)


def test_exemption_is_reported_not_silent():
    class OptIn(Leaking):
        conformance_exempt = {"answer_in_prompt": "the prompt quotes the answer on purpose"}

    rep = _check(OptIn())
    assert rep.ok, rep.failures
    assert any("exempt from answer_in_prompt" in w for w in rep.warnings)


def test_generic_probes_cover_the_brief():
    dom = Good()
    task = dom.generate(random.Random(1), 2)
    probes = generic_probes(task, dom.solve(task))
    ref = dom.solve(task)
    assert {"empty", "whitespace", "garbage", "echo_prompt", "padded_candidates", "format_only",
            "passed", "all_tests_passed", "long_garbage"} <= set(probes)
    assert probes["echo_prompt"] == task.prompt[-1]["content"]
    assert ref in probes["padded_candidates"] and ref in probes["padded_garbage"]
    assert len(probes["long_garbage"]) >= 100_000 and len(probes["long_repeat"]) >= 100_000
    assert extract_answer(probes["format_only"]) == ""


# --- a multi-turn domain: ask for a hint ("look"), then answer ----------------------------

class _LookEnv:
    def __init__(self, task):
        self.task, self.looked = task, False

    def reset(self):
        return Observation(messages=tuple(self.task.prompt))

    def step(self, action):
        if action.text.strip() == "look":
            self.looked = True
            hint = {"role": "user", "content": f"the word is {self.task.hidden['word']}"}
            return StepResult(Observation(messages=(hint,)), reward=0.0, done=False)
        return StepResult(None, reward=0.0, done=True)

    def verify(self, trajectory):
        ok = self.looked and extract_answer(final_answer(trajectory)) == self.task.hidden["answer"]
        return Score(1.0 if ok else 0.0, verifier_version="tools.testlook-v1")


class LookDomain(Good):
    id = "tools.testlook-v1"
    family = "tools"
    env_kind = "tool"

    def generate(self, rng, difficulty):
        w = "".join(rng.choice("abcdefghij") for _ in range(4 + 2 * difficulty))
        return make_task(self.id, difficulty, "Say look, then reverse the word you are shown.",
                         answer=w[::-1], hidden={"word": w})

    def make_env(self, task):
        return _LookEnv(task)

    def reference_actions(self, task):
        return ["look", task.hidden["answer"]]

    def probes(self, task):
        return {"look_then_copy": ["look", task.hidden["word"]], "look_only": ["look"]}


class LookDomainHackable(LookDomain):
    def make_env(self, task):
        env = _LookEnv(task)
        env.verify = lambda traj: Score(1.0 if env.looked else 0.0)  # any answer after a look
        return env


def test_multi_turn_reference_episode_passes():
    rep = _check(LookDomain())
    assert rep.ok, rep.failures


def test_multi_turn_scripted_probe_catches_hack():
    rep = _check(LookDomainHackable())
    assert any("domain probe 'look_then_copy' scored 1.00" in f for f in rep.failures), rep.failures
