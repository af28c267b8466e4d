"""What a planner can decide: call tools, or give the final answer."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class ToolCall:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def key(self) -> str:
        """Canonical identity (tool + arguments) used to avoid repeating a call."""
        return self.tool + json.dumps(self.args, sort_keys=True, default=str)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FinalAnswer:
    text: str  # planner output that states the answer, parsed with mvx_tasks.answers.extract_choice
    reason: str = ""
    #: why a stated rule, not the evidence, named the letter (a tie's first listed option, a default), when the
    #: scripted planner's solver says so (:func:`sama_model.skills.rules.rule_of`); the answer's source is then
    #: ``rule``. None for an answer the evidence gave, and always for an LLM planner's.
    rule: str | None = None
