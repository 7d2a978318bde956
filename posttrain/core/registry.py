"""Versioned registries with decorator registration and entry-point discovery.

Ids are versioned: ``family.name-vN`` (for example ``math.add-v1``). ``get("math.add")``
resolves to the highest registered version; ``get("math.add-v1")`` to exactly that one.
Unknown ids raise :class:`RegistryError` with the closest known ids ("did you mean").

Third-party packages register objects through an entry-point group (``posttrain.domains``
for domains): each entry point names a module or a callable; loading it is enough for its
decorators to run. Discovery runs once, lazily, the first time the registry is listed or
an id is missed.

This is the one extension mechanism of the project (DESIGN.md §8): every pluggable kind —
domains, algorithms, losses, advantage estimators, behaviour corrections, producer pools,
inference backends, sandbox backends, reward sources, tools — is a :class:`Registry` with
its own entry-point group, and ``posttrain plugins list`` lists them all.
:meth:`Registry.add_lazy` registers an object by ``"module:attribute"`` so that a kind whose
objects need heavy imports (torch, vllm) can be listed and validated without importing them.
"""

from __future__ import annotations

import difflib
import re
import threading
from importlib import metadata
import importlib
from collections.abc import Mapping
from typing import Callable, Generic, Iterator, TypeVar

from .errors import RegistryError

T = TypeVar("T")

# Depth of entry-point loading in this thread: whatever a plugin module registers while it is
# loaded is a plugin id, in every registry (one module may extend several kinds at once).
_loading = threading.local()
_VERSIONED = re.compile(r"^(?P<base>[a-z0-9_][a-z0-9_.\-]*?)-v(?P<ver>\d+)$")


def split_id(item_id: str) -> tuple[str, int]:
    """``"math.add-v2"`` -> ``("math.add", 2)``; raises RegistryError when unversioned."""
    m = _VERSIONED.match(item_id)
    if not m:
        raise RegistryError(
            f"id {item_id!r} is not versioned: expected lowercase 'family.name-vN', e.g. 'math.add-v1'"
        )
    return m.group("base"), int(m.group("ver"))


class _Lazy:
    """A registered object named by ``"module:attribute"``, imported on first ``get``."""

    __slots__ = ("target",)

    def __init__(self, target: str):
        self.target = target

    def load(self) -> object:
        module, _, attr = self.target.partition(":")
        obj: object = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
        return obj


