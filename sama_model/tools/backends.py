"""Backend registry: ``(tool, backend name) -> class``, imported lazily by dotted path.

Heavy backends (transformers, open_clip, ultralytics) are only imported when a profile asks
for them, so the offline profile never pays for torch-heavy imports it does not use. The table is
derived from each tool's ``backend_classes`` (:class:`sama_model.tools.base.Tool`): a new backend
is one line there, or a :func:`register_backend` call from user code.
"""
from __future__ import annotations

import importlib
import threading
from typing import Any, Callable

from . import TOOL_CLASSES
from .contracts import missing_methods

#: the tools' names, in the order the planners list them
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_CLASSES)
#: (tool, backend name) -> "module:Class", from every tool's ``backend_classes``
_LAZY: dict[tuple[str, str], str] = {(tool, backend): path for tool, cls in TOOL_CLASSES.items()
                                     for backend, path in cls.backend_classes.items()}
_REGISTERED: dict[tuple[str, str], Callable[..., Any]] = {}
_INSTANCES: dict[tuple, Any] = {}
_LOCK = threading.Lock()


class UnknownBackendError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class BackendContractError(TypeError):
    """A backend that lacks a method its tool calls (see :mod:`.contracts`)."""


def register_backend(tool: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a backend class or factory for ``tool`` under ``name``."""
    def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
        _REGISTERED[(tool, name)] = factory
        return factory
    return deco


def available_backends(tool: str) -> list[str]:
    return sorted({n for (t, n) in list(_LAZY) + list(_REGISTERED) if t == tool})


def resolve_backend(tool: str, name: str) -> Callable[..., Any]:
    key = (tool, name)
    if key in _REGISTERED:
        return _REGISTERED[key]
    if key not in _LAZY:
        raise UnknownBackendError(f"no backend {name!r} for tool {tool!r}; available: {available_backends(tool)}")
    module, _, attr = _LAZY[key].partition(":")
    return getattr(importlib.import_module(module), attr)


def create_backend(tool: str, name: str, *, shared: bool = True, **options: Any) -> Any:
    """Build (or reuse, when ``shared``) a backend: models load once per process."""
    key = (tool, name, tuple(sorted((k, repr(v)) for k, v in options.items())))
    if shared:
        with _LOCK:
            if key in _INSTANCES:
                return _INSTANCES[key]
    obj = resolve_backend(tool, name)(**options)
    missing = missing_methods(tool, obj)
    if missing:  # fail when the backend is built, naming what is missing, not mid-question
        raise BackendContractError(f"backend {name!r} for tool {tool!r} lacks {', '.join(missing)} "
                                   f"(see {tool}'s contract in sama_model/tools/{tool}.py)")
    if shared:
        with _LOCK:
            obj = _INSTANCES.setdefault(key, obj)
    return obj


# ----------------------------------------------------------------------------- option checking

def backend_parameters(tool: str, name: str) -> tuple[list[str], bool]:
    """(the option names a backend's constructor takes, whether it takes any ``**options``)."""
    import inspect

    factory = resolve_backend(tool, name)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or C factory: nothing to check
        return [], True
    names = [p for p, v in params.items() if v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)]
    return names, any(v.kind is v.VAR_KEYWORD for v in params.values())


def check_backend_options(tool: str, name: str, options: dict[str, Any]) -> list[str]:
    """Check ``backend.<tool>.<option>`` values against the backend's parameters without loading a
    model. Raises :class:`BackendOptionError` naming the tool, the backend, the option and the valid
    ones; returns deprecation notes for old option names that still work."""
    factory = resolve_backend(tool, name)
    deprecated: dict[str, str] = dict(getattr(factory, "DEPRECATED_OPTIONS", {}) or {})
    rejected: dict[str, str] = dict(getattr(factory, "REJECTED_OPTIONS", {}) or {})
    params, any_kw = backend_parameters(tool, name)
    #: a backend taking ``**options`` may say which names it forwards (e.g. ``seg_`` to its segmenter)
    prefixes = tuple(getattr(factory, "OPTION_PREFIXES", ()) or ())
    valid = [p for p in params if p not in deprecated]
    where = f"the {tool} backend {name!r} ({getattr(factory, '__name__', factory)})"
    notes = []
    for opt in options:
        if opt in rejected:
            raise BackendOptionError(f"backend.{tool}.{opt} cannot take effect with {where}: {rejected[opt]}; "
                                     f"valid options: {', '.join(valid) or 'none'}")
        if opt in deprecated:
            notes.append(f"backend.{tool}.{opt} is deprecated; use {deprecated[opt]} "
                         f"(backend.{tool}.{deprecated[opt].split()[0]}=...)")
        elif opt not in params and (not any_kw or (prefixes and not opt.startswith(prefixes))):
            extra = [f"{p}<option>" for p in prefixes]
            raise BackendOptionError(f"backend.{tool}.{opt}: {where} has no option {opt!r}; "
                                     f"valid options: {', '.join(valid + extra) or 'none'}")
    check = getattr(factory, "check_options", None)
    if callable(check):
        try:
            check(dict(options))
        except ValueError as exc:
            raise BackendOptionError(f"backend.{tool}: {where}: {exc}") from exc
    return notes


def validate_backends(backends: dict[str, Any]) -> list[str]:
    """Check and build every configured backend (``{tool: BackendSpec | None}``) before any question
    runs: unknown options, options that cannot take effect and values a constructor rejects fail here,
    with the tool and the backend named. Constructing loads no weights (models load on first use)."""
    notes: list[str] = []
    for tool, spec in backends.items():
        if spec is None:
            continue
        try:
            notes += check_backend_options(tool, spec.name, spec.options)
        except UnknownBackendError as exc:
            raise BackendOptionError(f"backend.{tool}={spec.name}: {exc}") from None
        try:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # reported once, by the notes above
                create_backend(tool, spec.name, **spec.options)
        except (TypeError, ValueError) as exc:
            raise BackendOptionError(f"backend.{tool}={spec.name}: {type(exc).__name__}: {exc}") from exc
    return notes


class BackendOptionError(ValueError):
    """A backend option that does not exist or cannot take effect (a subclass of ``ConfigError``'s base)."""
