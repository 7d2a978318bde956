"""Only the newest complete DCP checkpoints are kept; a half-written one never counts."""

from __future__ import annotations

from posttrain.trainer.fsdp.state import TRAINER_FILE, latest_sharded, prune_sharded


def _ckpt(root, name, complete=True):
    d = root / "dcp" / name
    d.mkdir(parents=True)
    (d / "__0_0.distcp").write_bytes(b"x")
    if complete:
        (d / TRAINER_FILE).write_bytes(b"t")
    return d


def test_prune_keeps_the_newest_complete_ones(tmp_path):
    for n in (2, 4, 10):  # numeric order, not name order: step-10 is the newest
        _ckpt(tmp_path, f"step-{n}")
    half = _ckpt(tmp_path, "step-12", complete=False)  # a save killed before trainer.pt
    tmp = _ckpt(tmp_path, "step-14.tmp")
    gone = prune_sharded(tmp_path, keep_last=2)
    assert [p.name for p in gone] == ["step-2"]
    left = sorted(p.name for p in (tmp_path / "dcp").iterdir())
    assert left == ["step-10", "step-12", "step-14.tmp", "step-4"]
    assert latest_sharded(tmp_path).name == "step-10" and half.exists() and tmp.exists()
    assert prune_sharded(tmp_path, keep_last=2) == []  # idempotent
    assert prune_sharded(tmp_path / "nothing", keep_last=2) == []
