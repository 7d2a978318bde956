"""Start sandbox processes from one long-lived thread.

Why: ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked the child
exits, not the process. Sandboxes are often created from short-lived worker threads (pool
warm-up, ``asyncio.to_thread``); if they forked bubblewrap themselves, the sandbox would die
with the thread. Every spawn is therefore handed to one daemon thread that lives as long as
the process, so the sandbox dies exactly when the harness dies.

Guarantees: :func:`spawn` returns the started ``Popen`` or raises what ``Popen`` raised.
Does not: wait for or reap the child (the caller owns the ``Popen``).
"""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future

_jobs: "queue.Queue[tuple]" = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        fut, argv, kwargs = _jobs.get()
        try:
            fut.set_result(subprocess.Popen(argv, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            fut.set_exception(exc)


def spawn(argv: list[str], *, pass_fds=(), uid: int | None = None, gid: int | None = None,
          **kwargs) -> subprocess.Popen:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="posttrain-sandbox-spawner", daemon=True)
            _thread.start()
    kw = dict(pass_fds=tuple(pass_fds), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL, close_fds=True, **kwargs)
    if uid is not None and uid != _euid():
        kw.update(user=uid, group=gid, extra_groups=[])
    fut: Future = Future()
    _jobs.put((fut, argv, kw))
    return fut.result()


def _euid() -> int:
    import os

    return os.geteuid()
