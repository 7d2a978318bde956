"""The FastAPI application: OpenAI-compatible endpoints over a :class:`~posttrain.serve.router.Router`.

Endpoints:

- ``GET /v1/models``: the routing alias (``policy``, whose ``root`` is the current default
  version) first, then every loaded version;
- ``POST /v1/chat/completions`` and ``POST /v1/completions``: see :mod:`.protocol` for the
  fields and posttrain's extensions; the version that answers is chosen by the router
  (pin by ``model``, route by ``metadata.domain`` / ``metadata.task_type`` or the
  ``X-Posttrain-Domain`` / ``X-Posttrain-Task-Type`` headers, else the default) and named in
  the answer's ``model`` and the ``X-Posttrain-Route`` header (``model``, ``route:KEY``,
  ``default``);
- ``GET /v1/posttrain/routes``: the routing table and current default; ``GET /health``.

Errors are OpenAI-shaped (``{"error": {"message", "type", "param", "code"}}``): an unknown
model is 404, a malformed body or out-of-range parameter 400 (FastAPI's 422 is mapped to 400,
as OpenAI and vLLM answer), a missing or wrong API key 401, an unknown path 404, anything
else 500. Handlers are plain functions run on the server's thread pool; the per-version lock
of :class:`~posttrain.serve.engine.ServedModel` serializes the requests to one version.
"""

# No ``from __future__ import annotations``: FastAPI reads the handlers' annotations, which
# name classes imported inside ``_routes``.
import hmac
from typing import Any

from posttrain.core.errors import MissingExtraError, PosttrainError

from .protocol import (ApiError, ChatRequest, CompletionRequest, chat_response, completion_response,
                       error_body)
from .record import Recorder
from .router import Router, UnknownModel, route_keys


def _fastapi():
    try:
        import fastapi
        import fastapi.exceptions
        import fastapi.responses
        import starlette.exceptions
    except ImportError as exc:
        raise MissingExtraError("fastapi", "serve") from exc
    return fastapi


def create_app(router: Router, *, api_key: str | None = None, recorder: Recorder | None = None) -> Any:
    """The ASGI app serving ``router``'s versions.

    ``api_key`` requires ``Authorization: Bearer KEY`` on /v1; ``recorder`` logs every answer
    (:mod:`.record`)."""
    fastapi = _fastapi()
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException

    app = fastapi.FastAPI(title="posttrain serve", docs_url=None, redoc_url=None)

    def fail(status: int, message: str, type: str, param: str | None = None) -> JSONResponse:
        return JSONResponse(error_body(message, type, param, status), status_code=status)

    @app.exception_handler(ApiError)
    def _api(_, exc: ApiError):
        return JSONResponse(exc.body(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    def _invalid(_, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or None
        return fail(400, f"{where or 'body'}: {first.get('msg', 'invalid request')}",
                    "invalid_request_error", where)

    @app.exception_handler(HTTPException)
    def _http(_, exc: HTTPException):
        return fail(exc.status_code, str(exc.detail), "not_found_error" if exc.status_code == 404
                    else "invalid_request_error")

    @app.exception_handler(Exception)
    def _crash(_, exc: Exception):
        return fail(500, f"{type(exc).__name__}: {exc}", "internal_server_error")

    if api_key:
        @app.middleware("http")
        async def _auth(request, call_next):
            given = request.headers.get("authorization", "")
            if request.url.path.startswith("/v1") and not hmac.compare_digest(given, f"Bearer {api_key}"):
                return fail(401, "missing or wrong API key", "authentication_error")
            return await call_next(request)

    _routes(app, router, recorder)
    return app


def _routes(app: Any, router: Router, recorder: Recorder | None) -> None:
    from fastapi import Request, Response

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models() -> dict:
        default = router.default_name()
        data = [{"id": router.alias, "object": "model", "owned_by": "posttrain", "root": default}]
        data += [{"id": name, "object": "model", "owned_by": "posttrain", "root": m.source,
                  "policy_version": m.policy_version} for name, m in list(router.models.items())]
        return {"object": "list", "data": data}

    @app.get("/v1/posttrain/routes")
    def routes() -> dict:
        return router.describe()

    @app.post("/v1/chat/completions")
    def chat(req: ChatRequest, request: Request, response: Response) -> dict:
        req.refuse_unsupported()
        served, why = _resolve(router, req, request, response)
        limit = req.max_completion_tokens if req.max_completion_tokens is not None else req.max_tokens
        params = req.sampling(limit, served.context_len)
        group = _call(lambda: served.chat(req.message_dicts(), req.tools or (), params))
        k = (req.top_logprobs or 0) if req.logprobs else 0
        tops = [_call(lambda c=c: served.top_logprobs(c, k, req.temperature)) if k else []
                for c in group]
        if recorder is not None:
            recorder.record("chat", served.name, why, req.metadata, group)
        return chat_response(served, req, group, tops)

    @app.post("/v1/completions")
    def completions(req: CompletionRequest, request: Request, response: Response) -> dict:
        req.refuse_unsupported()
        served, why = _resolve(router, req, request, response)
        prompts = _prompt_ids(served, req)
        params = req.sampling(req.max_tokens, served.context_len)
        groups = _call(lambda: served.complete(prompts, params))
        k = req.logprobs or 0
        tops = [_call(lambda c=c: served.top_logprobs(c, k, req.temperature)) if k else []
                for g in groups for c in g]
        if recorder is not None:
            recorder.record("completions", served.name, why, req.metadata, [c for g in groups for c in g])
        return completion_response(served, req, groups, tops)


def _resolve(router: Router, req: Any, request: Any, response: Any):
    try:
        served, why = router.resolve(req.model, route_keys(req.metadata, request.headers))
    except UnknownModel as exc:
        raise ApiError(404, str(exc), type="not_found_error", param="model") from exc
    except PosttrainError as exc:  # e.g. a promoted version whose folder cannot be loaded
        raise ApiError(503, f"the routed version is unavailable: {exc}", type="service_unavailable") from exc
    response.headers["X-Posttrain-Route"] = why
    return served, why


def _prompt_ids(served: Any, req: CompletionRequest) -> list[list[int]]:
    p = req.prompt
    if isinstance(p, str):
        p = [p]
    if not p:
        raise ApiError(400, "prompt is empty", param="prompt")
    ids = [list(p)] if isinstance(p[0], int) else [
        served.encode(x, req.add_special_tokens) if isinstance(x, str) else list(x) for x in p]
    vocab = len(served.tokenizer)
    if any(not 0 <= i < vocab for row in ids for i in row):
        raise ApiError(400, f"prompt token ids must be in [0, {vocab})", param="prompt")
    return ids


def _call(fn):
    """Run a backend call; its typed errors are the client's fault (HTTP 400)."""
    try:
        return fn()
    except PosttrainError as exc:  # InferenceError: bad params, prompt too long, template
        raise ApiError(400, str(exc)) from exc
