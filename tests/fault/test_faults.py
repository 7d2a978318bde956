"""Fault injection on the async loop: every scheduled task is accounted for exactly once.

Kill a local rollout process mid-episode; crash a sandbox; raise inside a verifier; feed
malformed model output; kill the trainer and resume from its checkpoint. Real pieces: the
tiny model, the HF backend, real domains, real process sandboxes, spawned processes.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from async_helpers import run_config, setup
from fault_envs import (MalformedBackend, SandboxEnv, SlowEnvFactory, assert_accounted, expected_keys,
                        raising_verifier_env)

from posttrain.trainer.loop import AsyncConfig, TaskLedger, train_async
from posttrain.trainer.producers import ProcessProducerPool, RolloutSettings
from posttrain.trainer.tasks import TaskStream

HERE = Path(__file__).resolve().parent


def _train(cfg, *, settings=None, acfg=None, pool=None, backend_wrap=None):
    model, opt, sched, backend, stream, pad = setup(cfg)
    if backend_wrap is not None:
        backend = backend_wrap(backend)
    rows, ledger = {}, TaskLedger()
    state = train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, lr_scheduler=sched,
                        on_step=lambda s, m: rows.__setitem__(s, m), config=acfg or AsyncConfig(),
                        settings=settings, ledger=ledger, pool=pool(model, backend) if pool else None)
    keys = expected_keys(lambda: TaskStream(cfg.domains, seed=cfg.seed), cfg.rl.steps * cfg.rl.prompts_per_step)
    assert_accounted(ledger, keys)
    assert sorted(rows) == list(range(1, cfg.rl.steps + 1)) and state.step == cfg.rl.steps
    return rows, ledger


def test_killed_rollout_process_is_replaced_and_its_job_rerun():
    cfg = run_config(steps=3, max_policy_lag=1, group_size=2)
    settings = RolloutSettings(make_env=SlowEnvFactory(0.4))
    made, killed = [], []

    def pool(model, backend):
        p = ProcessProducerPool(backend.model, backend.tokenizer, 0, settings, num_workers=1,
                                max_attempts=2, state_dict=model.state_dict())
        made.append(p)

        def assassin():  # kill the worker while it holds its first job (sleeping in env.step)
            end = time.time() + 120
            while time.time() < end and not p.busy_pids():
                time.sleep(0.02)
            time.sleep(0.3)
            pids = p.busy_pids()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        threading.Thread(target=assassin, daemon=True).start()
        return p

    rows, ledger = _train(cfg, settings=settings, pool=pool)
    assert killed and made[0].restarts >= 1
    assert rows[cfg.rl.steps]["async/worker_restarts"] >= 1
    assert ledger.counts().get("failed", 0) == 0  # the re-run succeeded: nothing lost


def test_sandbox_crash_is_recorded_and_the_run_completes():
    cfg = run_config(steps=3, prompts_per_step=2, group_size=2)
    rows, ledger = _train(cfg, settings=RolloutSettings(make_env=SandboxEnv))
    failed = [r for r in ledger.rows if r["outcome"] == "failed"]
    crashed = {f"s{s}" for s in range(6) if s % 3 == 0}
    assert {r["task"].rsplit("/", 1)[1] for r in failed} == crashed
    assert all(r["reason"].startswith("sandbox") for r in failed)
    assert sum(m["rollout/unusable"] for m in rows.values()) == 2 * len(crashed)


def test_raising_verifier_is_recorded_never_raised():
    cfg = run_config(steps=2, prompts_per_step=2, group_size=2)
    rows, ledger = _train(cfg, settings=RolloutSettings(make_env=raising_verifier_env))
    for r in ledger.rows:
        even = int(r["task"].rsplit("/s", 1)[1]) % 2 == 0
        assert (r["outcome"] == "failed") == even, r
        if even:
            assert "verifier exploded" in r["reason"]


def test_malformed_model_output_is_data_not_a_crash():
    cfg = run_config(steps=3, prompts_per_step=2, group_size=2)
    rows, ledger = _train(cfg, backend_wrap=MalformedBackend)
    # a call that returns too few groups is retried prompt by prompt (the engine isolates the
    # bad prompt), and garbage completions are verified like any answer: the run completes
    assert sorted(rows) == list(range(1, cfg.rl.steps + 1))
    assert len(ledger.rows) == cfg.rl.steps * cfg.rl.prompts_per_step
    failed = [r for r in ledger.rows if r["outcome"] == "failed"]
    assert all("inference" in r["reason"] for r in failed)
    assert any(r["outcome"] != "failed" for r in ledger.rows)


def _rows(out: Path):
    return [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]


def test_killed_trainer_resumes_from_its_checkpoint(tmp_path):
    out, steps = tmp_path / "run", 6
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(HERE / "async_run.py"), str(out), str(steps)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if (out / "metrics.jsonl").exists() and len(_rows(out)) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    resumed = subprocess.run(cmd, env=env, capture_output=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr.decode()[-3000:]
    rows = _rows(out)
    assert [r["step"] for r in rows] == list(range(1, steps + 1))  # each step once, in order
    assert json.loads((out / "resumed.json").read_text())["from_step"] >= 1
    for r in rows:  # the counters continue where the checkpoint left them
        assert r["rollout/policy_version"] == r["step"]
        assert r["rollout/samples_seen"] == r["step"] * 2 * 2
    ledger = TaskLedger(out / "ledger.jsonl")
    cfg = run_config(steps=steps)
    assert_accounted(ledger, expected_keys(lambda: TaskStream(cfg.domains, seed=cfg.seed), steps * 2))
