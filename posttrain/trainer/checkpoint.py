"""Checkpoints that restore a training run exactly, written atomically.

A checkpoint is a folder::

    <dir>/model/             weights, HF ``save_pretrained`` format (safetensors); a LoRA policy's
                             adapter only, in peft's format (``trainer/lora.py``)
    <dir>/tokenizer/         ``tokenizer.save_pretrained`` (when a tokenizer is given)
    <dir>/trainer_state.pt   optimizer, LR scheduler, RNG states (python, numpy, torch[, cuda]),
                             step, policy version, data position, extra (any picklable state,
                             e.g. the task scheduler's)
    <dir>/behaviour/vN.safetensors  the older weights versions the async loop's deterministic
                             schedule still samples with (``max_policy_lag`` of them at most)
    <dir>/meta.json          step, policy version, format — written last

and, once per run, ``<run>/kl_reference/`` (:func:`save_reference`): the KL reference, the
policy at the start of RL, which a resume loads instead of copying the resumed policy.

Guarantees:
- exact: loading into a fresh model/optimizer and continuing gives bitwise the same losses
  and the same random draws as never having stopped (tested); with the behaviour weights and
  the KL reference, a killed async run at any policy lag ends bit-identical (tested);
- atomic: everything is written and fsynced in a hidden sibling temp folder, then renamed
  into place; a kill at any point leaves either the old checkpoint or the new one, never a
  half-written folder under the real name; :func:`latest_checkpoint` skips temp folders;
- checked: ``meta.json`` lists every file's size; a checkpoint damaged later (a truncated or
  missing file) is skipped for the one before it, a corrupt file fails the load with a
  :class:`CheckpointError` naming the checkpoint, and a run folder whose checkpoints are all
  broken is an error, never a silent restart from step 0.

The weight files themselves (write, read back under the model's own names) are
:mod:`posttrain.trainer.weight_files`.

Not: a security boundary — ``trainer_state.pt`` is a pickle; load only your own runs.
Sharded/distributed optimizer state is out of scope (single-process trainer).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import uuid
import warnings
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np
import torch

from posttrain.core.errors import CheckpointError

from .weight_files import load_state_dicts, load_weights, save_state_dicts, save_weights

FORMAT_VERSION = 1
CHECKPOINTS_SUBDIR = "checkpoints"
REFERENCE_SUBDIR = "kl_reference"
BEHAVIOUR_SUBDIR = "behaviour"
_STEP_DIR = re.compile(r"step_\d+")


@dataclass(frozen=True)
class CheckpointState:
    path: Path
    step: int
    policy_version: int
    data_state: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    behaviour_weights: Mapping[int, Mapping[str, torch.Tensor]] = field(default_factory=dict)


def checkpoint_path(run_dir: str | Path, step: int) -> Path:
    """Conventional location of the checkpoint of ``step`` in a run folder."""
    return Path(run_dir) / CHECKPOINTS_SUBDIR / f"step_{int(step):08d}"


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fsync_tree(root: Path) -> None:
    for dirpath, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(dir: str | Path, *, model: Any, tokenizer: Any = None, optimizer: Any = None,
                    step: int, policy_version: int, data_state: Mapping[str, Any] | None = None,
                    extra: Mapping[str, Any] | None = None, lr_scheduler: Any = None,
                    behaviour_weights: Mapping[int, Mapping[str, torch.Tensor]] | None = None) -> Path:
    """Write a checkpoint to ``dir`` atomically (replacing one already there); returns ``dir``.

    ``behaviour_weights``: ``{version: state dict}`` of older versions a resume needs
    (``loop.behaviour_weights``)."""
    final = Path(dir)
    with _atomic_dir(final) as tmp:
        save_weights(model, tmp / "model")
        if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
            tokenizer.save_pretrained(str(tmp / "tokenizer"))
        if behaviour_weights:
            save_state_dicts(behaviour_weights, tmp / BEHAVIOUR_SUBDIR)
        torch.save({
            "optimizer": optimizer.state_dict() if optimizer is not None else None,
            "lr_scheduler": lr_scheduler.state_dict() if lr_scheduler is not None else None,
            "rng": rng_state(),
            "step": int(step), "policy_version": int(policy_version),
            "data_state": dict(data_state or {}), "extra": dict(extra or {}),
        }, tmp / "trainer_state.pt")
        meta = {"format": FORMAT_VERSION, "step": int(step), "policy_version": int(policy_version),
                "files": _file_sizes(tmp)}
        (tmp / "meta.json").write_text(json.dumps(meta))
    return final


def _crc32(path: Path) -> int:
    crc = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def _file_sizes(root: Path) -> dict[str, list[int]]:
    """Every file's ``[size, crc32]`` by path relative to ``root``: what a resume checks before
    trusting a checkpoint (sizes cheaply for every one, checksums for the one it loads; a
    flipped byte in optimizer state would otherwise load without a sound)."""
    return {str(f.relative_to(root)): [f.stat().st_size, _crc32(f)]
            for f in sorted(root.rglob("*")) if f.is_file()}


def checkpoint_problem(path: str | Path, *, deep: bool = False) -> str | None:
    """Why ``path`` is not a complete checkpoint (None when it is): no readable ``meta.json``,
    or a file that ``meta.json`` lists missing, of another size or (``deep``: read in full)
    of another checksum. Older checkpoints, without the list, are checked by their meta only."""
    path = Path(path)
    meta = _read_meta(path)
    if meta is None:
        return "no readable meta.json"
    files = meta.get("files")
    if not isinstance(files, dict):
        return None
    for rel, want in files.items():
        size, crc = (want, None) if isinstance(want, int) else (want[0], want[1])
        f = path / rel
        try:
            got = f.stat().st_size
        except OSError:
            return f"{rel} is missing"
        if got != size:
            return f"{rel} has {got} bytes, {size} were written"
        if deep and crc is not None and _crc32(f) != crc:
            return f"{rel} does not match its checksum (the file changed after it was written)"
    return None


@contextmanager
def _atomic_dir(final: Path) -> Iterator[Path]:
    """A hidden temp sibling of ``final`` to fill; fsynced and renamed into place after the block
    (removed if it raises)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in final.parent.glob(f".{final.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a save that was killed
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        _fsync_tree(tmp)
        _swap_into_place(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_into_place(tmp: Path, final: Path) -> None:
    """Rename ``tmp`` to ``final``; an existing ``final`` is moved aside first, then deleted."""
    trash = None
    if final.exists():
        trash = final.parent / f".{final.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(final, trash)
    os.replace(tmp, final)
    _fsync_dir(final.parent)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def _read_meta(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((path / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and "step" in meta else None


def load_checkpoint(dir: str | Path, model: Any, optimizer: Any = None, lr_scheduler: Any = None,
                    *, restore_rng: bool = True) -> CheckpointState:
    """Restore weights, optimizer, LR scheduler and RNG states in place; return the rest."""
    path = Path(dir)
    problem = checkpoint_problem(path, deep=True)
    if problem is not None:
        raise CheckpointError(f"{path} is not a complete checkpoint ({problem}); "
                              "delete it to resume from the one before")
    try:
        load_weights(model, path / "model")
        # Our own file: it holds numpy RNG state and arbitrary picklable `extra`.
        state = torch.load(path / "trainer_state.pt", map_location="cpu", weights_only=False)
    except CheckpointError:
        raise
    except Exception as exc:  # a corrupt file: say which checkpoint, never a bare traceback
        raise CheckpointError(f"checkpoint {path} is corrupt ({type(exc).__name__}: {str(exc)[:300]}); "
                              "delete it to resume from the one before") from exc
    if optimizer is not None:
        if state["optimizer"] is None:
            raise CheckpointError(f"{path} was saved without optimizer state")
        optimizer.load_state_dict(state["optimizer"])
    if lr_scheduler is not None:
        if state["lr_scheduler"] is None:
            raise CheckpointError(f"{path} was saved without LR scheduler state")
        lr_scheduler.load_state_dict(state["lr_scheduler"])
    if restore_rng:
        set_rng_state(state["rng"])
    return CheckpointState(path, state["step"], state["policy_version"],
                           state["data_state"], state["extra"],
                           load_state_dicts(path / BEHAVIOUR_SUBDIR))


def reference_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / REFERENCE_SUBDIR


def save_reference(run_dir: str | Path, model: Any) -> Path:
    """Write the KL reference (the policy at the start of RL) once per run, atomically."""
    final = reference_path(run_dir)
    with _atomic_dir(final) as tmp:
        save_weights(model, tmp / "model")
        # no "step": list_checkpoints must never take this folder for a checkpoint
        (tmp / "meta.json").write_text(json.dumps({"format": FORMAT_VERSION, "kind": "kl_reference"}))
    return final


def load_reference(run_dir: str | Path, into: Any) -> Any:
    """Load the saved KL reference into ``into`` (e.g. ``frozen_reference(model)``); returns it."""
    folder = reference_path(run_dir)
    if not (folder / "meta.json").is_file():  # written last: absent means never or half written
        raise CheckpointError(f"{folder} holds no complete KL reference (written at the start of RL "
                              f"when rl.kl_coef > 0); this run folder cannot resume with a KL term")
    load_weights(into, folder / "model")
    return into


def list_checkpoints(run_dir: str | Path, *, verify_latest: bool = False) -> list[tuple[int, Path]]:
    """Complete checkpoints as ``(step, path)``, oldest first.

    Looks in ``run_dir/checkpoints`` when it exists, else in ``run_dir`` itself; hidden
    (temporary) folders are ignored. A checkpoint folder that is not complete
    (:func:`checkpoint_problem`: a truncated or missing file, an unreadable ``meta.json``) is
    skipped with a warning, so a resume goes on from the last good one (``verify_latest``:
    the newest is also read in full against its checksums, and dropped in turn until one
    passes — what a resume calls before loading it); when every checkpoint
    folder is broken this raises :class:`CheckpointError` — a run never silently restarts
    from zero. (Other folders of ``run_dir``, such as ``model/``, are not checkpoints.)
    """
    root = Path(run_dir)
    in_subdir = (root / CHECKPOINTS_SUBDIR).is_dir()
    if in_subdir:
        root = root / CHECKPOINTS_SUBDIR
    if not root.is_dir():
        return []
    found, broken = [], []
    for child in root.iterdir():
        if not child.is_dir() or child.name.startswith("."):
            continue
        problem = checkpoint_problem(child)
        if problem is None:
            found.append((int(_read_meta(child)["step"]), child))
        elif in_subdir or _STEP_DIR.fullmatch(child.name):
            broken.append(f"{child} ({problem})")
    found.sort(key=lambda item: (item[0], item[1].name))
    while verify_latest and found:
        problem = checkpoint_problem(found[-1][1], deep=True)
        if problem is None:
            break
        broken.append(f"{found.pop()[1]} ({problem})")
    if broken and not found:
        raise CheckpointError("no complete checkpoint to resume from: " + "; ".join(sorted(broken)) +
                              " — delete the run folder's checkpoints to start over")
    for b in sorted(broken):
        warnings.warn(f"skipping a broken checkpoint: {b}", RuntimeWarning, stacklevel=2)
    return found


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """The complete checkpoint with the highest step, or None."""
    found = list_checkpoints(run_dir)
    return found[-1][1] if found else None


def prune_checkpoints(run_dir: str | Path, keep_last: int) -> list[Path]:
    """Delete all but the ``keep_last`` newest checkpoints; returns the deleted paths."""
    found = list_checkpoints(run_dir)
    doomed = [p for _, p in found[:max(0, len(found) - keep_last)]]
    for p in doomed:
        shutil.rmtree(p, ignore_errors=True)
    return doomed
