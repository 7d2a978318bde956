"""Damaged run folders for the fuzz tests and ``bench/fuzz.py``: a real tiny run, then harm.

What it is: :func:`make_run` trains the tiny model through the real pipeline (SFT, RL with
checkpoints at steps 2 and 4) into a folder; :data:`DAMAGES` are the ways such a folder is
found after a crash, a full disk or a bad copy (a truncated or bit-flipped checkpoint file,
a missing ``meta.json``, a half-written ``groups.jsonl``/``metrics.jsonl`` line, a damaged
middle line, a truncated ``summary.json``, a garbage or locked work store); :func:`resume`
runs the pipeline again on the folder and classifies what happened as an :class:`Resumed`:
``resumed`` (from which step), ``error`` (a typed PosttrainError with its message) or an
escape: ``restart`` (trained from step 0 again: silently lost the run), ``crash`` (an
untyped exception), ``duplicated`` (a step's groups or metrics twice after the resume).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from posttrain.core.config import RunConfig, validate_config
from posttrain.core.errors import PosttrainError

RUN = {
    "run_name": "fuzz-runs", "seed": 3,
    "model": {"tiny": {"hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64}},
    "domains": [{"id": "math.add-v1", "difficulties": [1]}],
    "sft": {"steps": 2, "batch_size": 8},
    "rl": {"steps": 4, "prompts_per_step": 2, "group_size": 2, "max_new_tokens": 4,
           "checkpoint_every": 2, "lr": 0.01, "filter_zero_variance": False},
    "eval": {"heldout_per_domain": 2, "max_new_tokens": 4},
}
CHECKPOINT_STEPS = (2, 4)


def run_config(**sections: Any) -> RunConfig:
    data = json.loads(json.dumps(RUN))
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return validate_config(data)


def make_run(out: Path, cfg: RunConfig | None = None) -> Path:
    from posttrain.trainer.pipeline import run_pipeline

    run_pipeline(cfg or run_config(), out, show_progress=False)
    return out


def _ckpt(out: Path, step: int) -> Path:
    return out / "checkpoints" / f"step_{step:08d}"


def _truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])


def _flip(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    for _ in range(16):
        i = rng.randrange(len(data))
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _weights(ck: Path) -> Path:
    return next((ck / "model").glob("*.safetensors"))


def _locked(out: Path) -> Any:
    conn = sqlite3.connect(out / "work.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS t (x)")
    conn.execute("BEGIN EXCLUSIVE")
    return conn  # the caller keeps it open while resuming


# name -> (damage(out, rng), what a correct pipeline does: "resume:<step>" or "error")
DAMAGES: dict[str, tuple[Callable[[Path, random.Random], Any], str]] = {
    "latest_weights_truncated": (lambda o, r: _truncate(_weights(_ckpt(o, 4)), 0.5), "resume:2"),
    "latest_state_truncated": (lambda o, r: _truncate(_ckpt(o, 4) / "trainer_state.pt", 0.3), "resume:2"),
    "latest_meta_missing": (lambda o, r: (_ckpt(o, 4) / "meta.json").unlink(), "resume:2"),
    "latest_file_deleted": (lambda o, r: _weights(_ckpt(o, 4)).unlink(), "resume:2"),
    "every_checkpoint_truncated": (lambda o, r: [_truncate(_weights(_ckpt(o, s)), 0.5)
                                                 for s in CHECKPOINT_STEPS], "error"),
    "every_meta_missing": (lambda o, r: [(_ckpt(o, s) / "meta.json").unlink()
                                         for s in CHECKPOINT_STEPS], "error"),
    "latest_state_bitflips": (lambda o, r: _flip(_ckpt(o, 4) / "trainer_state.pt", r), "resume:2"),
    "latest_weights_bitflips": (lambda o, r: _flip(_weights(_ckpt(o, 4)), r), "resume:2"),
    "groups_half_line": (lambda o, r: (o / "groups.jsonl").open("a").write('{"step": 4, "traj'),
                         "resume:4"),
    "metrics_half_line": (lambda o, r: (o / "metrics.jsonl").open("a").write('{"step": 7, "loss'),
                          "resume:4"),
    "groups_middle_line_damaged": (lambda o, r: _damage_middle(o / "groups.jsonl"), "error"),
    "summary_truncated": (lambda o, r: _truncate(o / "summary.json", 0.4), "error"),
    "work_store_garbage": (lambda o, r: (o / "work.sqlite").write_bytes(os.urandom(8192)), "error"),
    "work_store_sqlite_header_garbage": (
        lambda o, r: (o / "work.sqlite").write_bytes(b"SQLite format 3\x00" + os.urandom(8192)), "error"),
}
STORE_DAMAGES = {"work_store_garbage", "work_store_sqlite_header_garbage", "work_store_locked"}


def _damage_middle(path: Path) -> None:
    lines = path.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    path.write_text("\n".join(lines) + "\n")


@dataclass(frozen=True)
class Resumed:
    kind: str  # resumed | error | restart | crash | duplicated
    step: int | None = None
    detail: str = ""

    @property
    def escaped(self) -> bool:
        return self.kind not in ("resumed", "error")

    def matches(self, expected: str) -> bool:
        return (self.kind == "error" and expected == "error") or \
            (self.kind == "resumed" and expected == f"resume:{self.step}")


def _steps_once(out: Path) -> str:
    """'' when every RL step's groups and metrics appear once, else what is duplicated."""
    rows = [json.loads(ln) for ln in (out / "groups.jsonl").read_text().splitlines()]
    per_step: dict[int, int] = {}
    for r in rows:
        per_step[r["step"]] = per_step.get(r["step"], 0) + 1
    bad = {s: n for s, n in per_step.items() if n != RUN["rl"]["prompts_per_step"]}
    metrics = [json.loads(ln)["step"] for ln in (out / "metrics.jsonl").read_text().splitlines()]
    dup = sorted({s for s in metrics if metrics.count(s) > 1})
    return (f"groups per step {bad}" if bad else "") + (f" metrics steps twice {dup}" if dup else "")


def resume(out: Path, cfg: RunConfig | None = None) -> Resumed:
    """Run the pipeline again on ``out`` and say what happened (see the module docstring)."""
    import warnings

    from posttrain.trainer.pipeline import run_pipeline

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            summary = run_pipeline(cfg or run_config(), out, show_progress=False)
    except PosttrainError as exc:
        return Resumed("error", None, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - the finding
        return Resumed("crash", None, f"{type(exc).__name__}: {exc}"[:500])
    step = summary.get("resumed_from_step")
    if step is None:
        return Resumed("restart", None, "trained from step 0 again")
    dup = _steps_once(out)
    if dup:
        return Resumed("duplicated", step, dup)
    return Resumed("resumed", step)


def random_damage(out: Path, rng: random.Random) -> Path:
    """Truncate, or overwrite random bytes of, one random file of the latest checkpoint;
    return that file. A correct resume goes on from step 2 or 4, or says what is broken."""
    victim = rng.choice(sorted(p for p in _ckpt(out, 4).rglob("*") if p.is_file()))
    data = bytearray(victim.read_bytes())
    if rng.random() < 0.5:
        data = data[:rng.randrange(len(data))]
    else:
        for _ in range(rng.randint(1, 64)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    victim.write_bytes(bytes(data))
    return victim


def copy_run(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
