"""The agent's input: what a question exposes publicly (no answer, no meta), from any harness.

Every adapter turns its own request format into an :class:`AgentQuestion`; nothing downstream
ever sees a sample's ``answer`` or ``meta`` because this type has no field for them.
"""
from __future__ import annotations

import json
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
    """A multiple-choice question over labelled videos, as the agent may see it."""

    id: str
    question: str
    options: dict[str, str]
    videos: tuple[VideoRef, ...]
    task: str | None = None  # registry code when the harness knows it
    root: str | None = None  # dataset root; video paths must stay inside it

    @property
    def labels(self) -> list[str]:
        return [v.label for v in self.videos]

    def public_dict(self) -> dict[str, Any]:
        return {"id": self.id, "task": self.task, "question": self.question, "options": dict(self.options),
                "videos": [v.to_dict() for v in self.videos], "root": self.root}

    @classmethod
    def from_sample(cls, sample: Sample, root: str | None = None) -> "AgentQuestion":
        """From a validated :class:`Sample`; only its public fields are read."""
        return cls.from_public(sample.public_dict(), root=root)

    @classmethod
    def from_public(cls, data: Mapping[str, Any], root: str | None = None) -> "AgentQuestion":
        videos = tuple(VideoRef(str(v["label"]), str(v["path"]), v.get("subtitle") or None)
                       for v in data["videos"])
        return cls(id=str(data["id"]), question=str(data["question"]), options=dict(data["options"]),
                   videos=videos, task=(str(data["task"]) if data.get("task") else None),
                   root=root if root is not None else data.get("root"))

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> "AgentQuestion":
        """From an MVX harness doc: reads id/task/question/options/videos/root only (never answer/meta)."""
        def as_obj(value: Any) -> Any:
            return json.loads(value) if isinstance(value, str) else value

        videos = as_obj(doc["videos"])
        return cls.from_public({"id": doc["id"], "task": doc.get("task"), "question": doc["question"],
                                "options": as_obj(doc["options"]), "videos": videos},
                               root=doc.get("root") or None)
