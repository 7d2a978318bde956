"""A whole training run from one config: model → SFT → held-out eval → (DPO) → RL → eval → report.

This is what ``posttrain quickstart`` and ``posttrain train CONFIG`` run. The run folder gets:

- ``config.yaml`` (the validated config) and ``metrics.jsonl`` + ``tensorboard/`` events;
- ``checkpoints/step-N`` (exact-resume checkpoints) and ``model/`` (the final policy in HF
  format, loadable with ``from_pretrained`` or ``--model``; with ``model.lora`` the adapter
  merged into the base, and ``adapter/`` the adapter alone in peft's format);
- ``engine_model/`` (``inference.backend: vllm`` only): the policy at the start of RL, the
  folder the vLLM engine starts from; later versions reach the engine in memory
  (``trainer/engines.py``);
- ``reward_<domain>.png`` (RL reward curve per domain);
- ``summary.json``: ``heldout_before``/``heldout_after`` (``overall`` and ``per_domain``, with
  standard errors, every task's reward and the ``policy_version`` evaluated), ``heldout_gain``
  (the paired gain per domain and pooled: same tasks before and after, so its standard error
  is that of the per-task differences), ``inference_backend`` (the engine
  that sampled RL and both evaluations) and ``wall_s`` per phase;
- ``groups.jsonl``: every verified RL group (one TrajectoryGroup per line, plus ``step``:
  the step index that trained on it), for ``posttrain audit`` and ``eval --reuse-groups``;
  the images the episodes saw are stored once in ``images/<sha256>.png`` and referenced by hash;
- ``tasks.jsonl`` (async loop): each scheduled task's outcome; with
  ``async_rl.work_store: sqlite`` instead ``work.sqlite``: the jobs, their results and the
  outcomes (``trainer/store_pool.py``), acknowledged after each checkpoint;
- ``report.html``: the self-contained run report.

Resume: when the run folder already holds an RL checkpoint, the run continues from it
(weights, optimizer, LR schedule, RNG, task-stream / curriculum state, step, policy version,
samples seen, and the older weights the async schedule still samples with), skipping the
phases before RL; the KL reference is the one saved at the start of RL (``kl_reference/``),
not a copy of the resumed policy. So a run SIGKILLed at any point and resumed with the same
command ends with bit-identical weights, at any ``rl.max_policy_lag`` (deterministic
schedule; tested). With the SQLite work store, rollouts completed before the crash but not
yet trained are trained from the file, not sampled again, and jobs in flight are re-run.
A damaged folder resumes from its last good checkpoint (a truncated or corrupt newest one is
skipped; a line cut by a kill at the end of ``groups.jsonl``/``metrics.jsonl`` is dropped)
or fails with one typed error naming the file (every checkpoint broken, a damaged middle
line, an unreadable ``summary.json`` or work store): never a silent restart from step 0.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

import yaml

from posttrain.core.config import RunConfig, config_hash
from posttrain.core.errors import SchedulerError
from posttrain.core.images import ImageStore, externalize
from posttrain.core.serde import to_dict
from posttrain.eval.tracking import MetricsWriter
from posttrain.inference.base import InferenceBackend
from posttrain.scheduler.ledger import OutcomeLedger
from posttrain.scheduler.store import WorkStore
from posttrain.trainer.checkpoint import (CheckpointError, checkpoint_path, list_checkpoints,
                                         load_checkpoint, load_reference, prune_checkpoints,
                                         save_checkpoint, save_reference)
from posttrain.trainer.engines import close_backend, make_rollout_backend, probe_backend
from posttrain.trainer.heldout import heldout_accuracy, paired_gain
from posttrain.trainer.lora import save_policy
from posttrain.trainer.optim import optimizer_from_config
from posttrain.trainer.phases import load_policy, run_dpo, run_sft, set_threads
from posttrain.trainer.plots import reward_curves
from posttrain.trainer.producers import engine_session
from posttrain.trainer.progress import RunProgress
from posttrain.trainer.loop import BEHAVIOUR_WEIGHTS, TaskLedger, train_async
from posttrain.trainer.reference_loop import RLState, frozen_reference, train_rl
from posttrain.trainer.sft import pad_id_of
from posttrain.trainer.store_pool import ack_trained
from posttrain.trainer.tasks import make_stream
from posttrain.trainer.validate import check_run_config, episode_limits


@contextmanager
def _timed(wall: dict[str, float], name: str) -> Iterator[None]:
    t0 = time.perf_counter()
    yield
    wall[name] = round(wall.get(name, 0.0) + time.perf_counter() - t0, 3)


def _heldout(backend: InferenceBackend, cfg: RunConfig) -> dict[str, Any]:
    return heldout_accuracy(backend, cfg.domains, cfg.eval.heldout_per_domain,
                            cfg.eval.seed_offset, cfg.eval.max_new_tokens,
                            limits=episode_limits(cfg.episode))


def _heldout_metrics(result: dict[str, Any]) -> dict[str, float]:
    """``eval/heldout/<domain>`` and ``eval/heldout/overall`` of one held-out evaluation."""
    return {"eval/heldout/overall": result["overall"],
            **{f"eval/heldout/{d}": v for d, v in result["per_domain"].items()}}


def _rl_logger(cfg: RunConfig, backend: InferenceBackend, model: Any, tokenizer: Any,
               writer: MetricsWriter, offset: int):
    """The RL loops' ``on_step``: log the step's metrics, with the held-out accuracy of the
    weights just trained every ``eval.every_steps`` steps (the last step is eval_after's)."""
    every, probe = cfg.eval.every_steps, []

    def on_step(step: int, metrics: dict[str, float]) -> None:
        if every and step % every == 0 and step < cfg.rl.steps:
            if not probe:  # the loop's backend may be sampling (async producers): engines.py
                probe.append(probe_backend(backend, model, tokenizer))
            # labelled with the version just published: a shared engine's next job pulls by label
            version = int(metrics.get("rollout/policy_version", step))
            with engine_session(probe[0]):
                probe[0].load_weights(version, model.state_dict())
                metrics = {**metrics, **_heldout_metrics(_heldout(probe[0], cfg))}
        writer.log(offset + step, metrics)

    return on_step


def _jsonl_rows(path: Path) -> list[tuple[str, dict]]:
    """The rows of a run's JSONL log. A half-written last line (the process was killed while
    appending it) is dropped: it belongs to a step after the last checkpoint, which the resume
    redoes. A broken line before the last one is damage, not a kill: a CheckpointError naming
    the file and line, never a traceback or a silently shortened log."""
    lines = path.read_text(errors="replace").splitlines()
    rows = []
    for i, ln in enumerate(lines):
        try:
            obj = json.loads(ln)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or "step" not in obj and "policy_version" not in obj:
            if i == len(lines) - 1:
                break
            raise CheckpointError(f"{path}:{i + 1} is not a complete JSON row; the run folder is "
                                  "damaged (only the last line may be cut by a kill)")
        rows.append((ln, obj))
    return rows


def _truncate_metrics(path: Path, last_step: int) -> None:
    """Drop logged rows after ``last_step``: a killed run logged steps its checkpoint lacks."""
    if not path.exists():
        return
    keep = [ln for ln, row in _jsonl_rows(path) if row.get("step", last_step + 1) <= last_step]
    path.write_text("".join(ln + "\n" for ln in keep))


def _truncate_groups(path: Path, last_step: int) -> None:
    """Drop groups of steps after the checkpoint (each line's ``step``: the step that trained
    on it; lines without one, from older runs, by policy version, exact for lag 0 only)."""
    if not path.exists():
        return
    keep = [ln for ln, row in _jsonl_rows(path)
            if row.get("step", row.get("policy_version")) < last_step]
    path.write_text("".join(ln + "\n" for ln in keep))


def _group_keeper(stream: Any, groups_file: Any, first_step: int):
    """The RL loops' ``on_groups``: feed the curriculum, append each group with its ``step``."""
    step = [first_step]  # on_groups comes once per step, in step order
    images = ImageStore(Path(groups_file.name).parent / "images")

    def keep_groups(groups: list) -> None:
        if hasattr(stream, "update"):  # the curriculum learns from every verified group
            stream.update(groups)
        # Images are stored once in images/ and referenced by sha256 (core/images.py).
        groups_file.write("".join(json.dumps({**externalize(to_dict(g), images), "step": step[0]},
                                             sort_keys=True) + "\n" for g in groups))
        groups_file.flush()  # before the step's checkpoint: a kill must not lose them
        step[0] += 1

    return keep_groups


@contextmanager
def _run_pool(cfg: RunConfig) -> Iterator[Any]:
    """The run's own sandbox pool (``sandbox:`` section), installed for its episodes and closed
    at the end, so no sandbox of the run outlives it."""
    from posttrain.envs.tool_env import use_pool
    from posttrain.sandbox import SandboxPool, Timeouts

    sb = cfg.sandbox
    pool = SandboxPool(backend=sb.backend, max_total=sb.pool_size, warm=0,
                       timeouts=Timeouts(wall_s=sb.wall_s, cpu_s=sb.cpu_s, create_s=60.0))
    try:
        with use_pool(pool):
            yield pool
    finally:
        pool.close()


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    # atomically: a kill while writing must not leave a resume a truncated summary
    tmp = out / f".summary.json.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(summary, indent=2, sort_keys=True))
    os.replace(tmp, out / "summary.json")


def _read_summary(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / "summary.json").read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{out / 'summary.json'} is missing or damaged ({exc}); a resume needs "
                              "the held-out figures it holds") from None


