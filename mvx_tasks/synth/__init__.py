"""MVX-Synth: a procedural, offline twin of MVX-Bench (all 11 tasks, same schema and conventions).

``generate(out_dir, ...)`` writes ``data.jsonl`` plus ``videos/``; ``plan(...)`` returns the same
samples without rendering (fast checks of text, answers and balance); ``ensure_synth(...)``
returns a cached generated folder. Same seed, same bytes.
"""
from .cache import default_cache_root, ensure_synth
from .common import DIFFICULTIES, Difficulty, GenerationError
from .generate import TASK_MODULES, generate, plan, plan_question, read_manifest

__all__ = ["DIFFICULTIES", "Difficulty", "GenerationError", "TASK_MODULES", "default_cache_root", "ensure_synth",
           "generate", "plan", "plan_question", "read_manifest"]
