"""run_pipeline and the config: checked before any work; ``episode`` reaches both RL loops;
``eval.every_steps`` logs held-out accuracy during RL. Real runs of a 1-layer tiny model
(about 2 s each)."""

import json

import pytest

from posttrain.core.config import load_config
from posttrain.core.errors import ConfigError
from posttrain.trainer.pipeline import run_pipeline

TINY = ["model.tiny.hidden_size=32", "model.tiny.num_layers=1", "model.tiny.num_heads=2",
        "model.tiny.intermediate_size=64", "sft.steps=0", "rl.steps=2", "rl.prompts_per_step=2",
        "rl.group_size=2", "rl.max_new_tokens=8", "eval.heldout_per_domain=2",
        "domains=[{id: math.add-v1, difficulties: [1]}]"]


@pytest.mark.parametrize("bad", ["rl.algorithm=grpoo", "domains=[{id: math.ad-v1}]",
                                 "async_rl.executor=thred", "inference.backend=openai"])
def test_run_pipeline_raises_before_any_file(tmp_path, bad):
    cfg = load_config(None, [*TINY, bad])
    with pytest.raises(ConfigError, match=bad.split("=")[0].replace("domains", "domains.0.id")):
        run_pipeline(cfg, tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("lag", [0, 1], ids=["reference_loop", "async_loop"])
def test_episode_budgets_reach_the_rl_loop(tmp_path, lag):
    """``episode.max_total_tokens: 3`` caps every RL sample at 3 tokens although
    ``rl.max_new_tokens`` is 8 (an untrained model almost never stops earlier), in the
    synchronous and the asynchronous loop alike; ``eval.every_steps: 1`` logs held-out
    accuracy before RL, after step 1 and at the end."""
    cfg = load_config(None, [*TINY, "episode.max_total_tokens=3", "eval.every_steps=1",
                             f"rl.max_policy_lag={lag}"])
    summary = run_pipeline(cfg, tmp_path / "run", show_progress=False)
    lengths = [len(turn["action"]["token_ids_T"])
               for ln in (tmp_path / "run" / "groups.jsonl").read_text().splitlines()
               for traj in json.loads(ln)["trajectories"] for turn in traj["turns"]]
    assert len(lengths) == 2 * 2 * 2  # steps x prompts x group
    assert max(lengths) == 3, lengths
    rows = [json.loads(ln) for ln in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    evals = [(r["step"], r["eval/heldout/math.add-v1"]) for r in rows if "eval/heldout/overall" in r]
    assert [s for s, _ in evals] == [0, 1, 2]
    assert evals[0][1] == summary["heldout_before"]["per_domain"]["math.add-v1"]
    assert evals[-1][1] == summary["heldout_after"]["per_domain"]["math.add-v1"]
    # the same tasks before and after: the summary's gain is the paired one
    before, after = (summary[k]["rewards"]["math.add-v1"] for k in ("heldout_before", "heldout_after"))
    assert len(before) == len(after) == cfg.eval.heldout_per_domain
    gain = summary["heldout_gain"]["per_domain"]["math.add-v1"]
    assert gain["gain"] == pytest.approx(evals[-1][1] - evals[0][1])