def _render_report(out: Path) -> str | None:
    try:
        from posttrain.eval.report import render_run_report
    except ImportError:
        return None
    return str(render_run_report(out))


def _kl_reference(cfg: RunConfig, out: Path, model: Any, *, resumed: bool) -> Any:
    """The KL reference: the policy now (start of RL), saved once; the saved one on resume."""
    if cfg.rl.kl_coef <= 0:
        return None
    ref = frozen_reference(model)
    if resumed:
        return load_reference(out, ref)
    save_reference(out, ref)  # before the first checkpoint: a resumable folder always has it
    return ref


def _open_work(cfg: RunConfig, out: Path):
    """``(work store or None, ledger)``: the SQLite file of ``async_rl.work_store: sqlite``."""
    if cfg.async_rl.work_store != "sqlite":
        return None, TaskLedger(out / "tasks.jsonl")
    path = out / "work.sqlite"
    try:
        store = WorkStore(path, max_attempts=cfg.async_rl.max_attempts)
        return store, OutcomeLedger(store)
    except sqlite3.DatabaseError as exc:  # not a database, malformed, or locked past the timeout
        why = ("locked by another process (is another run using this folder?)"
               if "locked" in str(exc) else "not a readable SQLite database")
        raise SchedulerError(f"work store {path} is {why}: {exc}; its rollouts cannot be resumed "
                             "(move it away to start the asynchronous phase over)") from None


