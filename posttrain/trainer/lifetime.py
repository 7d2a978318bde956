"""A spawned worker process ends when the process that started it dies, whatever way it died.

Why: a producer process blocks on its job queue, and a multiprocessing queue pickled into a
child carries the write end of its own pipe too, so the child never reads end-of-file when
the trainer is SIGKILLed (or OOM-killed): it used to live on for ever, holding a copy of the
model and its sandboxes (the chaos loop, ``bench/chaos.py``, found two such producers and
their sandboxes per trainer kill).

What :func:`exit_with_parent` guarantees: once the parent is gone (its multiprocessing
sentinel closes; without one, ``os.getppid()`` changes), the worker gets SIGINT, so its main
thread leaves even a blocking queue read with ``KeyboardInterrupt`` and the interpreter exits
normally — ``atexit`` runs, closing this process's sandbox pool and removing its cache
directories; if it has not exited ``grace_s`` later, it ends with ``os._exit``, and what it
staged on the host is swept by the next start (``posttrain/sandbox/hostdirs.py``).

Does not: help a worker whose parent is alive but hung (the pool's own timeouts do that), or
processes the worker started outside its sandboxes that do not watch it in turn.
"""

from __future__ import annotations

import os
import signal
import threading
import time


def _wait_for_parent_death(parent_pid: int) -> None:
    import multiprocessing
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    sentinel = getattr(parent, "sentinel", None)
    if sentinel is not None:
        wait([sentinel])  # readable once the parent's end of the pipe is closed: it is dead
        return
    while os.getppid() == parent_pid:  # started some other way: reparented when it dies
        time.sleep(0.5)


def exit_with_parent(grace_s: float = 10.0) -> threading.Thread:
    """Start the watch (a daemon thread) in the calling worker process; returns the thread."""
    parent_pid = os.getppid()

    def watch() -> None:
        _wait_for_parent_death(parent_pid)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(grace_s)
        os._exit(1)

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread
