"""Start sandbox processes from one long-lived thread.

Why: ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked the child
exits, not the process. Sandboxes are often created from short-lived worker threads (pool
warm-up, ``asyncio.to_thread``); if they forked bubblewrap themselves, the sandbox would die
with the thread. Every spawn is therefore handed to one daemon thread that lives as long as
the process, so the sandbox dies exactly when the harness dies.

Through ``ptinit enter`` when the native front is built (see ``ptinit.c``): it joins the
sandbox's cgroup v1 groups itself (a thread moving itself skips the kernel lock whose write
side waits for an RCU grace period) and, on a root host, drops to the sandbox uid, then
``exec``s bubblewrap. ``Popen`` can then ``vfork``: it cannot when it changes the user itself,
and a full fork of a large harness process copies its page tables and leaves every page of
it to fault once more (from a 300 MB harness, starting ``true``: 31 ms, against 1.5 ms
through ptinit). Without the native front:
``Popen(user=...)``, and the caller moves the process into its groups.

Guarantees: :func:`spawn` returns the started ``Popen`` or raises what ``Popen`` raised; the
child runs as ``uid``/``gid`` with no supplementary groups either way, and, when a helper is
given, in every group of ``join`` before the program starts.
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
          helper: str | None = None, join=(), **kwargs) -> subprocess.Popen:
    """Start ``argv`` from the spawner thread; ``helper``: the ptinit binary, if built, and
    then ``join``: cgroup v1 directories the program is started in."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="posttrain-sandbox-spawner", daemon=True)
            _thread.start()
    kw = dict(pass_fds=tuple(pass_fds), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL, close_fds=True)
    kw.update(kwargs)  # e.g. stderr to a log the caller reads when the start fails
    as_other = uid is not None and uid != _euid()
    if helper is not None and (as_other or join):
        ids = [str(uid), str(uid if gid is None else gid)] if as_other else ["-", "-"]
        argv = [helper, "enter", *ids, str(len(join)), *join, *argv]
    elif as_other:
        kw.update(user=uid, group=gid, extra_groups=[])
    fut: Future = Future()
    _jobs.put((fut, argv, kw))
    return fut.result()


def _euid() -> int:
    import os

    return os.geteuid()
