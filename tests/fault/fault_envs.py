"""Envs, backends and checks for fault injection (importable by spawned workers: top-level only)."""

from __future__ import annotations

import time
from collections import Counter

from posttrain.core.errors import SandboxError
from posttrain.core.types import Completion
from posttrain.domains.base import get_domain
from posttrain.envs.base import SingleTurnEnv
from posttrain.envs.factory import make_env


class SlowEnv:
    """A real domain env whose step waits like a remote sandbox call."""

    def __init__(self, task, delay_s):
        self.inner, self.delay_s, self.task = make_env(get_domain(task.domain), task), delay_s, task

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        time.sleep(self.delay_s)
        return self.inner.step(action)

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


class SlowEnvFactory:
    def __init__(self, delay_s: float):
        self.delay_s = delay_s

    def __call__(self, task):
        return SlowEnv(task, self.delay_s)


def raising_verifier_env(task):
    """Even seeds: the verifier raises (a bug in a verifier must be recorded, not crash the run)."""
    dom = get_domain(task.domain)

    def scorer(t, answer):
        if t.seed % 2 == 0:
            raise RuntimeError(f"verifier exploded on {t.key}")
        return dom.score(t, answer)

    return SingleTurnEnv(task, scorer, verifier_version=dom.id)


class SandboxEnv:
    """Runs ``echo ANSWER`` in a real process sandbox; seeds divisible by 3 crash the sandbox first."""

    def __init__(self, task):
        from posttrain.sandbox.process import ProcessSandbox

        self.task, self.inner = task, make_env(get_domain(task.domain), task)
        self.sandbox = ProcessSandbox()

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        try:
            if self.task.seed % 3 == 0:
                self.sandbox.close()  # the sandbox dies under the episode
            self.sandbox.write_file("answer.txt", action.text.encode())
            res = self.sandbox.exec(["cat", "answer.txt"], timeout=5)
            if res.status != "ok":
                raise SandboxError(f"sandbox exec failed: {res.status}")
            return self.inner.step(action)
        finally:
            self.sandbox.close()

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


class MalformedBackend:
    """Wraps a real backend and corrupts what it returns, as a broken server would."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = 0

    @property
    def policy_version(self):
        return self.inner.policy_version

    def load_weights(self, version, weights):
        self.inner.load_weights(version, weights)

    def generate(self, prompts, params):
        self.calls += 1
        out = self.inner.generate(prompts, params)
        if self.calls % 3 == 2:
            return out[:-1]  # too few groups: an inference error for the whole call
        bad = []
        for g, group in enumerate(out):
            row = []
            for i, c in enumerate(group):
                if (g + i) % 2:
                    c = Completion("\x00\ufffd" * 40, (), (), "error", c.policy_version, c.prompt_token_ids)
                row.append(c)
            bad.append(row)
        return bad


def expected_keys(stream_factory, n):
    s = stream_factory()
    return Counter(s.task_at(i).key for i in range(n))


def assert_accounted(ledger, keys: Counter):
    got = Counter(r["task"] for r in ledger.rows)
    assert got == keys, f"ledger {dict(got)} != scheduled {dict(keys)}"
    for r in ledger.rows:
        assert r["outcome"] in ("trained", "dropped", "failed"), r
        if r["outcome"] != "trained":
            assert r["reason"], r
