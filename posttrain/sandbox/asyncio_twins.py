"""Async twins of the sandbox methods (``aexec``, ``awrite_file``, ...).

What it is: a mixin whose ``a<name>`` methods run the blocking ``<name>`` in a worker thread
(``asyncio.to_thread``), so an event loop driving many sandboxes is never blocked. The sync
method is the single implementation; there is no hook to override.

Guarantees: the twin returns exactly what the sync method returns and raises what it raises.
Does not: make one sandbox concurrent (its methods are serialised by the sandbox's lock).
"""

from __future__ import annotations

import asyncio


class AsyncTwins:
    async def aexec(self, cmd, **kw):
        return await asyncio.to_thread(self.exec, cmd, **kw)

    async def arun_python(self, code, **kw):
        return await asyncio.to_thread(self.run_python, code, **kw)

    async def awrite_file(self, path, data, **kw):
        return await asyncio.to_thread(self.write_file, path, data, **kw)

    async def aread_file(self, path, **kw):
        return await asyncio.to_thread(self.read_file, path, **kw)

    async def alist_files(self, path="", **kw):
        return await asyncio.to_thread(self.list_files, path, **kw)

    async def asnapshot(self):
        return await asyncio.to_thread(self.snapshot)

    async def arestore(self, snapshot_id):
        return await asyncio.to_thread(self.restore, snapshot_id)

    async def adiff(self, since, **kw):
        return await asyncio.to_thread(self.diff, since, **kw)

    async def aclose(self):
        return await asyncio.to_thread(self.close)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()
