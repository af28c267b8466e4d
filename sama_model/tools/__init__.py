"""SAMA's tools: one module per tool, each served by a backend chosen by configuration.

A tool is declared once, in its module (:class:`~sama_model.tools.base.Tool`: ``name``, ``contract``,
``backend_classes``, ``default_backends``); the registries (this module's :data:`TOOL_CLASSES`,
:mod:`.backends`, :mod:`.contracts`, the profiles) are derived from the classes listed in :data:`TOOLS`.
"""
from __future__ import annotations

from .base import Tool, ToolArgumentError, ToolResult, function_schema
from .manipulation_detector import ManipulationDetectorTool
from .motion_analyzer import MotionAnalyzerTool
from .object_tracker import ObjectTrackerTool
from .scene_graph import SceneGraphTool
from .subtitle_retriever import SubtitleRetrieverTool
from .temporal_grounding import TemporalGroundingTool
from .video_reader import VideoReaderTool
from .visual_similarity import VisualSimilarityTool

#: every tool, in the order the planners list them (adding a tool: its module, and its class here)
TOOLS: tuple[type[Tool], ...] = (
    VideoReaderTool, TemporalGroundingTool, SceneGraphTool, ObjectTrackerTool, VisualSimilarityTool,
    SubtitleRetrieverTool, MotionAnalyzerTool, ManipulationDetectorTool)
#: tool name -> class, in that order
TOOL_CLASSES: dict[str, type[Tool]] = {cls.name: cls for cls in TOOLS}

__all__ = ["Tool", "ToolArgumentError", "ToolResult", "function_schema", "TOOLS", "TOOL_CLASSES"]
