"""Scripted policies of the subtitle skill, for the reasoning tasks with text (DE, CR): subtitles
are primary evidence (retrieved by relevance, extracted by range), video_reader answers complete
them. One module per task (``de.py`` with the hypothesis reader ``hypothesis.py``; ``cr.py``),
the shared evidence reads in ``evidence.py``."""
from __future__ import annotations

from . import cr, de

plan_de, decide_de = de.plan, de.decide
plan_cr, decide_cr = cr.plan, cr.decide

__all__ = ["plan_de", "decide_de", "plan_cr", "decide_cr"]
