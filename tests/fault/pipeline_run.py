"""The real pipeline (``posttrain train``) in a subprocess that SIGKILLs itself at a known step.

``python pipeline_run.py CONFIG OUT DIE_AT``: run ``run_pipeline`` on CONFIG into OUT; right
after the metrics row of RL step DIE_AT is written, the process sends itself SIGKILL (no
cleanup, no atexit, like the OOM killer). Job DIE_AT (the one after the job just trained)
is a long episode that is still being sampled then. Nothing else differs from the CLI;
test_store_resume.py resumes with the CLI itself.
"""

import os
import signal
import sys
import time
from pathlib import Path

import posttrain.trainer.pipeline as pipeline
import posttrain.trainer.producers as producers
from posttrain.core.config import load_config


def main(config: Path, out: Path, die_at: int) -> None:
    cfg = load_config(config)
    real_writer, real_rollout = pipeline.MetricsWriter, producers.play_scheduled

    class DyingWriter(real_writer):
        def log(self, step, metrics):
            super().log(step, metrics)
            if step == cfg.sft.steps + die_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def slow_rollout(backend, tasks, params, **kwargs):
        if params.seed - cfg.seed * 1_000_003 == die_at:  # the job's sampling seed names it
            time.sleep(120)  # a long episode (sandbox, tools): in flight at the kill
        return real_rollout(backend, tasks, params, **kwargs)

    pipeline.MetricsWriter = DyingWriter
    producers.play_scheduled = slow_rollout
    pipeline.run_pipeline(cfg, out, show_progress=False)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
