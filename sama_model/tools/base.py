"""The tool interface the planners see: a name, a description, a JSON schema, a structured result.

Like smolagents, the argument schema is derived from the ``forward`` method's signature, type
hints and Google-style docstring, so a tool's documentation and its schema cannot drift apart.
Calling a tool validates and coerces the arguments against that schema, resolves video labels,
consults the on-disk cache and turns any exception into a :class:`ToolResult` with ``error``
set: a failing tool becomes evidence of failure, never a crash of the question.
"""
from __future__ import annotations

import inspect
import json
import re
import threading
import time
import types
import typing
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar, Literal

from ..cache import ToolCache, cache_key
from ..question_videos import QuestionVideos

#: a time window in seconds, (start, end); None is the video's start or end
Window = tuple[float | None, float | None]

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                                dict: "object", list: "array"}
_BACKEND_LOCKS: dict[int, threading.Lock] = {}
_BACKEND_LOCKS_GUARD = threading.Lock()
_INFLIGHT: dict[str, threading.Lock] = {}  # cache key -> lock: identical calls in flight compute once


class ToolArgumentError(ValueError):
    """Arguments that do not match a tool's schema; the message says which and why."""


@dataclass(frozen=True)
class BackendSpec:
    """Which backend serves a tool, with its constructor options."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options)}


@dataclass
class ToolResult:
    """What a tool call produced: structured data, a short text rendering, or an error."""

    tool: str
    args: dict[str, Any]
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    error: str | None = None
    videos: list[str] = field(default_factory=list)  # canonical labels the call read
    backend: str = ""
    elapsed: float = 0.0
    cached: bool = False
    call_id: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def window(self) -> tuple[float | None, float | None]:
        return (self.args.get("start"), self.args.get("end"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ----------------------------------------------------------------------------- schema derivation

def _type_schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin is Literal:
        values = list(typing.get_args(hint))
        return {"type": _JSON_TYPES[type(values[0])], "enum": values}
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = len(members) < len(typing.get_args(hint))
        if len(members) != 1:
            raise TypeError(f"unsupported union type {hint!r}")
        inner = _type_schema(members[0])
        if nullable:
            inner = {**inner, "type": [inner["type"], "null"]}
        return inner
    if origin in (list, tuple):
        args = typing.get_args(hint)
        return {"type": "array", "items": _type_schema(args[0])} if args else {"type": "array"}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    raise TypeError(f"unsupported argument type {hint!r}")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(summary, {argument: description}) from a Google-style docstring."""
    doc = inspect.cleandoc(doc or "")
    parts = re.split(r"^Args:\s*$", doc, maxsplit=1, flags=re.M)
    summary = " ".join(parts[0].split())
    descs: dict[str, str] = {}
    if len(parts) > 1:
        current = None
        for line in parts[1].splitlines():
            if re.match(r"^\S", line) and not re.match(r"^\w+(\s*\([^)]*\))?\s*:", line):
                break  # next section (Returns:, ...)
            m = re.match(r"^\s*(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$", line)
            if m and (line.startswith("    ") or not line.startswith(" ")) and m.group(1) != "Returns":
                current = m.group(1)
                descs[current] = m.group(2).strip()
            elif current and line.strip():
                descs[current] += " " + line.strip()
    return summary, descs


