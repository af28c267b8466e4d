"""SAMA's tools: one module per tool, each served by a backend chosen by configuration."""
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

#: tool name -> class, in the order the planners list them
TOOL_CLASSES: dict[str, type[Tool]] = {cls.name: cls for cls in (
    VideoReaderTool, TemporalGroundingTool, SceneGraphTool, ObjectTrackerTool, VisualSimilarityTool,
    SubtitleRetrieverTool, MotionAnalyzerTool, ManipulationDetectorTool)}

__all__ = ["Tool", "ToolArgumentError", "ToolResult", "function_schema", "TOOL_CLASSES"]
