"""The MVX task registry: the one table every component reads.

A task is described once here (code, name, level, expected question count, options, chance);
loaders, lmms-eval YAML hooks, metrics, the synthetic generators, the agent and the
leaderboard all look tasks up through :func:`get_task` rather than keeping their own lists.

Out-of-tree tasks are added with :func:`register_task`, or declaratively through YAML files
listed in the ``MVX_TASK_REGISTRY`` environment variable (``os.pathsep``-separated), so a user
can add a task without editing this package (see README, "Adding a task").
"""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from .benchmarks import PEERS
from .task_spec import LEVELS, TaskSpec

_BUILTIN: tuple[TaskSpec, ...] = (
    TaskSpec("CNT", "Counting", "perception", 150, 4, 0.25,
             "Which candidate's count of a target object stands in a relation to the reference's."),
    TaskSpec("FD", "Forensic Detection", "perception", 100, 2, 0.50,
             "Which of two videos has been manipulated."),
    TaskSpec("AM", "Action Matching", "matching", 150, 4, 0.25,
             "Which candidate shows the same action as the reference."),
    TaskSpec("ART", "Art Style", "matching", 150, 4, 0.25,
             "Which candidate shares the reference's rendering style."),
    TaskSpec("RID", "Re-Identification", "matching", 150, 2, 0.50,
             "Whether two clips show the same identity."),
    TaskSpec("MVR", "Multi-View Reasoning", "matching", 106, 4, 0.25,
             "Which candidate shows the reference's event from another viewpoint or modality."),
    TaskSpec("VS", "Video Similarity", "matching", 69, 4, 0.25,
             "Which candidate is a near-duplicate of the reference."),
    TaskSpec("CR", "Counterfactual Reasoning", "reasoning", 150, 4, 0.25,
             "Which candidate's counterfactual answer index matches the reference's."),
    TaskSpec("DE", "Defeasible Entailment", "reasoning", 150, 2, 0.50,
             "Whether an update video strengthens or weakens a hypothesis about a premise video."),
    TaskSpec("SEQ", "Sequence Reasoning", "reasoning", 117, None, 0.405,
             "The chronological order of shuffled clips."),
    TaskSpec("SPR", "Spatial Relation", "reasoning", 150, 4, 0.25,
             "Which candidate shares at least one camera-motion trend with the reference."),
)

#: Tasks that ship with the package but are not part of MVX-Bench's 1,442 questions.
_TOOLING: tuple[TaskSpec, ...] = (
    TaskSpec("PRB", "Video-visibility probe", "perception", 0, 4, 0.25,
             "The background colour of one named video of several: answerable only by seeing that video."),
)

_TASKS: dict[str, TaskSpec] = {t.code: t for t in _BUILTIN + _TOOLING}
#: Levels (sub-task groups) per benchmark; MVX-Bench's are the paper's three cognitive levels.
_LEVELS_BY_BENCHMARK: dict[str, tuple[str, ...]] = {"MVX-Bench": LEVELS}


def register_levels(benchmark: str, levels: tuple[str, ...]) -> None:
    """Declare the levels (sub-task groups) of another benchmark, e.g. CVBench's three tiers."""
    clash = [lv for lv in levels if any(lv in lvs for b, lvs in _LEVELS_BY_BENCHMARK.items() if b != benchmark)]
    if clash:
        raise ValueError(f"{benchmark}: levels {clash} are already used by another benchmark; prefix them")
    _LEVELS_BY_BENCHMARK[benchmark] = tuple(levels)


def levels_of(benchmark: str = "MVX-Bench") -> tuple[str, ...]:
    """The levels of a benchmark (MVX-Bench's for a benchmark that declared none)."""
    return _LEVELS_BY_BENCHMARK.get(benchmark, LEVELS)


def all_levels() -> tuple[str, ...]:
    """Every level of every benchmark, MVX-Bench's first."""
    return tuple(lv for lvs in _LEVELS_BY_BENCHMARK.values() for lv in lvs)
_loaded_env: str | None = None

#: The 11 MVX-Bench task codes in the paper's table order.
BENCH_CODES: tuple[str, ...] = tuple(t.code for t in _BUILTIN)