def function_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """JSON schema of ``fn``'s keyword arguments (``self`` skipped) from hints and docstring."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    _, descs = parse_docstring(fn.__doc__)
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, p in sig.parameters.items():
        if name == "self":
            continue
        if name not in hints:
            raise TypeError(f"{fn.__qualname__}: argument {name!r} has no type hint")
        if name not in descs:
            raise TypeError(f"{fn.__qualname__}: argument {name!r} is not described in the docstring's Args")
        prop = _type_schema(hints[name])
        prop["description"] = descs[name]
        if p.default is inspect.Parameter.empty:
            required.append(name)
        else:
            prop["default"] = p.default
        props[name] = prop
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _coerce(name: str, value: Any, prop: dict[str, Any]) -> Any:
    types_ = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    if value is None or (isinstance(value, str) and value.strip().lower() in ("null", "none") and "null" in types_):
        if "null" in types_:
            return None
        raise ToolArgumentError(f"argument {name!r} must not be null")
    base = next(t for t in types_ if t != "null")
    try:
        if base == "string":
            value = value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
        elif base == "integer":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            value = int(float(value)) if isinstance(value, str) else int(value)
        elif base == "number":
            if isinstance(value, bool):
                raise ValueError
            value = float(value)
        elif base == "boolean":
            if isinstance(value, str):
                if value.strip().lower() not in ("true", "false"):
                    raise ValueError
                value = value.strip().lower() == "true"
            elif not isinstance(value, bool):
                raise ValueError
        elif base == "array" and not isinstance(value, list):
            raise ValueError
    except (TypeError, ValueError):
        raise ToolArgumentError(f"argument {name!r} must be of type {base}, got {value!r}") from None
    if "enum" in prop and value not in prop["enum"]:
        raise ToolArgumentError(f"argument {name!r} must be one of {prop['enum']}, got {value!r}")
    return value


def validate_arguments(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Arguments checked against ``schema``: unknown or missing ones raise, types are coerced,
    defaults filled in."""
    if not isinstance(args, dict):
        raise ToolArgumentError(f"arguments must be a JSON object, got {type(args).__name__}")
    props = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolArgumentError(f"unknown argument(s) {unknown}; this tool takes {sorted(props)}")
    missing = [k for k in schema["required"] if k not in args]
    if missing:
        raise ToolArgumentError(f"missing required argument(s) {missing}")
    out = {}
    for name, prop in props.items():
        out[name] = _coerce(name, args[name], prop) if name in args else prop.get("default")
    return out


# ----------------------------------------------------------------------------- the Tool class

