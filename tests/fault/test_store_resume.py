"""Kill the pipeline mid-RL with the SQLite work store, resume with the CLI: nothing lost or redone.

Real pieces: the tiny model, the real pipeline and CLI in subprocesses, real SQLite, a real
SIGKILL (the process sends it to itself right after logging RL step 4, so what is in flight
is known: the result of job 3 is trained but not checkpointed, job 4 is being sampled).
"""

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from posttrain.scheduler.ledger import OutcomeLedger
from posttrain.scheduler.store import WorkStore

HERE = Path(__file__).resolve().parent
STEPS, P, G, SFT, DIE_AT, CKPT = 6, 2, 2, 4, 4, 3
CFG = f"""
run_name: store-resume
seed: 3
model: {{tiny: {{hidden_size: 32, num_layers: 2, num_heads: 2, intermediate_size: 64}}}}
domains: [{{id: math.add-v1, difficulties: [1]}}, {{id: math.compare-v1, difficulties: [1]}}]
sft: {{steps: {SFT}, batch_size: 8}}
rl: {{steps: {STEPS}, prompts_per_step: {P}, group_size: {G}, max_new_tokens: 4,
     checkpoint_every: {CKPT}, lr: 0.01, filter_zero_variance: false, max_policy_lag: 1}}
async_rl: {{work_store: sqlite}}
curriculum: {{enabled: true, config: {{group_size: {G}}}}}
eval: {{heldout_per_domain: 2, max_new_tokens: 4}}
"""
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
# what must be equal when a step is trained again from the same stored rollouts
SAME = ("loss/", "rollout/", "reward/", "async/lag", "async/dropped", "async/downweighted")


def _rows(path: Path) -> dict[int, dict]:
    rows = [json.loads(ln) for ln in path.read_text().splitlines()]
    steps = [r["step"] for r in rows]
    assert len(steps) == len(set(steps)), f"a step logged twice: {steps}"
    return {r["step"] - SFT: r for r in rows if r["step"] > SFT}


def _items(out: Path) -> dict[str, dict]:
    conn = sqlite3.connect(out / "work.sqlite")
    cur = conn.execute("SELECT key, state, attempts, seq, acked, result, last_error, payload FROM items")
    names = [d[0] for d in cur.description]
    items = {r[0]: dict(zip(names, r)) for r in cur.fetchall()}
    conn.close()
    return items


def test_killed_pipeline_resumes_through_the_work_store(tmp_path):
    cfg_path, out = tmp_path / "c.yaml", tmp_path / "run"
    cfg_path.write_text(CFG)
    killed = subprocess.run([sys.executable, str(HERE / "pipeline_run.py"), str(cfg_path), str(out),
                             str(DIE_AT)], env=ENV, capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr.decode()[-3000:]
    before = _items(out)
    crashed_rows = _rows(out / "metrics.jsonl")
    assert sorted(crashed_rows) == list(range(1, DIE_AT + 1))
    # at the kill: jobs 0-2 acked (checkpoint 3), job 3 trained but only in memory, job 4 in flight
    assert [before[f"job/{j:08d}"]["acked"] for j in range(3)] == [1, 1, 1]
    assert before["job/00000003"]["state"] == "done" and not before["job/00000003"]["acked"]
    assert before["job/00000004"]["state"] == "running"

    resumed = subprocess.run([sys.executable, "-m", "posttrain", "train", str(cfg_path), "--out", str(out)],
                             env=ENV, capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr.decode()[-3000:]
    after, rows = _items(out), _rows(out / "metrics.jsonl")

    # every step logged once, in order, counters continuing from the checkpoint
    assert sorted(rows) == list(range(1, STEPS + 1))
    for step, r in rows.items():
        assert r["rollout/policy_version"] == step and r["rollout/samples_seen"] == step * P * G
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resumed_from_step"] == CKPT and summary["rl_steps"] == STEPS

    # the completed-but-untrained job was reused, not sampled again, and trained identically
    for key, item in before.items():
        if item["state"] == "done":
            assert (after[key]["seq"], after[key]["attempts"]) == (item["seq"], item["attempts"]), key
            if not item["acked"]:
                assert after[key]["result"] == item["result"], key
    # bodies below the previous checkpoint (3; the last is 6) are dropped: the file stays flat
    assert [after[f"job/{j:08d}"]["result"] for j in range(CKPT)] == ["null"] * CKPT
    assert all(json.loads(after[f"job/{j:08d}"]["payload"]).get("compacted") == 1 for j in range(CKPT))
    assert all(after[f"job/{j:08d}"]["result"] != "null" for j in range(CKPT, STEPS))
    assert rows[4]["async/store_reused"] >= 1 and rows[4]["async/store_recovered"] == 1
    for k, v in crashed_rows[4].items():
        if k.startswith(SAME):
            assert rows[4][k] == v, k
    # the in-flight job was re-run once (its attempt spent by the crash), nothing else
    assert after["job/00000004"]["attempts"] == 2 and after["job/00000004"]["last_error"] == "lease expired"

    # every job done and acknowledged once; every task accounted for exactly once, in the same file
    assert sorted(after) == [f"job/{j:08d}" for j in range(STEPS)]
    assert all(i["state"] == "done" and i["acked"] for i in after.values())
    store = WorkStore(out / "work.sqlite")
    ledger = OutcomeLedger(store)
    scheduled = Counter((j, t["domain"] + f"/d{t['difficulty']}/s{t['seed']}") for j in range(STEPS)
                        for t in json.loads(store.item(f"job/{j:08d}")["payload"])["tasks"])
    assert Counter((r["job"], r["task"]) for r in ledger.rows) == scheduled  # each task once
    assert sorted(int(t.rsplit("/s", 1)[1]) for _, t in scheduled) == list(range(STEPS * P))  # seeds
    assert all(r["outcome"] == "trained" or r["reason"] for r in ledger.rows)
    assert sum(c["groups"] for c in ledger.cell_stats()) == STEPS * P
    kept = [json.loads(ln) for ln in (out / "groups.jsonl").read_text().splitlines()]
    assert [g["step"] for g in kept] == [j for j in range(STEPS) for _ in range(P)]  # each group once
    assert all(g["policy_version"] >= g["step"] - 1 for g in kept)  # within the lag bound of 1