class Registry(Generic[T]):
    """A name → object map for one kind of plug-in (domains, losses, backends...)."""

    def __init__(self, kind: str, entry_point_group: str | None = None, versioned: bool = True):
        self.kind = kind
        self.entry_point_group = entry_point_group
        self.versioned = versioned
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._discovered = entry_point_group is None
        self._lock = threading.RLock()
        self.plugin_ids: set[str] = set()
        self.discovery_errors: dict[str, str] = {}

    # registration -------------------------------------------------------
    def add(self, item_id: str, obj: T, *, replace: bool = False) -> T:
        if self.versioned:
            split_id(item_id)
        with self._lock:
            if item_id in self._items and not replace and self._items[item_id] is not obj:
                raise RegistryError(f"{self.kind} {item_id!r} is already registered")
            self._items[item_id] = obj
            if getattr(_loading, "depth", 0):
                self.plugin_ids.add(item_id)
        return obj

    def add_lazy(self, item_id: str, target: str, *, replace: bool = False) -> None:
        """Register ``"module:attribute"`` under ``item_id`` without importing it; ``get``
        imports it the first time (an import error then names the id and the target)."""
        if ":" not in target:
            raise RegistryError(f"lazy {self.kind} {item_id!r}: target {target!r} is not 'module:attribute'")
        self.add(item_id, _Lazy(target), replace=replace)  # type: ignore[arg-type]

    def target(self, item_id: str) -> str:
        """Where an object comes from: ``"module:attribute"`` (lazy) or its own module."""
        obj = self._items[self.resolve(item_id)]
        if isinstance(obj, _Lazy):
            return obj.target
        return f"{getattr(obj, '__module__', type(obj).__module__)}:{getattr(obj, '__qualname__', type(obj).__qualname__)}"

    def register(self, item_id: str, *, replace: bool = False) -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("math.add-v1")``."""

        def deco(obj: T) -> T:
            return self.add(item_id, obj, replace=replace)

        return deco

    def alias(self, alias: str, target: str) -> None:
        """Make ``alias`` resolve to ``target`` (e.g. ``rg.gcd-v1`` → ``math.rg_gcd-v1``).

        Aliases are never listed by :meth:`ids` and may not shadow a registered id.
        """
        if self.versioned:
            split_id(alias)
        with self._lock:
            if alias in self._items:
                raise RegistryError(f"alias {alias!r} would shadow a registered {self.kind}")
            self._aliases[alias] = target

    def remove(self, item_id: str) -> None:
        with self._lock:
            self._items.pop(item_id, None)

    # discovery ----------------------------------------------------------
    def discover(self) -> None:
        """Load every entry point of the group once; a broken plugin is recorded, not fatal."""
        with self._lock:
            if self._discovered:
                return
            self._discovered = True
            before = set(self._items)
            for ep in metadata.entry_points(group=self.entry_point_group or ""):
                _loading.depth = getattr(_loading, "depth", 0) + 1
                try:
                    loaded = ep.load()
                    if callable(loaded) and not isinstance(loaded, type):
                        loaded()
                except Exception as exc:  # a broken plugin must not break the library
                    self.discovery_errors[ep.name] = f"{type(exc).__name__}: {exc}"
                finally:
                    _loading.depth -= 1
            self.plugin_ids |= set(self._items) - before

    # lookup -------------------------------------------------------------
    def ids(self) -> list[str]:
        self.discover()
        return sorted(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids())

    def __len__(self) -> int:
        return len(self.ids())

    def __contains__(self, item_id: str) -> bool:
        try:
            self.resolve(item_id)
            return True
        except RegistryError:
            return False

    def resolve(self, item_id: str) -> str:
        """The exact registered id for ``item_id`` (an unversioned id means its latest version)."""
        if item_id in self._items:
            return item_id
        if item_id in self._aliases:
            return self.resolve(self._aliases[item_id])
        self.discover()
        if item_id in self._items:
            return item_id
        if item_id in self._aliases:
            return self.resolve(self._aliases[item_id])
        if self.versioned and not _VERSIONED.match(item_id):
            versions = [(split_id(k)[1], k) for k in self._items if split_id(k)[0] == item_id]
            versions += [(split_id(a)[1], t) for a, t in self._aliases.items()
                         if split_id(a)[0] == item_id]
            if versions:
                return self.resolve(max(versions)[1])
        candidates = list(self._items) + list(self._aliases)
        close = difflib.get_close_matches(item_id, candidates, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise RegistryError(f"unknown {self.kind} {item_id!r}{hint} ({len(self._items)} registered)")

    def get(self, item_id: str) -> T:
        key = self.resolve(item_id)
        obj = self._items[key]
        if isinstance(obj, _Lazy):
            with self._lock:
                obj = self._items[key]
                if isinstance(obj, _Lazy):
                    obj = obj.load()
                    self._items[key] = obj
        return obj  # type: ignore[return-value]

    def as_mapping(self) -> "RegistryView[T]":
        """A read-only ``Mapping`` view (``in``, ``[id]``, ``.get(id)`` → None when unknown,
        ``.values()``), for callers written against a plain dict; plugins included."""
        return RegistryView(self)


class RegistryView(Mapping[str, T]):
    """Read-only mapping over a :class:`Registry` (ids resolve as in the registry)."""

    def __init__(self, registry: Registry[T]):
        self.registry = registry

    def __getitem__(self, item_id: str) -> T:
        try:
            return self.registry.get(item_id)
        except RegistryError:
            raise KeyError(item_id) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.registry.ids())

    def __len__(self) -> int:
        return len(self.registry.ids())
