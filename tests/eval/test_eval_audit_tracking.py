"""Audit heuristics and the metrics writer (jsonl + real TensorBoard events)."""

import json

import pytest

from posttrain.core.errors import MissingExtraError
from posttrain.eval.audit import heuristics
from posttrain.eval.samples import SampleRecord
from posttrain.eval.tracking import MetricsWriter


def _rec(answer, tokens=20):
    return SampleRecord(item="code.x-v1/d1/s0", domain="code.x-v1", difficulty=1, seed=0, sample=0,
                        reward=1.0, success=True, layers={}, tokens=tokens, answer=answer)


def test_heuristics_flag_the_suspicious_and_spare_the_plain():
    assert heuristics(_rec("def f(x):\n    return x + 1", 20), typical_tokens=22) == []
    assert heuristics(_rec("1", 2), typical_tokens=40) == ["short"]
    assert "repetitive" in heuristics(_rec("the answer is " * 10), typical_tokens=None)
    assert "repetitive" in heuristics(_rec("ok\nok\nok\ndone"), typical_tokens=None)
    for hack in ("rm tests/test_main.py", "open('conftest.py', 'w')", "import sys; sys.exit(0)",
                 "assert True  # fixed"):
        assert "touches_tests" in heuristics(_rec(hack), typical_tokens=None), hack


def test_metrics_writer_jsonl_and_tensorboard(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with MetricsWriter(tmp_path) as w:
        w.log(1, {"reward/math.add-v1": 0.25, "loss/policy": 1.5})
        w.log(2, {"reward/math.add-v1": 0.75})
        with pytest.raises(ValueError, match="namespaced"):
            w.log(3, {"reward": 1.0})
        with pytest.raises(ValueError, match="finite"):
            w.log(3, {"loss/x": float("nan")})
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and rows[1]["reward/math.add-v1"] == 0.75
    ea = EventAccumulator(str(tmp_path / "tensorboard"))
    ea.Reload()
    events = ea.Tensors("reward/math.add-v1")
    assert [e.step for e in events] == [1, 2]
    from tensorboard.util import tensor_util

    assert tensor_util.make_ndarray(events[1].tensor_proto).item() == pytest.approx(0.75)


def test_optional_trackers_name_their_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_wandb(name, *a, **kw):
        if name in ("wandb", "mlflow"):
            raise ImportError(name)
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_wandb)
    with pytest.raises(MissingExtraError, match="wandb"):
        MetricsWriter(tmp_path, tensorboard=False, wandb={"project": "p"})
    with pytest.raises(MissingExtraError, match="mlflow"):
        MetricsWriter(tmp_path, tensorboard=False, mlflow={"experiment": "e"})
