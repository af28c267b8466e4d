"""Backend contracts for SAMA's tools: what a backend receives and must return.

A *tool* (``sama_model.tools.<name>``) is what the planner calls: it has a name, a description,
a JSON schema and addresses videos by their question labels. A *backend* is the engine behind
it (``lite`` classical vision, or a model such as Qwen2.5-VL / CLIP / YOLO). Tools resolve
labels to decoded :class:`mvx_tasks.video_decoder.VideoClip` objects (one decode per video, shared) and
hand clips to backends. Backends see pixels, timestamps, subtitles and the query text only,
never a sample's ``answer`` or ``meta``.

Every backend method returns a JSON-serialisable ``dict`` (lists, numbers, strings), so results
can be cached on disk and written to traces. Times are seconds from the video's start; a window
``(start, end)`` of ``None`` means the whole video (:data:`sama_model.tools.base.Window`).

Each tool declares its contract where it is defined: a ``Protocol`` beside the tool class (e.g.
:class:`sama_model.tools.video_reader.VideoReaderBackend`), named by the class's ``contract``. Backends are
registered by ``(tool name, backend name)`` (each tool's ``backend_classes``, read by
:mod:`sama_model.tools.backends`) and constructed with keyword options from the profile; heavy models load
lazily on first use and are shared across questions within a process.
"""
from __future__ import annotations

from . import TOOL_CLASSES

#: tool name -> the protocol its backends implement (each tool's ``contract``; checked when a backend is built)
CONTRACTS: dict[str, type] = {name: cls.contract for name, cls in TOOL_CLASSES.items() if cls.contract is not None}


def missing_methods(tool: str, backend: object) -> list[str]:
    """The contract methods of ``tool`` that ``backend`` lacks (empty when it honours the contract)."""
    proto = CONTRACTS.get(tool)
    if proto is None or isinstance(backend, proto):
        return []
    wanted = [k for k, v in vars(proto).items() if callable(v) and not k.startswith("_")]
    return [k for k in wanted if not callable(getattr(backend, k, None))]
