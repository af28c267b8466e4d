"""Subtitle files (SRT, WebVTT, or plain text) as timed segments: the one parser."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_TIME = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})[\.,](\d{1,3})")


@dataclass(frozen=True)
class SubtitleSegment:
    start: float
    end: float
    text: str

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "text": self.text}


def _seconds(m: re.Match) -> float:
    h, mi, s, ms = m.groups()
    return int(h or 0) * 3600 + int(mi) * 60 + int(s) + int(ms.ljust(3, "0")) / 1000.0


def parse_subtitles(text: str) -> list[SubtitleSegment]:
    """Parse SRT or WebVTT text; text without any timing line becomes one untimed segment."""
    segments: list[SubtitleSegment] = []
    blocks = re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip())
    for block in blocks:
        lines = [ln for ln in block.split("\n") if ln.strip()]
        for i, line in enumerate(lines):
            if "-->" in line:
                times = list(_TIME.finditer(line))
                if len(times) >= 2:
                    body = " ".join(ln.strip() for ln in lines[i + 1:])
                    body = re.sub(r"<[^>]+>", "", body).strip()
                    if body:
                        segments.append(SubtitleSegment(_seconds(times[0]), _seconds(times[1]), body))
                break
    if not segments and text.strip() and "-->" not in text:
        segments.append(SubtitleSegment(0.0, float("inf"), " ".join(text.split())))
    return segments


def read_subtitles(path: str | Path) -> list[SubtitleSegment]:
    return parse_subtitles(Path(path).read_text(encoding="utf-8", errors="replace"))


def format_srt(segments: list[SubtitleSegment]) -> str:
    """Write segments as SRT (used by the synthetic generator and tests)."""
    def ts(x: float) -> str:
        ms = int(round(x * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
    return "\n".join(f"{i}\n{ts(s.start)} --> {ts(s.end)}\n{s.text}\n" for i, s in enumerate(segments, 1))