class Tool:
    """Base class: subclasses set ``name``, ``video_args`` and implement ``forward`` and ``render``.

    ``forward`` receives validated arguments with video labels already resolved and returns a
    JSON-serialisable dict; its docstring's summary is the tool's description.

    A tool declares here, once, everything the registries read (:data:`sama_model.tools.TOOL_CLASSES`,
    :mod:`.backends`, :mod:`.contracts`, the profiles): its ``name``, its backends' ``contract``, the
    ``backend_classes`` that can serve it and its ``default_backends`` per profile kind.
    """

    name: ClassVar[str] = ""
    video_args: ClassVar[tuple[str, ...]] = ("video",)
    #: the protocol every backend of this tool implements (the methods ``forward`` calls; checked when a
    #: backend is built, :func:`.contracts.missing_methods`)
    contract: ClassVar[type | None] = None
    #: backend name -> ``"module:Class"``, imported only when a profile asks for that backend (heavy model
    #: backends never load in a profile that does not use them); user code adds more with
    #: :func:`.backends.register_backend`
    backend_classes: ClassVar[dict[str, str]] = {}
    #: profile kind -> the backend serving this tool in a profile of that kind (its ``kind:`` in
    #: ``profiles.yaml``; ``offline``: no weights, no network; ``paper``: the paper's models); None, or a kind
    #: not listed: the tool is off there. A profile may override any tool under its ``backends:``
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {}

    def __init__(self, videos: QuestionVideos, backend: Any, backend_name: str,
                 backend_options: dict[str, Any] | None = None, cache: ToolCache | None = None) -> None:
        self.videos = videos
        self.backend = backend
        self.backend_name = backend_name
        self.backend_options = dict(backend_options or {})
        self.cache = cache

    # -- description -------------------------------------------------------------------------
    @classmethod
    def description(cls) -> str:
        return parse_docstring(cls.forward.__doc__)[0]

    @classmethod
    def parameters(cls) -> dict[str, Any]:
        return function_schema(cls.forward)

    @classmethod
    def spec(cls) -> dict[str, Any]:
        """The OpenAI function-calling description of this tool."""
        return {"type": "function", "function": {"name": cls.name, "description": cls.description(),
                                                 "parameters": cls.parameters()}}

    # -- to implement ------------------------------------------------------------------------
    def forward(self, **kwargs: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        return json.dumps(data, default=str)[:300]

    def cacheable(self, args: dict[str, Any]) -> bool:
        return True

    @classmethod
    def wanted_by(cls, question: Any) -> bool:
        """Whether ``question`` (an :class:`~sama_model.question.AgentQuestion`) can call this tool at all;
        a run warms up only the backends some question wants (:func:`sama_model.tools.toolkit.warm_up`)."""
        return True

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def window(start: float | None, end: float | None) -> tuple[float | None, float | None]:
        """A checked (start, end) window in seconds; None means the video's start or end."""
        if start is not None and start < 0:
            start = 0.0
        if start is not None and end is not None and end < start:
            raise ToolArgumentError(f"window end {end} is before its start {start}")
        return (start, end)

    def _backend_lock(self) -> threading.Lock | None:
        if getattr(self.backend, "thread_safe", False):
            return None
        with _BACKEND_LOCKS_GUARD:
            return _BACKEND_LOCKS.setdefault(id(self.backend), threading.Lock())

    def call_backend(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call a backend method; serialised per backend unless it declares ``thread_safe = True``."""
        fn = getattr(self.backend, method)
        lock = self._backend_lock()
        if lock is None:
            return fn(*args, **kwargs)
        with lock:
            return fn(*args, **kwargs)

    # -- calling -----------------------------------------------------------------------------
    def _compute(self, args: dict[str, Any]) -> dict[str, Any]:
        """Run ``forward`` and normalise its result to plain JSON types."""
        return json.loads(json.dumps(self.forward(**args), default=_to_json))

    def __call__(self, **kwargs: Any) -> ToolResult:
        t0 = time.perf_counter()
        raw_args = dict(kwargs)
        try:
            args = validate_arguments(self.parameters(), kwargs)
            labels = []
            for key in self.video_args:
                if args.get(key) is not None:
                    args[key] = self.videos.resolve(args[key])
                    labels.append(args[key])
        except (ToolArgumentError, KeyError) as exc:
            return ToolResult(self.name, raw_args, error=f"{type(exc).__name__}: {exc}", backend=self.backend_name,
                              elapsed=time.perf_counter() - t0)
        try:
            if self.cache is None or not self.cacheable(args):
                data = self._compute(args)
                return ToolResult(self.name, args, data=data, text=self.render(args, data), videos=labels,
                                  backend=self.backend_name, elapsed=time.perf_counter() - t0)
            hashes = {k: self.videos.content_hash(args[k]) for k in self.video_args if args.get(k) is not None}
            rest = {k: v for k, v in args.items() if k not in self.video_args}
            key = cache_key(self.name, self.backend_name, self.backend_options, hashes, rest)
            with _BACKEND_LOCKS_GUARD:
                inflight = _INFLIGHT.setdefault(key, threading.Lock())
            with inflight:
                hit = self.cache.get(key)
                if hit is not None:
                    data = hit["data"]
                    return ToolResult(self.name, args, data=data, text=self.render(args, data), videos=labels,
                                      backend=self.backend_name, elapsed=time.perf_counter() - t0, cached=True)
                data = self._compute(args)
                self.cache.put(key, {"tool": self.name, "backend": self.backend_name, "data": data})
            with _BACKEND_LOCKS_GUARD:  # later callers find the entry on disk
                _INFLIGHT.pop(key, None)
            return ToolResult(self.name, args, data=data, text=self.render(args, data), videos=labels,
                              backend=self.backend_name, elapsed=time.perf_counter() - t0)
        except Exception as exc:  # a failing backend is evidence, not a crash
            return ToolResult(self.name, args, error=f"{type(exc).__name__}: {exc}"[:500], videos=labels,
                              backend=self.backend_name, elapsed=time.perf_counter() - t0)


def with_sampling(out: Any, clip: Any) -> Any:
    """A tool's result with how its video was sampled (frames decoded, window, policy): the trace
    then records the sampling behind every reading."""
    from mvx_tasks.video_decoder import sampling_of

    return {**out, "sampling": sampling_of(clip)} if isinstance(out, dict) else out


def _to_json(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def fmt_window(args: dict[str, Any]) -> str:
    s, e = args.get("start"), args.get("end")
    if s is None and e is None:
        return "whole video"
    return f"{0.0 if s is None else s:g}-{'end' if e is None else f'{e:g}'}s"


def check_shift(frames: int) -> None:
    """Refuse a negative ``shift_frames`` (a second reading's shift) before any video is decoded."""
    if frames < 0:
        raise ToolArgumentError(f"shift_frames must be 0 or more, got {frames}")


def fmt_shift(args: dict[str, Any]) -> str:
    """A second reading's note in a tool's text (``shift_frames``, see ``VideoClip.shifted_window``), else ``""``."""
    return f", frames shifted by {args['shift_frames']}" if args.get("shift_frames") else ""


def not_separable(data: dict[str, Any]) -> str:
    """A count tool's note when its count cannot tell the queried kind from other movers (``target_separable``
    false, see :class:`sama_model.tools.object_tracker.ObjectTrackerBackend`), else ``""``: the planner reads it."""
    if data.get("target_separable") is not False:
        return ""
    kind = data.get("asked_kind") or "the queried kind"
    return f"; counts {data.get('counted_as') or 'movers'}: cannot tell {kind} from other movers"
