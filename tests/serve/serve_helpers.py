"""HTTP helpers for the serve tests: a real server in a thread, one-call requests, chat prompts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from contextlib import contextmanager

from posttrain.serve import ServerThread, ServeSpec, build_router, create_app

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@contextmanager
def serving(spec: ServeSpec, **app_kw):
    """A real server (uvicorn thread, free loopback port) over ``spec``; yields (url, router)."""
    router = build_router(spec)
    try:
        with ServerThread(create_app(router, **app_kw)) as server:
            yield server.url, router
    finally:
        router.close()


def call(url: str, path: str, body: dict | None = None, headers: dict | None = None,
         raw: bytes | None = None):
    """``(status, JSON body, response headers)`` of one HTTP request (errors included)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json",
                                                                     **(headers or {})})
    try:
        with _NO_PROXY.open(request, timeout=60) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]