def run_pipeline(cfg: RunConfig, out: str | Path, *, show_progress: bool = True) -> dict[str, Any]:
    """Run every phase of ``cfg`` into ``out``; returns the summary written to summary.json."""
    check_run_config(cfg)  # a bad config fails before any work starts (and any file is written)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    set_threads(cfg.torch_threads)
    wall: dict[str, float] = {}
    summary: dict[str, Any] = {"run_name": cfg.run_name, "config_hash": config_hash(cfg),
                               "domains": [d.id for d in cfg.domains], "wall_s": wall}
    found = list_checkpoints(out, verify_latest=True)  # a damaged newest one: the one before
    resume_from = found[-1][1] if found else None
    if found:
        _truncate_metrics(out / "metrics.jsonl", cfg.sft.steps + found[-1][0])
        _truncate_groups(out / "groups.jsonl", found[-1][0])
    with _run_pool(cfg), MetricsWriter(out) as writer, RunProgress(cfg, enabled=show_progress) as bar, \
            ExitStack() as engines:
        with _timed(wall, "model"):
            model, tokenizer = load_policy(cfg)
        pad_id = pad_id_of(tokenizer)
        if resume_from is None:
            with _timed(wall, "sft"):
                run_sft(model, tokenizer, cfg, on_step=lambda s, m: writer.log(s, m),
                        progress=bar.advance("sft"))
        with _timed(wall, "engine"):  # vLLM: save the policy folder, start the engine
            backend = make_rollout_backend(cfg, model, tokenizer, out)
            engines.callback(close_backend, backend)  # vLLM: shut the engine down, even on error
        summary["inference_backend"] = cfg.inference.backend
        stream = make_stream(cfg.domains, cfg.seed, cfg.curriculum, cfg.rl.prompts_per_step)
        optimizer, schedule = optimizer_from_config(model, cfg.rl)
        state = RLState()
        if resume_from is not None:
            ck = load_checkpoint(resume_from, model, optimizer, schedule)
            stream.load_state_dict(ck.data_state)
            state = RLState(ck.step, ck.policy_version, int(ck.extra.get("samples_seen", 0)),
                            {BEHAVIOUR_WEIGHTS: dict(ck.behaviour_weights)})
            summary.update(_read_summary(out))
            summary["resumed_from_step"] = ck.step
            wall = summary["wall_s"]
            backend.load_weights(state.policy_version, model.state_dict())
        else:
            with _timed(wall, "eval_before"):
                summary["heldout_before"] = _heldout(backend, cfg)
                bar.note(f"held-out before RL: {summary['heldout_before']['overall']:.3f}")
            if cfg.eval.every_steps:  # the curve's first point: RL step 0
                writer.log(cfg.sft.steps, _heldout_metrics(summary["heldout_before"]))
            if cfg.dpo.steps:
                with _timed(wall, "dpo"):
                    run_dpo(model, backend, cfg, pad_id=pad_id,
                            on_step=lambda s, m: writer.log(s, m))
                    backend.load_weights(0, model.state_dict())
            _write_summary(out, summary)
        ref_model = _kl_reference(cfg, out, model, resumed=resume_from is not None)

        work, ledger = _open_work(cfg, out)

        def checkpoint(st: RLState) -> None:
            save_checkpoint(checkpoint_path(out, st.step), model=model,
                            tokenizer=tokenizer, optimizer=optimizer, lr_scheduler=schedule,
                            step=st.step, policy_version=st.policy_version,
                            data_state=stream.state_dict(),
                            extra={"samples_seen": st.samples_seen},
                            behaviour_weights=st.extra.get(BEHAVIOUR_WEIGHTS))
            prune_checkpoints(out, keep_last=2)
            if work is not None:  # the checkpoint holds these results now
                ack_trained(work, st.step)

        groups_file = (out / "groups.jsonl").open("a")
        keep_groups = _group_keeper(stream, groups_file, state.step)
        with _timed(wall, "rl"):
            rl_offset = cfg.sft.steps  # RL steps continue the SFT step axis in the logs
            common = dict(pad_id=pad_id, seed=cfg.seed, state=state, lr_scheduler=schedule,
                          on_step=_rl_logger(cfg, backend, model, tokenizer, writer, rl_offset),
                          limits=episode_limits(cfg.episode), filters=cfg.filters,
                          checkpoint=checkpoint, checkpoint_every=cfg.rl.checkpoint_every,
                          progress=bar.advance("rl", start=state.step), on_groups=keep_groups,
                          ref_model=ref_model)
            if cfg.rl.max_policy_lag >= 1:  # rollouts overlap training (trainer/loop.py)
                state = train_async(model, optimizer, backend, stream, cfg.rl, config=cfg.async_rl,
                                    ledger=ledger, work_store=work, **common)
            else:  # the synchronous reference loop
                state = train_rl(model, optimizer, backend, stream, cfg.rl, **common)
            checkpoint(state)
        groups_file.close()
        if work is not None:
            work.close()
        with _timed(wall, "eval_after"):
            summary["heldout_after"] = _heldout(backend, cfg)
            # the same tasks as before: per-task differences, so a gain's z is exact
            summary["heldout_gain"] = paired_gain(summary["heldout_before"], summary["heldout_after"])
            g = summary["heldout_gain"]["overall"]
            bar.note(f"held-out after RL: {summary['heldout_after']['overall']:.3f} "
                     f"(paired gain {g['gain']:+.3f} ± {g['se']:.3f}, n {g['n']})")
            if cfg.eval.every_steps:  # the curve's last point
                writer.log(rl_offset + state.step, _heldout_metrics(summary["heldout_after"]))
        save_policy(model, tokenizer, out / "model")  # LoRA: merged, adapter/ beside it
        if hasattr(stream, "curriculum"):  # the run report draws it as a heatmap
            stream.curriculum.write_json(str(out / "curriculum.json"))
            stream.curriculum.heatmap(str(out / "curriculum.png"))
    summary["rl_steps"] = state.step
    summary["policy_version"] = state.policy_version
    summary["plots"] = reward_curves(out / "metrics.jsonl", out, [d.id for d in cfg.domains])
    summary["wall_s"]["total"] = round(sum(v for k, v in wall.items() if k != "total"), 3)
    _write_summary(out, summary)
    summary["report"] = _render_report(out)
    _write_summary(out, summary)
    return summary
