"""Crash-safe writes live in the benchmark's lower layer (:mod:`mvx_tasks.atomic`), which the agent
may use and the benchmark's own commands need without the agent; this name keeps the agent's imports."""
from mvx_tasks.atomic import OutputWriteError, atomic_write_text, check_writable

__all__ = ["OutputWriteError", "atomic_write_text", "check_writable"]
