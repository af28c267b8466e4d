"""The agent's input: what a question exposes publicly (no answer, no meta), from any harness.

Every adapter turns its own request format into an :class:`AgentQuestion`; nothing downstream
ever sees a sample's ``answer`` or ``meta`` because this type has no field for them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mvx_tasks.schema import Sample


@dataclass(frozen=True)
class VideoRef:
    """One labelled video of a question; ``path`` is absolute or relative to the question's root."""

    label: str
    path: str
    subtitle: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "path": self.path, "subtitle": self.subtitle}


@dataclass(frozen=True)
class AgentQuestion:
    """A question over labelled videos, as the agent may see it: multiple choice when ``options``
    is non-empty, else open-ended (answered in free text, following ``instruction``)."""

    id: str
    question: str
    options: dict[str, str]
    videos: tuple[VideoRef, ...]
    task: str | None = None  # registry code, only when the run opts in (task_hint=on)
    root: str | None = None  # dataset root; video paths must stay inside it
    instruction: str = ""  # the task's answer instruction ("Answer with a single word.")

    @property
    def open_ended(self) -> bool:
        return not self.options

    @property
    def labels(self) -> list[str]:
        return [v.label for v in self.videos]

    def public_dict(self) -> dict[str, Any]:
        return {"id": self.id, "task": self.task, "question": self.question, "options": dict(self.options),
                "videos": [v.to_dict() for v in self.videos], "root": self.root, "instruction": self.instruction}

    @classmethod
    def from_sample(cls, sample: Sample, root: str | None = None) -> "AgentQuestion":
        """From a validated :class:`Sample`; only its public fields are read."""
        return cls.from_public(sample.public_dict(), root=root)

    @classmethod
    def from_public(cls, data: Mapping[str, Any], root: str | None = None) -> "AgentQuestion":
        videos = tuple(VideoRef(str(v["label"]), str(v["path"]), v.get("subtitle") or None)
                       for v in data["videos"])
        return cls(id=str(data["id"]), question=str(data["question"]), options=dict(data.get("options") or {}),
                   videos=videos, task=(str(data["task"]) if data.get("task") else None),
                   root=root if root is not None else data.get("root"), instruction=str(data.get("instruction") or ""))
