"""What the subtitle skill reads: each video's subtitles (extracted whole, and retrieved by
relevance to a query) and the video reader's event description, joined as one evidence text."""
from __future__ import annotations

from ...actions import ToolCall
from ..context import PolicyContext

EVENT_QUERY = "Describe what happens in this video: who is present, what they do, and the outcome."


def evidence_text(ctx: PolicyContext, video: str) -> str:
    """Evidence keys: video_reader data["answer"] (EVENT_QUERY), subtitle_retriever data["text"]
    (extract) and data["hits"][].text (retrieve)."""
    parts = [ctx.reader_answer(video, EVENT_QUERY)]
    for d in ctx.results("subtitle_retriever", video):
        parts.append(str(d.get("text", "")))
        parts += [str(h.get("text", "")) for h in d.get("hits", [])]
    return " ".join(p for p in parts if p)


def read_calls(ctx: PolicyContext, videos: list[str], query: str | None = None) -> list[ToolCall]:
    """Subtitles (whole) and the reader's event description of each video; subtitle lines
    relevant to ``query`` too when one is given."""
    calls = []
    for v in videos:
        calls += [ctx.call("subtitle_retriever", video=v, mode="extract"), ctx.call("video_reader", video=v, query=EVENT_QUERY)]
        if query:
            calls.append(ctx.call("subtitle_retriever", video=v, mode="retrieve", query=query))
    return [c for c in calls if c is not None]
