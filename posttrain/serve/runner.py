"""Build a server from folders or registry versions, and run it under uvicorn (foreground or thread).

What it is: :func:`build_router` loads what :class:`ServeSpec` names — model folders and/or
version ids of the version registry — into a :class:`~posttrain.serve.router.Router` that
follows the registry channel when registry versions are served; :class:`ServerThread` runs
an app on a loopback port (``port=0``: a free one) in a daemon thread, for tests and
embedding; :func:`run_foreground` is what ``posttrain serve`` calls.

Guarantees: every folder and version — with registry versions, also those a route or the
default names — is loaded before the server accepts a request (a bad one fails the start,
naming it); the channel's current version is loaded at start when it is not
among those given; ``ServerThread`` returns only once the socket listens, and its ``stop``
waits for the thread to end.

What it does not do: TLS, process supervision, or more than one worker process (the models
live in this process; uvicorn's ``--workers`` would load them once per worker).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from posttrain.core.errors import ConfigError, MissingExtraError

from .engine import LoadSpec, ServedModel, load_served
from .router import DEFAULT_ALIAS, ChannelFollower, Router

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class ServeSpec:
    """What to serve and how to route it (the options of ``posttrain serve``)."""

    folders: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)  # registry version ids
    names: list[str] = field(default_factory=list)  # one per folder; default: the folder's name
    routes: dict[str, str] = field(default_factory=dict)
    default: str | None = None
    registry: str | Path | None = None
    channel: str | None = "serving"  # followed when registry versions are served; None: never
    refresh_s: float = 1.0
    alias: str = DEFAULT_ALIAS
    load: LoadSpec = field(default_factory=LoadSpec)


def _registry_loader(spec: ServeSpec) -> Callable[[str], ServedModel]:
    def load(version_id: str) -> ServedModel:
        from posttrain.models.versions import VersionRegistry

        with VersionRegistry(spec.registry) as reg:
            path = reg.get(version_id).path
        return load_served(version_id, path, spec.load)

    return load


def build_router(spec: ServeSpec) -> Router:
    """Load every folder and version of ``spec`` and route between them."""
    if spec.names and len(spec.names) != len(spec.folders):
        raise ConfigError(f"serve: {len(spec.names)} names for {len(spec.folders)} folders")
    names = spec.names or [Path(f).name for f in spec.folders]
    models = [load_served(n, f, spec.load) for n, f in zip(names, spec.folders)]
    registry_mode = bool(spec.versions) or not spec.folders
    loader = _registry_loader(spec) if registry_mode else None
    if loader is not None:  # a route or default naming a registry version loads it too
        wanted = [*spec.versions, *spec.routes.values(), *([spec.default] if spec.default else [])]
        models += [loader(v) for v in dict.fromkeys(wanted) if v not in names]
    follow = (ChannelFollower(spec.registry, spec.channel, spec.refresh_s)
              if registry_mode and spec.channel else None)
    router = Router(models, routes=spec.routes, default=spec.default, alias=spec.alias,
                    channel=follow, loader=loader)
    if follow is not None and follow.current() is not None:
        router.default_model()  # load the channel's current version now, not on a request
    elif not router.models:
        raise ConfigError("serve: nothing to serve: no folder, no --version, and channel "
                          f"{spec.channel!r} of the registry is empty")
    return router


def _uvicorn():
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("uvicorn", "serve") from exc
    return uvicorn


class ServerThread:
    """``app`` under uvicorn in a daemon thread; a context manager yielding itself."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        uvicorn = _uvicorn()
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="off",
                                access_log=False)
        self.server = uvicorn.Server(config)
        self.host = host
        self.port = port
        self._thread = threading.Thread(target=self.server.run, name="posttrain-serve", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout_s: float = 30.0) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConfigError(f"serve: the server did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout_s)

    def wait(self) -> None:
        """Block until the server ends (interruptible by Ctrl-C)."""
        while self._thread.is_alive():
            self._thread.join(0.5)

    def __enter__(self) -> "ServerThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_foreground(app: Any, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``on_ready(url)`` is called once the socket listens."""
    server = ServerThread(app, host, port)
    server.start()
    on_ready(server.url)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
