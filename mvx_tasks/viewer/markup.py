"""HTML building blocks of the viewer: escaping, number and JSON formatting, the page shell with its
navigation. Every text that comes from a run goes through :func:`e` (:func:`html.escape`)."""
from __future__ import annotations

import html
import json
from typing import Any, Iterable

MAX_PRE = 20000  # characters of one JSON/text block on a question page


def e(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def pct(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"


def jdump(x: Any, limit: int = MAX_PRE) -> str:
    text = x if isinstance(x, str) else json.dumps(x, indent=1, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


def page(title: str, body: str, *, prefix: str = "", here: str = "", run_name: str = "", has_compare: bool = False,
         scripts: Iterable[str] = ()) -> str:
    nav = [("index.html", "Run", "run"), ("questions.html", "Questions", "questions")]
    if has_compare:
        nav.append(("compare.html", "Compare", "compare"))
    here_attr = ' class="here"'
    links = " ".join(f'<a href="{prefix}{href}"{here_attr if key == here else ""}>{label}</a>'
                     for href, label, key in nav)
    js = "".join(f'<script src="{prefix}{s}"></script>' for s in scripts)
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(title)}</title>"
            f'<link rel="stylesheet" href="{prefix}assets/viewer.css"></head><body>'
            f'<header class="top"><strong>mvx-bench view</strong> {links}<span class="run">{e(run_name)}</span></header>'
            f"<main>{body}</main>{js}</body></html>\n")
