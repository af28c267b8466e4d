"""One benchmark task as the registry (:mod:`.registry`) and the peer benchmarks' records (:mod:`.benchmarks`)
describe it; below both, so neither imports the other for it."""
from __future__ import annotations

from dataclasses import asdict, dataclass

LEVELS: tuple[str, ...] = ("perception", "matching", "reasoning")


@dataclass(frozen=True)
class TaskSpec:
    """One benchmark task as the paper defines it."""

    code: str  # upper-case short code, e.g. "CNT"
    name: str  # human-readable name
    level: str  # one of LEVELS
    n_questions: int  # questions in the full benchmark (0 for tasks outside MVX-Bench)
    n_options: int | None  # options per question; None when it varies per question
    chance: float  # expected accuracy of uniform guessing, in [0, 1]
    description: str = ""
    benchmark: str = "MVX-Bench"  # which benchmark the task belongs to (see mvx_tasks.benchmarks)

    @property
    def slug(self) -> str:
        """Lower-case code used in harness task names (``mvx_bench_<slug>``, ``cvbench_mv_<slug>``)."""
        return self.code.lower()

    def to_dict(self) -> dict:
        return asdict(self)
