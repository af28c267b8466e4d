"""Comparable claims extracted from tool results: counts, colours, presence and camera motion.

Verification compares claims, not raw outputs. Each tool's structured keys are read explicitly
(scene_graph ``counts`` and ``frames[].objects[].color``, object_tracker ``counts``, motion_analyzer
``camera.trends``, a video_reader's ``description`` when a backend provides one); a video_reader's
free-text answer is parsed shallowly ("two red cups", "there is no dog", "the camera pans left").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .tools.base import ToolResult
from .tools.scene_graph import majority_colors

NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"no": 0, "a single": 1, "single": 1, "a pair of": 2, "both": 2})
COLORS = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "brown", "white", "grey",
          "gray", "black")
_STOP = {"and", "or", "in", "on", "at", "with", "are", "is", "was", "were", "of", "the", "a", "an", "that",
         "which", "visible", "present", "shown", "seen", "appear", "appears", "there", "here", "to", "from",
         "while", "but", "each", "per", "frame", "frames", "total", "different", "distinct", "moving", "other"}
_CAMERA = [
    (r"\bpan(?:s|ning|ned)?\s+(?:to\s+the\s+)?left\b", "pan_left"),
    (r"\bpan(?:s|ning|ned)?\s+(?:to\s+the\s+)?right\b", "pan_right"),
    (r"\btilt(?:s|ing|ed)?\s+up(?:ward)?s?\b", "tilt_up"),
    (r"\btilt(?:s|ing|ed)?\s+down(?:ward)?s?\b", "tilt_down"),
    (r"\bzoom(?:s|ing|ed)?\s+in\b", "zoom_in"),
    (r"\bzoom(?:s|ing|ed)?\s+out\b", "zoom_out"),
    (r"\b(?:static|stationary|fixed|still)\s+camera\b|\bcamera\s+(?:is\s+)?(?:static|stationary|fixed|still)\b", "static"),
]


def singular(word: str) -> str:
    """Crude English singular, enough to match "cups" with "cup" and "boxes" with "box"."""
    w = word.lower().strip()
    if w in ("people",):
        return "person"
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "sses")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us")) and len(w) > 3:
        return w[:-1]
    return w


@dataclass(frozen=True)
class Claim:
    """One comparable statement a tool made about one video."""

    video: str
    attribute: str  # "count" | "color" | "presence" | "motion"
    subject: str  # normalised object label, or "camera"
    value: Any  # int, colour name, bool, or sorted tuple of camera trends
    tool: str
    window: tuple[float | None, float | None]
    call_id: str


def _num(tok: str) -> int | None:
    if tok.isdigit():
        return int(tok)
    return NUMBER_WORDS.get(tok)


def text_claims(text: str) -> dict[str, dict[str, Any]]:
    """Counts, colours, presence and camera trends stated in free text."""
    t = text.lower()
    out: dict[str, dict[str, Any]] = {"count": {}, "color": {}, "presence": {}, "motion": {}}
    for phrase in ("a single", "a pair of"):
        t = t.replace(phrase, phrase.replace(" ", "_"))
    tokens = re.findall(r"[a-z_]+|\d+", t)
    for i, tok in enumerate(tokens):
        n = _num(tok.replace("_", " "))
        if n is None:
            continue
        run = []
        for nxt in tokens[i + 1:i + 4]:
            if nxt in _STOP or _num(nxt) is not None:
                break
            run.append(nxt)
        if not run:
            continue
        noun = singular(run[-1])
        if noun in COLORS:
            continue
        out["count"].setdefault(noun, n)
        out["presence"].setdefault(noun, n > 0)
        for adj in run[:-1]:
            if adj in COLORS:
                out["color"].setdefault(noun, "grey" if adj == "gray" else adj)
    for m in re.finditer(r"\b(" + "|".join(COLORS) + r")\s+([a-z]+)", t):
        noun = singular(m.group(2))
        if noun not in _STOP and noun not in COLORS:
            out["color"].setdefault(noun, "grey" if m.group(1) == "gray" else m.group(1))
    for m in re.finditer(r"\bthe\s+([a-z]+)\s+(?:is|looks|appears)\s+(" + "|".join(COLORS) + r")\b", t):
        out["color"].setdefault(singular(m.group(1)), "grey" if m.group(2) == "gray" else m.group(2))
    trends = sorted({name for pat, name in _CAMERA if re.search(pat, t)})
    if trends:
        out["motion"]["camera"] = tuple(trends)
    return out


def _norm_counts(counts: Any) -> dict[str, int]:
    if not isinstance(counts, dict):
        return {}
    out = {}
    for k, v in counts.items():
        try:
            out[singular(str(k))] = int(round(float(v)))
        except (TypeError, ValueError):
            continue
    return out


def result_claims(result: ToolResult) -> list[Claim]:
    """The comparable claims of one successful tool result (none for tools that make none, nor for a second
    reading on shifted frames: the skill that asked for it weighs it with the first, see ``object_tracker``'s
    ``shift_frames``)."""
    if not result.ok or not result.videos or result.args.get("shift_frames"):
        return []
    video, window, cid = result.videos[0], result.window, result.call_id
    found: dict[str, dict[str, Any]] = {"count": {}, "color": {}, "presence": {}, "motion": {}}
    d = result.data
    if result.tool == "video_reader":
        desc = d.get("description") if isinstance(d.get("description"), dict) else {}
        found = text_claims(str(d.get("answer", "")))
        for label, n in _norm_counts(desc.get("counts")).items():
            found["count"][label] = n
            found["presence"][label] = n > 0
        for label, c in (desc.get("colors") or {}).items():
            found["color"][singular(str(label))] = str(c)
        trends = (desc.get("camera") or {}).get("trends") if isinstance(desc.get("camera"), dict) else None
        if trends:
            found["motion"]["camera"] = tuple(sorted(trends))
    elif result.tool in ("scene_graph", "object_tracker"):
        for label, n in _norm_counts(d.get("counts")).items():
            found["count"][label] = n
            found["presence"][label] = n > 0
        if result.tool == "scene_graph":
            for label, c in majority_colors(d).items():
                found["color"][singular(label)] = c
    elif result.tool == "motion_analyzer" and not result.args.get("next_video"):
        trends = (d.get("camera") or {}).get("trends")
        if trends:
            found["motion"]["camera"] = tuple(sorted(trends))
    claims = []
    for attribute, items in found.items():
        for subject, value in items.items():
            claims.append(Claim(video, attribute, subject, value, result.tool, window, cid))
    return claims
