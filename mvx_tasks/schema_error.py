"""The error a sample that breaks the canonical schema raises (:mod:`.schema`), also raised by the peer
benchmarks' row mappings (:mod:`.benchmarks`); below both."""
from __future__ import annotations


class SchemaError(ValueError):
    """A sample that does not follow the canonical schema.

    The message always names the question id (when known), the file and line, and the fix.
    """

    def __init__(self, problem: str, *, sample_id: str | None = None, where: str | None = None,
                 fix: str | None = None):
        self.problem, self.sample_id, self.where, self.fix = problem, sample_id, where, fix
        parts = []
        if sample_id is not None:
            parts.append(f"question {sample_id!r}")
        if where:
            parts.append(f"({where})")
        head = " ".join(parts)
        msg = f"{head}: {problem}" if head else problem
        if fix:
            msg += f". Fix: {fix}"
        super().__init__(msg)
