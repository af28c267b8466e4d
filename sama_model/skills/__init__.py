"""SAMA's five skills: each a SKILL.md (read by LLM planners) paired with a scripted policy.

The documents are loaded into the LLM planner's system context; the scripted planner runs the
paired Python policies (``<skill>/policy.py``) instead. Switching skills off (ablation) leaves
only the tool descriptions.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import yaml

SKILL_NAMES: tuple[str, ...] = ("meta_planner", "multi_video_comparison", "video_reader", "temporal_grounding",
                                "subtitle")
_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    triggers: str
    body: str  # the document without its front matter

    def prompt(self) -> str:
        return f"## Skill: {self.name}\n{self.body.strip()}"


def parse_skill(text: str, name: str) -> Skill:
    """A SKILL.md with a YAML front matter (name, description, triggers) and a Markdown body."""
    if not text.startswith("---"):
        raise ValueError(f"skill {name}: SKILL.md must start with a '---' front matter")
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front) or {}
    for key in ("name", "description", "triggers"):
        if key not in meta:
            raise ValueError(f"skill {name}: front matter lacks {key!r}")
    return Skill(str(meta["name"]), str(meta["description"]), str(meta["triggers"]), body)


@lru_cache(maxsize=None)
def load_skills() -> tuple[Skill, ...]:
    return tuple(parse_skill((_DIR / n / "SKILL.md").read_text(encoding="utf-8"), n) for n in SKILL_NAMES)


def skills_prompt(names: Sequence[str] | None = None) -> str:
    """Skill documents (all, or the named ones), meta planner first, for an LLM planner's system context."""
    chosen = [s for s in load_skills() if names is None or s.name in names]
    return "# Skills\n\n" + "\n\n".join(s.prompt() for s in chosen)
