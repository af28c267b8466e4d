"""Builds a question's tool set from the configured backends (one backend instance per process)."""
from __future__ import annotations

from ..cache import ToolCache
from ..question_videos import QuestionVideos
from . import TOOL_CLASSES
from .backends import create_backend
from .base import BackendSpec, Tool


def build_tools(videos: QuestionVideos, backends: dict[str, BackendSpec | None],
                cache: ToolCache | None = None) -> dict[str, Tool]:
    """Tools for one question; a tool whose backend spec is None is switched off."""
    tools: dict[str, Tool] = {}
    for name, cls in TOOL_CLASSES.items():
        spec = backends.get(name)
        if spec is None:
            continue
        backend = create_backend(name, spec.name, **spec.options)
        tools[name] = cls(videos, backend, spec.name, spec.options, cache)
    return tools
