"""Parsing a local model's JSON actions, with the usual repairs (never eval: JSON only)."""
from __future__ import annotations

import json
import re
from typing import Any


def first_json_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text`` (braces inside strings are respected)."""
    start = text.find("{")
    while start != -1:
        depth, in_str, quote, esc = 0, False, "", False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if esc:
                    esc = False
                elif ch == "\\":
                    esc = True
                elif ch == quote:
                    in_str = False
            elif ch in "\"'":
                in_str, quote = True, ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
        start = text.find("{", start + 1)
    return None


def repair_json(s: str) -> str:
    """Common model mistakes: smart quotes, single quotes, Python literals, trailing commas,
    unquoted keys."""
    s = s.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    if "'" in s and '"' not in s:
        s = s.replace("'", '"')
    s = re.sub(r"\bTrue\b", "true", s)
    s = re.sub(r"\bFalse\b", "false", s)
    s = re.sub(r"\bNone\b", "null", s)
    s = re.sub(r",\s*([}\]])", r"\1", s)
    s = re.sub(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:", r'\1"\2":', s)
    return s


def parse_json_action(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) or (None, reason): the first JSON object of ``text``, repaired if needed."""
    raw = first_json_object(text or "")
    if raw is None:
        return None, "no JSON object in the reply"
    for candidate in (raw, repair_json(raw)):
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj, None
    return None, f"invalid JSON: {raw[:120]}"
