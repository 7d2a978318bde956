"""A resumable async run in a folder (driven and SIGKILLed by test_faults.py).

``python async_run.py OUT STEPS``: train with lag 1 and a checkpoint every step; when OUT
holds a checkpoint, resume from it (weights, optimizer, RNG, stream position, step, version),
dropping logged rows and ledger rows after it.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "async_loop"))

from async_helpers import run_config, setup  # noqa: E402
from fault_envs import SlowEnvFactory  # noqa: E402

from posttrain.trainer.checkpoint import (checkpoint_path, list_checkpoints, load_checkpoint,  # noqa: E402
                                         save_checkpoint)
from posttrain.trainer.loop import BEHAVIOUR_WEIGHTS, AsyncConfig, TaskLedger, train_async  # noqa: E402
from posttrain.trainer.producers import RolloutSettings  # noqa: E402
from posttrain.trainer.reference_loop import RLState  # noqa: E402


def main(out: Path, steps: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cfg = run_config(steps=steps, max_policy_lag=1, group_size=2)
    model, opt, sched, backend, stream, pad = setup(cfg)
    state, found = RLState(), list_checkpoints(out)
    metrics = out / "metrics.jsonl"
    if found:
        ck = load_checkpoint(found[-1][1], model, opt, sched)
        stream.load_state_dict(ck.data_state)
        state = RLState(ck.step, ck.policy_version, int(ck.extra["samples_seen"]),
                        {BEHAVIOUR_WEIGHTS: dict(ck.behaviour_weights)})  # the schedule's older versions
        backend.load_weights(state.policy_version, model.state_dict())
        keep = [ln for ln in metrics.read_text().splitlines() if json.loads(ln)["step"] <= ck.step]
        metrics.write_text("".join(ln + "\n" for ln in keep))
        (out / "resumed.json").write_text(json.dumps({"from_step": ck.step}))

    def log(step, m):
        with metrics.open("a") as fh:
            fh.write(json.dumps({"step": step, **m}) + "\n")

    def checkpoint(st):
        save_checkpoint(checkpoint_path(out, st.step), model=model, optimizer=opt, lr_scheduler=sched,
                        step=st.step, policy_version=st.policy_version, data_state=stream.state_dict(),
                        extra={"samples_seen": st.samples_seen},
                        behaviour_weights=st.extra.get(BEHAVIOUR_WEIGHTS))

    train_async(model, opt, backend, stream, cfg.rl, pad_id=pad, seed=cfg.seed, state=state,
                lr_scheduler=sched, on_step=log, checkpoint=checkpoint, checkpoint_every=1,
                config=AsyncConfig(), settings=RolloutSettings(make_env=SlowEnvFactory(0.3)),
                ledger=TaskLedger(out / "ledger.jsonl"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
