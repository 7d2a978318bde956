"""The real ``posttrain serve`` app in front of an in-process backend, for the openai backend's tests.

``serve(backend)`` runs :func:`posttrain.serve.create_app` over ``backend`` (served as
``tiny``) under uvicorn on a free loopback port and yields ``(base URL, request log)``. The
only test additions are a thin ASGI wrapper around the real app: it logs each POST body (so a
test can check what the client sent) and can answer the first ``fail_first`` POSTs with 503
(to test the client's retries).
"""

from __future__ import annotations

import json
from contextlib import contextmanager

from posttrain.serve import Router, ServedModel, ServerThread, create_app


class _Spy:
    """ASGI wrapper: record POST bodies, fail the first ``failures[0]`` with HTTP 503."""

    def __init__(self, app, log: list, failures: list[int]):
        self.app, self.log, self.failures = app, log, failures

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        self.log.append(json.loads(body))
        if self.failures[0] > 0:
            self.failures[0] -= 1
            data = json.dumps({"error": {"message": "warming up", "code": 503}}).encode()
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json")]})
            return await send({"type": "http.response.body", "body": data})
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


@contextmanager
def serve(backend, *, fail_first: int = 0):
    """Serve ``backend`` as ``tiny`` on a free loopback port; yields the base URL and the request log."""
    log: list[dict] = []
    app = create_app(Router([ServedModel("tiny", backend)]))
    with ServerThread(_Spy(app, log, [fail_first])) as server:
        yield server.url, log
