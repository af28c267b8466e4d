"""Scripted policies of the multi-video comparison skill, by task code: reference first, then
every candidate with the same queries; appearance questions rank by visual_similarity, event
questions add video_reader and motion evidence; a decision is made once every comparison is in.

One module per task (``cnt.py``, ``am.py``, ...), each with ``plan(ctx)`` and ``decide(ctx)``;
the shared option mapping and similarity procedure are in ``common.py``. To add a comparison
task, write its module and add one line here.
"""
from __future__ import annotations

from typing import Any

from . import am, art, cnt, mvr, rid, seq, spr, vs

POLICIES: dict[str, tuple[Any, Any]] = {
    "CNT": (cnt.plan, cnt.decide), "AM": (am.plan, am.decide), "ART": (art.plan, art.decide),
    "RID": (rid.plan, rid.decide), "MVR": (mvr.plan, mvr.decide), "VS": (vs.plan, vs.decide),
    "SPR": (spr.plan, spr.decide), "SEQ": (seq.plan, seq.decide),
}
