"""Which served version answers a request: a pinned model, a routing table, or the default.

What it is: :class:`Router` holds the loaded versions (name -> :class:`ServedModel`) and picks
one per request, in this order:

1. the request's ``model`` names a served version -> that version (a pin; routes ignored);
2. ``model`` is the routing alias (``policy`` by default), ``default``, or empty -> the
   routing table, keyed by the request's route keys (its domain, then its task type; see
   :func:`route_keys`). A domain ``math.add-v1`` matches a route for ``math.add-v1``, then
   ``math.add``, then ``math`` — so ``--route math=v4`` sends every math domain to v4;
3. no route matches -> the default version: the registry channel's current version when the
   router follows a channel (``serving`` by default), else the static default (the first
   version given).

Any other ``model`` is an unknown model (HTTP 404).

Following a channel: the channel is re-read from the version registry at most every
``refresh_s`` seconds, so ``posttrain models promote`` / ``posttrain models rollback`` switch
the default version of a running server — no restart. A promoted version that is not loaded
yet is loaded on first use (through ``loader``, under a lock; requests to other versions go on
meanwhile) and stays loaded; versions are never unloaded.

What it does not do: weighted (percentage) canaries, or unloading idle versions.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from posttrain.core.errors import ConfigError, PosttrainError

from .engine import ServedModel

DEFAULT_ALIAS = "policy"
DOMAIN_HEADER = "x-posttrain-domain"
TASK_TYPE_HEADER = "x-posttrain-task-type"
_VERSION_SUFFIX = re.compile(r"-v\d+$")


class UnknownModel(PosttrainError, LookupError):
    """The request named a model this server does not serve."""

    kind = "unknown_model"


def route_keys(metadata: Mapping[str, object] | None, headers: Mapping[str, str]) -> list[str]:
    """The request's route keys, most specific first: its domain, then its task type.

    Read from the body's ``metadata`` (``domain``, ``task_type``) and, when absent there, from
    the ``X-Posttrain-Domain`` / ``X-Posttrain-Task-Type`` headers.
    """
    meta = metadata or {}
    keys = []
    for field, header in (("domain", DOMAIN_HEADER), ("task_type", TASK_TYPE_HEADER)):
        value = meta.get(field) or headers.get(header)
        if value:
            keys.append(str(value))
    return keys


def _candidates(key: str) -> Iterator[str]:
    """``math.add-v1`` -> ``math.add-v1``, ``math.add``, ``math``."""
    yield key
    base = _VERSION_SUFFIX.sub("", key)
    if base != key:
        yield base
    parts = base.split(".")
    for i in range(len(parts) - 1, 0, -1):
        yield ".".join(parts[:i])


class ChannelFollower:
    """The current version of a registry channel, re-read at most every ``refresh_s`` seconds."""

    def __init__(self, registry: str | Path | None, channel: str = "serving", refresh_s: float = 1.0):
        self.registry = registry
        self.channel = channel
        self.refresh_s = refresh_s
        self._cached: tuple[float, str | None] = (float("-inf"), None)
        self._lock = threading.Lock()

    def current(self) -> str | None:
        with self._lock:
            stamp, value = self._cached
            if time.monotonic() - stamp >= self.refresh_s:
                value = self._read()
                self._cached = (time.monotonic(), value)
            return value

    def _read(self) -> str | None:
        from posttrain.models.versions import VersionRegistry

        with VersionRegistry(self.registry) as reg:
            current = reg.current(self.channel)
        return current.id if current else None


class Router:
    """Loaded versions, the routing table and the default (see the module docstring)."""

    def __init__(self, models: Sequence[ServedModel], *, routes: Mapping[str, str] | None = None,
                 default: str | None = None, alias: str = DEFAULT_ALIAS,
                 channel: ChannelFollower | None = None,
                 loader: Callable[[str], ServedModel] | None = None):
        if not models and channel is None:
            raise ConfigError("serve: no model to serve (give a folder or --version ids)")
        self.models: dict[str, ServedModel] = {}
        for m in models:
            if m.name in self.models or m.name in (alias, "default"):
                raise ConfigError(f"serve: model name {m.name!r} is used twice or is reserved")
            self.models[m.name] = m
        self.routes = dict(routes or {})
        for key, target in self.routes.items():
            if target not in self.models:
                raise ConfigError(f"serve: route {key}={target}: {target!r} is not a served version "
                                  f"(served: {', '.join(self.models) or 'none'})")
        if default is not None and default not in self.models:
            raise ConfigError(f"serve: default {default!r} is not a served version")
        self.static_default = default or next(iter(self.models), None)
        self.alias = alias
        self.channel = channel
        self.loader = loader
        self._load_lock = threading.Lock()

    # ------------------------------------------------------------------ routing
    def resolve(self, model: str | None, keys: Sequence[str] = ()) -> tuple[ServedModel, str]:
        """``(served version, why)`` for a request; ``why`` is ``model``, ``route:KEY`` or ``default``."""
        if model and model not in (self.alias, "default"):
            if model in self.models:
                return self.models[model], "model"
            raise UnknownModel(f"the model {model!r} does not exist on this server; served: "
                               f"{', '.join([self.alias, *self.models])}")
        for key in keys:
            for candidate in _candidates(key):
                if candidate in self.routes:
                    return self.models[self.routes[candidate]], f"route:{candidate}"
        return self.default_model(), "default"

    def default_name(self) -> str | None:
        current = self.channel.current() if self.channel is not None else None
        return current or self.static_default

    def default_model(self) -> ServedModel:
        name = self.default_name()
        if name is None:
            raise UnknownModel(f"no default version: channel {self.channel.channel!r} is empty "
                               "and no version was given")
        if name not in self.models:
            self._load(name)
        return self.models[name]

    def _load(self, name: str) -> None:
        if self.loader is None:
            raise UnknownModel(f"the channel's current version {name!r} is not loaded and this "
                               "server has no registry to load it from")
        with self._load_lock:
            if name not in self.models:  # another request may have loaded it meanwhile
                self.models[name] = self.loader(name)

    def close(self) -> None:
        """Shut every loaded version's engine down (the server is done with them)."""
        with self._load_lock:
            for served in list(self.models.values()):
                served.close()

    def describe(self) -> dict:
        """The routing state, as ``GET /v1/posttrain/routes`` shows it."""
        return {"alias": self.alias, "default": self.default_name(),
                "default_from": (f"channel:{self.channel.channel}" if self.channel else "static"),
                "routes": dict(self.routes),
                "versions": [{"id": m.name, "source": m.source, "policy_version": m.policy_version}
                             for m in list(self.models.values())]}
