"""Answers that a stated rule gave, not the evidence: the mark a solver's reason carries, and the tie rule.

A solver's ``decide`` returns ``(letter, reason)``. Where the evidence does not separate the letter from another (two
options score the same, a comparison lacks the number it compares with) and the solver still names one by a stated
rule (the first listed, a default relation), its reason carries :data:`RULE` followed by why. The agent then records
the answer's source as ``rule`` (:mod:`mvx_tasks.answer_sources`), not ``planner``: an accuracy figure over such
answers is the rule's hit rate, not the solver's. The scripted planner passes the mark on as
:attr:`sama_model.actions.FinalAnswer.rule`; an LLM planner's free text never sets it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

#: what a decision's reason says when a stated rule, not the evidence, named its letter
RULE = "by rule:"
#: scores closer than this are equal: float noise never decides an answer (the first listed of them is taken)
TIE_EPS = 1e-9


def by_rule(why: str) -> str:
    """The reason's part that marks a rule answer: ``"; by rule: <why>"``."""
    return f"; {RULE} {why}"


def rule_of(reason: str | None) -> str | None:
    """Why a stated rule named the letter (the text after :data:`RULE`), or None for an answer the evidence gave."""
    text = reason or ""
    at = text.find(RULE)
    if at < 0:
        return None
    return text[at + len(RULE):].split(";")[0].strip() or "a stated rule"


def tied_best(scores: Mapping[str, float], highest: bool = True) -> list[str]:
    """The keys whose score ties the best (within :data:`TIE_EPS`), in listed order; the first is the one taken."""
    if not scores:
        return []
    best = max(scores.values()) if highest else min(scores.values())
    return [k for k, v in scores.items() if abs(v - best) <= TIE_EPS]


def first_best(scores: Mapping[str, float], highest: bool = True) -> str | None:
    """The best-scoring key; on a tie (:func:`tied_best`) the first one listed."""
    tied = tied_best(scores, highest)
    return tied[0] if tied else None


def tie_mark(scores: Mapping[str, float], what: str, name: Callable[[str], str] = str, highest: bool = True) -> str:
    """:func:`by_rule`'s mark when the best score is tied ("B and D tie at 0.500 (highest what): the first listed is
    taken"), else ``""``."""
    tied = tied_best(scores, highest)
    if len(tied) < 2:
        return ""
    names = ", ".join(name(k) for k in tied[:-1]) + f" and {name(tied[-1])}"
    return by_rule(f"{names} tie at {scores[tied[0]] + 0.0:.3f} ({'highest' if highest else 'lowest'} {what}): the first "
                   f"listed, {name(tied[0])}, is taken")
