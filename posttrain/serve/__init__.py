"""posttrain.serve: an OpenAI-compatible HTTP endpoint for the policy (``posttrain serve``).

An external agent harness can be the rollout policy: it calls ``/v1/chat/completions`` (or
``/v1/completions``) and gets, besides the OpenAI fields, the sampled token ids, the
behaviour logprobs, the prompt token ids and the policy version (vLLM's field names:
``return_token_ids``, ``return_tokens_as_token_ids``), which is what
:class:`~posttrain.inference.openai_compat.OpenAICompatBackend` needs to record a trajectory
exactly. Several versions of the version registry can be served side by side, routed per
request by domain or task type, with the default following a registry channel so that
``posttrain models promote`` / ``rollback`` switch a running server.

Modules: :mod:`.engine` (one served version: backend + lock), :mod:`.router` (pin, route,
default, channel), :mod:`.protocol` (request schema, response shapes), :mod:`.app` (the
FastAPI app), :mod:`.record` (the JSONL log of answers), :mod:`.runner` (loading and
uvicorn). fastapi and uvicorn are the ``serve`` extra, imported only when an app is built or
run. Layer 7: it imports inference and models. Guide: ``docs/serve.md``.
"""

from .engine import LoadSpec, ServedModel, load_served
from .record import Recorder, read_records
from .router import ChannelFollower, Router, route_keys
from .runner import ServerThread, ServeSpec, build_router

__all__ = ["ChannelFollower", "LoadSpec", "Recorder", "Router", "ServeSpec", "ServedModel",
           "ServerThread", "build_router", "create_app", "load_served", "read_records", "route_keys"]


def create_app(router: Router, *, api_key: str | None = None, recorder: Recorder | None = None):
    """The FastAPI app over ``router`` (see :mod:`posttrain.serve.app`)."""
    from .app import create_app as _create

    return _create(router, api_key=api_key, recorder=recorder)
