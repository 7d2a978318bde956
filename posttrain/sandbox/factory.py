"""Choosing and opening a sandbox backend with one call.

What it is: :func:`open_sandbox` (for verifiers, tools and domains) and :func:`make_sandbox`.
``backend="auto"`` picks the isolated backend whenever bubblewrap and user namespaces are
available, and the process backend otherwise; selecting the process backend for untrusted
code emits a ``SandboxWarning`` once per process, because it is not a security boundary.

Guarantees: ``limits``, ``timeouts`` and ``network`` accept the records or plain mappings
(validated, ``ConfigError`` on a bad field); ``template`` accepts a Template or a mapping of
files. An explicit ``backend="isolated"`` that cannot start raises ``SandboxError``; it never
silently falls back to the weaker backend.

Backends are a :class:`~posttrain.core.registry.Registry` (:data:`SANDBOX_BACKENDS`, entry-point
group ``posttrain.sandbox_backends``): a builder ``(*, template, limits, timeouts, network,
untrusted, proxy_socket) -> Sandbox`` registered under a name; ``"auto"`` is not a backend but
the choice between the two built-in ones.

Does not: pool sandboxes (see ``SandboxPool``).
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Mapping

from posttrain.core.errors import ConfigError
from posttrain.core.registry import Registry

from . import bwrap
from .policy import Limits, NetworkPolicy, Timeouts
from .template import Template

SANDBOX_BACKENDS: Registry = Registry("sandbox_backend", entry_point_group="posttrain.sandbox_backends",
                                      versioned=False)
_warned = threading.Event()


def backend_names() -> tuple[str, ...]:
    """What ``backend=`` accepts: ``"auto"`` and every registered backend."""
    return ("auto", *SANDBOX_BACKENDS.ids())


class SandboxWarning(UserWarning):
    """A sandbox runs without the isolation its caller asked for."""


def isolated_available() -> tuple[bool, str]:
    """(available, reason) for the isolated backend on this host."""
    if bwrap.bwrap_binary() is None:
        return False, "bubblewrap (bwrap) is not installed"
    try:
        with open("/proc/sys/user/max_user_namespaces") as fh:
            if int(fh.read().strip() or 0) <= 0:
                return False, "user namespaces are disabled (user.max_user_namespaces=0)"
    except OSError:
        return False, "no /proc/sys/user/max_user_namespaces (not Linux?)"
    try:
        bwrap.system_python()
    except Exception as exc:  # noqa: BLE001
        return False, str(exc)
    return True, ""


def _template(template) -> Template:
    if template is None or isinstance(template, Template):
        return template or Template()
    if isinstance(template, Mapping):
        return Template.of(files=template)
    raise ConfigError(f"template={template!r}: expected a Template or a mapping path -> content")


def make_sandbox(backend: str = "auto", *, template=None, limits=None, timeouts=None,
                 network=None, untrusted: bool = True, proxy_socket: str | None = None):
    if backend != "auto" and backend not in SANDBOX_BACKENDS:
        raise ConfigError(f"backend={backend!r}: allowed values are {backend_names()}")
    kwargs = dict(template=_template(template), limits=Limits.from_mapping(limits),
                  timeouts=Timeouts.from_mapping(timeouts),
                  network=NetworkPolicy.from_mapping(network))
    if backend == "auto":
        ok, why = isolated_available()
        backend = "isolated" if ok else "process"
    return SANDBOX_BACKENDS.get(backend)(untrusted=untrusted, proxy_socket=proxy_socket, **kwargs)


@SANDBOX_BACKENDS.register("isolated")
def _isolated(*, untrusted: bool, proxy_socket: str | None, **kwargs):
    """bubblewrap: namespaces, seccomp, rlimits (the security boundary)."""
    from .isolated import IsolatedSandbox

    return IsolatedSandbox(proxy_socket=proxy_socket, **kwargs)


@SANDBOX_BACKENDS.register("process")
def _process(*, untrusted: bool, proxy_socket: str | None, **kwargs):
    """rlimits only; NOT a security boundary (warns once for untrusted code)."""
    if untrusted and not _warned.is_set() and not os.environ.get("POSTTRAIN_SANDBOX_QUIET"):
        _warned.set()
        warnings.warn("posttrain sandbox: the process backend (rlimits only) is NOT a security "
                      "boundary; untrusted code run with it can read and change the host",
                      SandboxWarning, stacklevel=4)
    from .process import ProcessSandbox

    return ProcessSandbox(**kwargs)


def open_sandbox(template=None, limits=None, backend: str = "auto", *, timeouts=None,
                 network=None, untrusted: bool = True):
    """Open a sandbox; use it as a context manager so it is always closed.

    >>> with open_sandbox({"main.py": "print(42)"}) as sb:   # doctest: +SKIP
    ...     sb.exec("python3 main.py").stdout
    '42\\n'
    """
    return make_sandbox(backend, template=template, limits=limits, timeouts=timeouts,
                        network=network, untrusted=untrusted)
