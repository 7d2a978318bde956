"""The curriculum as the task source of training runs: determinism, resume, run artefacts."""

import json

import pytest
from typer.testing import CliRunner

from posttrain.cli.main import app
from posttrain.core.config import DomainSpec
from posttrain.core.errors import ConfigError
from posttrain.core.types import Score, Trajectory, TrajectoryGroup
from posttrain.trainer.tasks import CurriculumStream

SPECS = [DomainSpec(id="math.add-v1", difficulties=[1, 2, 3]),
         DomainSpec(id="math.compare-v1", difficulties=[1, 2])]


def _groups(tasks, reward):
    return [TrajectoryGroup(t, tuple(Trajectory(t, (), Score(reward)) for _ in range(4)))
            for t in tasks]


def test_cells_follow_the_curriculum_and_resume_exactly():
    a = CurriculumStream(SPECS, seed=1)
    for _ in range(5):
        tasks = a.next(8)
        assert all(t.difficulty in (1, 2, 3) for t in tasks)
        a.update(_groups(tasks, 1.0))  # everything solved: the curriculum should promote
    look_ahead = a.task_at(a.position + 3)  # the async loop draws ahead of consumption
    state = a.state_dict()
    b = CurriculumStream(SPECS, seed=1)
    b.load_state_dict(state)
    assert b.task_at(b.position + 3) == look_ahead
    assert [t.key for t in a.next(16)] == [t.key for t in b.next(16)]
    assert a.curriculum.metrics()["sched/promotions"] >= 1


SMALL = ["--set", "model.tiny.hidden_size=32", "--set", "model.tiny.num_layers=1",
         "--set", "model.tiny.num_heads=2", "--set", "model.tiny.intermediate_size=64",
         "--set", "sft.steps=2", "--set", "sft.batch_size=4", "--set", "rl.steps=3",
         "--set", "rl.prompts_per_step=2", "--set", "rl.group_size=2",
         "--set", "rl.checkpoint_every=0", "--set", "eval.heldout_per_domain=2"]


def test_run_with_curriculum_writes_its_state(tmp_path):
    res = CliRunner().invoke(app, ["quickstart", "--out", str(tmp_path / "r"), *SMALL,
                                   "--set", "curriculum.enabled=true"])
    assert res.exit_code == 0, res.output
    cur = json.loads((tmp_path / "r" / "curriculum.json").read_text())
    assert {c["domain"] for c in cur["cells"]} >= {"math.add-v1"}
    assert (tmp_path / "r" / "curriculum.png").exists()


def test_bad_curriculum_config_fails_before_work(tmp_path):
    from posttrain.core.config import load_config
    from posttrain.trainer.pipeline import run_pipeline

    cfg = load_config(None, ["curriculum.enabled=true", "curriculum.config={promote_at: 7}"])
    with pytest.raises(ConfigError):
        run_pipeline(cfg, tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_stage_weights_advance_with_the_training_step():
    """A long-horizon domain ramps in as configured: step 0 weight 0, from step 10 weight 1."""
    specs = [DomainSpec(id="math.add-v1"), DomainSpec(id="long_horizon.data_pipeline-v1")]
    stages = {"domain": {"weight": [[0, 1.0]]}, "long_horizon": {"weight": [[0, 0.0], [10, 1.0]]}}
    s = CurriculumStream(specs, seed=0, config={"stages": stages}, prompts_per_step=4)
    early = [s.task_at(i).domain for i in range(0, 40)]       # steps 0-9
    late = [s.task_at(i).domain for i in range(40, 200)]      # steps 10-49
    assert s.curriculum.step == 49
    assert "long_horizon.data_pipeline-v1" not in early[:4]  # weight 0 at step 0
    assert early.count("long_horizon.data_pipeline-v1") < late.count("long_horizon.data_pipeline-v1") / 4
    assert late.count("long_horizon.data_pipeline-v1") > 40  # about half once the ramp is done
