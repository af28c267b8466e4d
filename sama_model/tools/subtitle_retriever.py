"""subtitle_retriever: semantic search over a video's subtitles, and exact text by time range."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from mvx_tasks.subtitles import SubtitleSegment

from .base import BackendSpec, Tool, ToolArgumentError, Window


@runtime_checkable
class SubtitleBackend(Protocol):
    """Semantic retrieval over a video's subtitle segments and extraction by time range.

    ``retrieve`` -> ``{"hits": [{"start", "end", "text", "score"}...]}`` best first;
    ``extract`` -> ``{"text": str, "segments": [...]}`` for segments overlapping the window.
    """

    def retrieve(self, segments: Sequence[SubtitleSegment], query: str, top_k: int = 3) -> dict: ...

    def extract(self, segments: Sequence[SubtitleSegment], window: Window = (None, None)) -> dict: ...


class SubtitleRetrieverTool(Tool):
    name = "subtitle_retriever"
    contract = SubtitleBackend
    backend_classes: ClassVar[dict[str, str]] = {
        "lite": "sama_model.backends.lite.subtitle_retriever:MiniLMSubtitleRetriever",
        "sentence_transformers": "sama_model.backends.models.text_retriever:SentenceTransformerSubtitleRetriever",
    }
    default_backends: ClassVar[dict[str, BackendSpec | None]] = {
        "offline": BackendSpec("lite"),
        "paper": BackendSpec("sentence_transformers", {"model": "BAAI/bge-m3"}),
    }

    @classmethod
    def wanted_by(cls, question: Any) -> bool:
        """Only a question with a subtitle file can search one."""
        return any(v.subtitle for v in question.videos)

    def forward(self, video: str, mode: Literal["retrieve", "extract"] = "retrieve", query: str = "",
                start: float | None = None, end: float | None = None, top_k: int = 3) -> dict[str, Any]:
        """Search a video's subtitles (spoken words, on-screen text) for segments relevant to a query, or extract
        the exact subtitle text of a time range.

        Args:
            video: Label of the video whose subtitles to read.
            mode: "retrieve" finds the segments most relevant to query; "extract" returns the text between start and
                end.
            query: What to search for (mode "retrieve").
            start: Range start in seconds for mode "extract"; null for the beginning.
            end: Range end in seconds for mode "extract"; null for the end.
            top_k: How many segments to retrieve.
        """
        segments = self.videos.subtitles(video)
        if not segments:
            return {"available": False, "hits": [], "text": "", "segments": []}
        if mode == "retrieve":
            if not query.strip():
                raise ToolArgumentError("mode 'retrieve' needs a non-empty query")
            out = self.call_backend("retrieve", segments, query, max(1, int(top_k)))
        else:
            out = self.call_backend("extract", segments, self.window(start, end))
        return {"available": True, **out}

    def render(self, args: dict[str, Any], data: dict[str, Any]) -> str:
        if not data.get("available", True):
            return f"{args['video']}: no subtitles"
        if args["mode"] == "retrieve":
            hits = " | ".join(f"[{h['start']:.1f}s] {h['text']}" for h in data.get("hits", [])[: args["top_k"]])
            return f"{args['video']} subtitles for '{args['query']}': {hits or 'no match'}"
        return f"{args['video']} subtitles: {data.get('text', '')}"
