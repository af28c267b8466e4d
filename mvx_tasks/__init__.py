"""MVX-Bench: the multi-video benchmark as harness tasks (registry, schema, loaders, scoring)."""
from .answers import extract_choice
from .registry import TaskSpec, all_tasks, bench_tasks, get_task, register_task
from .schema import Sample, SchemaError, Video

__all__ = ["extract_choice", "TaskSpec", "all_tasks", "bench_tasks", "get_task", "register_task",
           "Sample", "SchemaError", "Video"]
__version__ = "0.1.0"