class UnknownTaskError(KeyError):
    """A task code that is not in the registry."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


def register_task(spec: TaskSpec, *, replace: bool = False) -> TaskSpec:
    """Add a task to the registry (one line per new task)."""
    code = spec.code.strip().upper()
    if not code.replace("_", "").isalnum() or code.startswith("_"):
        raise ValueError(f"task code {spec.code!r} must be alphanumeric (it becomes part of a harness task name)")
    levels = levels_of(spec.benchmark)
    if spec.level not in levels:
        raise ValueError(f"task {code}: level {spec.level!r} is not one of {', '.join(levels)}")
    if not 0.0 <= spec.chance <= 1.0:
        raise ValueError(f"task {code}: chance {spec.chance} must be a fraction in [0, 1]")
    if code in _TASKS and not replace and _TASKS[code] != spec:
        raise ValueError(f"task {code} is already registered; pass replace=True to override it")
    if code != spec.code:
        spec = TaskSpec(**{**spec.to_dict(), "code": code})
    _TASKS[code] = spec
    return spec


def load_registry_file(path: str | os.PathLike) -> list[TaskSpec]:
    """Register every task listed in a YAML file: ``tasks: [{code, name, level, ...}, ...]``."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read task registry file {path}: {exc}") from exc
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a mapping with a 'tasks' list of task entries")
    out = []
    fields = set(TaskSpec.__dataclass_fields__)
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not {"code", "name", "level"} <= set(entry):
            raise ValueError(f"{path}: task entry {i} needs at least code, name and level")
        unknown = set(entry) - fields
        if unknown:
            raise ValueError(f"{path}: task entry {i} has unknown fields {sorted(unknown)}; known: {sorted(fields)}")
        entry = {"n_questions": 0, "n_options": None, "chance": 0.0, **entry}
        out.append(register_task(TaskSpec(**entry), replace=True))
    return out


def _load_env() -> None:
    global _loaded_env
    value = os.environ.get("MVX_TASK_REGISTRY", "")
    if value == _loaded_env:
        return
    _loaded_env = value
    for part in filter(None, value.split(os.pathsep)):
        load_registry_file(part)


def get_task(code: str) -> TaskSpec:
    """The registry entry for a task code (case-insensitive)."""
    _load_env()
    key = str(code).strip().upper()
    try:
        return _TASKS[key]
    except KeyError:
        raise UnknownTaskError(
            f"unknown task code {code!r}; known codes: {', '.join(_TASKS)}"
            " (add a task with mvx_tasks.registry.register_task or MVX_TASK_REGISTRY)") from None


def all_tasks() -> list[TaskSpec]:
    """Every registered task, built-in ones first in the paper's order."""
    _load_env()
    return list(_TASKS.values())


def bench_tasks() -> list[TaskSpec]:
    """The 11 MVX-Bench tasks in the paper's table order."""
    return [_TASKS[c] for c in BENCH_CODES]


def benchmark_tasks(benchmark: str) -> list[TaskSpec]:
    """The tasks of one benchmark in registry order (``MVX-Bench``: the 11, not the probe)."""
    if benchmark == "MVX-Bench":
        return bench_tasks()
    return [t for t in all_tasks() if t.benchmark == benchmark]


def tasks_by_level(level: str) -> list[TaskSpec]:
    return [t for t in all_tasks() if t.level == level]


def total_questions() -> int:
    """Questions in the full MVX-Bench (1,442)."""
    return sum(t.n_questions for t in bench_tasks())


def benchmark_of_code(code: str) -> str:
    """The benchmark a task code belongs to (MVX-Bench for MVX's own codes)."""
    return get_task(code).benchmark


def _register_peers() -> None:
    """Put every peer benchmark's levels and sub-tasks into the registry (idempotent)."""
    for bm in PEERS:
        register_levels(bm.name, tuple(lv.code for lv in bm.levels))
        for spec in bm.tasks:
            register_task(spec, replace=True)


# Peer benchmarks (CVBench, MVU-Eval, CrossVid): their sub-tasks are registry entries too, declared
# with their data sources in mvx_tasks/benchmarks.py (registered here so every lookup sees them).
_register_peers()
