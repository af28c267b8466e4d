"""Builds a question's tool set from the configured backends (one backend instance per process), and
warms those backends up before a run."""
from __future__ import annotations

import logging
from collections.abc import Sequence

from ..cache import ToolCache
from ..question import AgentQuestion
from ..question_videos import QuestionVideos
from . import TOOL_CLASSES
from .backends import create_backend
from .base import BackendSpec, Tool

log = logging.getLogger(__name__)


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


def warm_up(backends: dict[str, BackendSpec | None], questions: Sequence[AgentQuestion]) -> dict[str, str]:
    """Call ``warm_up()`` on each backend that has one and that some question wants
    (:meth:`Tool.wanted_by`): its model loads before the first question, not part way through the run.

    Why: a tool called only by some questions (subtitle search by meaning) otherwise loads its model when
    the first such question comes, so a long run's memory steps up at an arbitrary point and a missing
    model is found only then. A failed warm-up is not fatal: it is logged and returned (tool -> reason),
    and that tool's calls then fail per question with the same reason, as without warm-up.
    """
    failed: dict[str, str] = {}
    for name, cls in TOOL_CLASSES.items():
        spec = backends.get(name)
        if spec is None or not any(cls.wanted_by(q) for q in questions):
            continue
        try:
            backend = create_backend(name, spec.name, **spec.options)
            if callable(getattr(backend, "warm_up", None)):
                backend.warm_up()
        except Exception as exc:  # the questions report it; the run goes on
            failed[name] = f"{type(exc).__name__}: {exc}"
            log.warning("SAMA: warming up %s (%s) failed: %s", name, spec.name, failed[name])
    return failed
