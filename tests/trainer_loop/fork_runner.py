"""A fork server for ``posttrain train`` runs: import once, then fork one real process per run.

Importing torch, transformers and the domain library, and the lazy imports of a first run,
cost about 5.5 s per process here against about 1 s for the run itself; a matrix of
kill/resume runs would spend most of its time importing. This server (its own subprocess,
single-threaded when it forks) does one warm-up run (``fork_runner.py CONFIG OUT``) and then,
for each request, forks a child that runs the real CLI entry point
(``posttrain.cli.main.main`` with ``sys.argv = ["posttrain", "train", ...]``): a separate OS
process with its own memory, files and exit status, as ``python -m posttrain train`` gives.

A request may carry a fault: ``kill_at`` (an RL step) and ``kill_point``:
- ``"log"``: SIGKILL right after the metrics row of that RL step is written — the step is
  trained, its checkpoint not yet written, and the next jobs are being sampled;
- ``"checkpoint"``: SIGKILL right after that step's checkpoint is durable (before the work
  store's ack and the pruning of older checkpoints).
SIGKILL is sent by the process to itself: no cleanup, no atexit, like the OOM killer.

Protocol: one JSON list of requests per stdin line (``{"args": [...], "log": path,
"kill_at": k, "kill_point": p}``; the run's stdout and stderr go to ``log``), answered by one JSON list of exit codes (-9 for a SIGKILL) in order;
at most ``PARALLEL`` children run at once.
"""

import json
import os
import signal
import sys

PARALLEL = int(os.environ.get("FORK_RUNNER_PARALLEL", "2"))


def _child(req: dict) -> None:
    import posttrain.eval.tracking as tracking
    import posttrain.trainer.pipeline as pipeline
    from posttrain.cli.main import main

    cfg_path = req["args"][1]
    kill_at, point = req.get("kill_at"), req.get("kill_point", "log")
    if kill_at is not None:
        import yaml

        sft_steps = int(yaml.safe_load(open(cfg_path)).get("sft", {}).get("steps", 0))
        if point == "log":
            real_log = tracking.MetricsWriter.log

            def log(self, step, metrics):
                real_log(self, step, metrics)
                if step == sft_steps + kill_at and any(k.startswith("loss/") for k in metrics):
                    os.kill(os.getpid(), signal.SIGKILL)

            tracking.MetricsWriter.log = log
        else:
            real_save = pipeline.save_checkpoint

            def save(*a, **kw):
                out = real_save(*a, **kw)
                if kw.get("step") == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
                return out

            pipeline.save_checkpoint = save
    sys.argv = ["posttrain", *req["args"]]
    main()


def _fork(req: dict) -> int:
    pid = os.fork()
    if pid == 0:  # the child: never return into the server's loop
        code = 1
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)  # stdout is the server's reply channel: the run's output goes to its log
        os.dup2(log, 2)
        try:
            _child(req)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid


def _run_batch(reqs: list[dict]) -> list[int]:
    codes: list[int | None] = [None] * len(reqs)
    running: dict[int, int] = {}
    todo = list(range(len(reqs)))
    while todo or running:
        while todo and len(running) < PARALLEL:
            i = todo.pop(0)
            running[_fork(reqs[i])] = i
        pid, status = os.wait()
        if pid in running:
            codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    return codes  # type: ignore[return-value]


def _warm_up(config: str, out: str) -> None:
    """One whole run in the server itself, so lazy imports (the save path of transformers,
    matplotlib's backends and fonts) are done once; then no thread but this one may be left
    (forking with other threads alive could copy a held lock into a child)."""
    import threading

    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread
    from posttrain.cli.main import main as cli

    log = os.open(f"{out}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = os.dup(1), os.dup(2)
    os.dup2(log, 1)
    os.dup2(log, 2)
    try:
        sys.argv = ["posttrain", "train", config, "--out", out]
        cli()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise RuntimeError(f"warm-up run failed (exit {exc.code}); see {out}.log") from exc
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    if threading.active_count() != 1:
        raise RuntimeError(f"threads left after the warm-up: {threading.enumerate()}")


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    if len(sys.argv) == 3:  # a warm-up config and its run folder
        _warm_up(sys.argv[1], sys.argv[2])
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(_run_batch(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
