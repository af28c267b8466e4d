"""Reading a DE hypothesis as a visual relation: subject, relation, object, negation.

Three relations can be measured by the tools: an object *reaching* a zone, one kind of object
*outnumbering* another, one tower ending up *taller* than another. Each has a lexicon of trigger
phrases (synonyms, tenses, auxiliaries such as "is going to" or "ends up"), read in both
directions (active "the red star will reach the blue area"; passive "the blue area will be
reached by the red star"; inverse comparatives "fewer circles than stars", "shorter than"),
with negation ("won't", "never", "fails to") flipping the relation. Noun phrases are whatever
words stand around the trigger (up to three, no function words), so the parser keeps no
colour or shape list: the first word of a phrase ("red" in "red star") is the tools' query.
A hypothesis none of these patterns reads returns None, and the caller uses the text evidence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...claims import singular


@dataclass(frozen=True)
class DeRelation:
    """A visual relation a hypothesis states: kind "reach" (subject, zone), "more" (thing A,
    thing B, singular) or "taller" (subject tower, rival tower); ``a``/``b`` are the tool query
    words; ``negated``: the hypothesis says the relation does NOT hold."""

    kind: str
    a: str
    b: str
    negated: bool = False


_CONTRACTIONS = {"won't": "will not", "can't": "cannot", "isn't": "is not", "aren't": "are not",
                 "doesn't": "does not", "don't": "do not", "wouldn't": "would not", "didn't": "did not",
                 "shan't": "shall not", "couldn't": "could not"}
#: auxiliaries, adverbs and negation that may stand between a subject and its verb
_AUX_WORDS = ("will would shall should can cannot could may might must does do did is are was were be been being "
              "going to about likely expected set eventually finally ultimately soon successfully also still then "
              "manage manages managed able not never no longer fail fails failed").split()
#: words that never belong to a noun phrase
_FUNCTION = _AUX_WORDS + ("than by more fewer less there in into inside on at of within onto toward towards over "
                          "above past beyond up end ends ended and or but that which who it its their this these "
                          "those").split()
_WORD = rf"(?!(?:{'|'.join(_FUNCTION)})\b)[a-z]+"
_AUX = rf"(?:(?:{'|'.join(_AUX_WORDS)})\s+)*"
_NEGATION = re.compile(r"\b(not|never|cannot|no longer|fails?|failed)\b")


def _np(name: str) -> str:
    """A noun phrase of one to three content words, captured as ``name``."""
    return rf"\b(?P<{name}>{_WORD}(?:\s+{_WORD}){{0,2}})"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("NP_A", _np("a")).replace("NP_B", _np("b")).replace("AUX", _AUX))


# (kind, pattern): group ``a`` is the phrase the relation is about (the subject: the taller tower,
# the more numerous thing, the object that reaches), ``b``/``zone`` the other, in whichever order
# the sentence names them (passives, "fewer", "shorter" name the subject last).
_ZONE_NOUNS = r"(?:zone|area|region|goal|target|field|patch|spot|pad|destination)"
_TOWER_NOUNS = ("tower", "stack", "pile", "column", "heap")
_REACH_VERBS = (r"(?:reach(?:es|ed|ing)?|arriv(?:e|es|ed|ing)\s+(?:at|in|into|on)|get(?:s|ting)?\s+(?:to|into|in)|"
                r"got\s+(?:to|into|in)|enter(?:s|ed|ing)?|mak(?:e|es|ing)\s+it\s+(?:to|into|in)|made\s+it\s+(?:to|into|in)|"
                r"end(?:s|ed)?\s+up\s+(?:in|inside|at|on)|land(?:s|ed)?\s+(?:in|on)|mov(?:e|es|ed)\s+into|"
                r"com(?:e|es)\s+to\s+rest\s+(?:in|on)|finish(?:es|ed)?\s+(?:in|inside|at)|touch(?:es|ed)?|be\s+(?:in|inside))")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # taller: A tower ends up taller than B (or B shorter than A; A overtakes B; B is overtaken by A)
    ("taller", _rx(r"NP_A\s+AUX(?:(?:end|ends|ended)\s+up\s+|becomes?\s+|grows?\s+|gets?\s+|finish(?:es)?\s+|"
                   r"stands?\s+|be\s+|is\s+)?(?:taller|higher|bigger)\s+than\s+NP_B")),
    ("taller", _rx(r"NP_B\s+AUX(?:(?:end|ends|ended)\s+up\s+|becomes?\s+|stays?\s+|remains?\s+|be\s+|is\s+)?"
                   r"(?:shorter|lower|smaller)\s+than\s+NP_A")),
    ("taller", _rx(r"NP_A\s+AUX(?:outgrow|overtake|surpass|outstrip|top|exceed|outreach)(?:s|es|ed)?\s+NP_B")),
    ("taller", _rx(r"NP_A\s+AUX(?:rises?|towers?|grows?|climbs?)\s+(?:above|over|past|beyond)\s+NP_B")),
    ("taller", _rx(r"NP_B\s+AUX(?:outgrown|overtaken|surpassed|outstripped|topped|exceeded)\s+by\s+NP_A")),
    # more: more A than B (or fewer B than A; A outnumber B; B outnumbered by A; number of A exceeds ...)
    ("more", _rx(r"(?:number|count)\s+of\s+NP_A\s+AUX(?:exceeds?|surpass(?:es)?|is\s+(?:greater|larger|higher|bigger))"
                 r"(?:\s+than)?\s+(?:(?:number|count)\s+of\s+)?NP_B")),
    ("more", _rx(r"NP_A\s+AUX(?:are\s+|be\s+)?more\s+numerous\s+than\s+NP_B")),
    ("more", _rx(r"NP_B\s+AUX(?:are\s+|be\s+)?(?:less\s+numerous|fewer\s+in\s+number)\s+than\s+NP_A")),
    ("more", _rx(r"\bmore\s+NP_A\s+than\s+NP_B")),
    ("more", _rx(r"\b(?:fewer|less)\s+NP_B\s+than\s+NP_A")),
    ("more", _rx(r"NP_A\s+AUX(?:outnumber(?:s|ed)?)\s+NP_B")),
    ("more", _rx(r"NP_B\s+AUX(?:are\s+|be\s+|get\s+)?outnumbered\s+by\s+NP_A")),
    # reach: A reaches the B zone (or the B zone is reached by A)
    ("reach", _rx(rf"NP_A\s+AUX{_REACH_VERBS}\s+\b(?P<zone>(?:{_WORD}\s+){{0,2}}{_ZONE_NOUNS})\b")),
    ("reach", _rx(rf"\b(?P<zone>(?:{_WORD}\s+){{0,2}}{_ZONE_NOUNS})\s+AUX(?:reached|entered|touched)\s+by\s+NP_A")),
]


def normalise(hypothesis: str) -> str:
    """Lower case, contractions expanded, punctuation and articles dropped, single spaces."""
    t = hypothesis.lower().replace("\u2019", "'")
    for short, long in _CONTRACTIONS.items():
        t = t.replace(short, long)
    t = re.sub(r"[^a-z ]+", " ", t)
    t = re.sub(r"\b(the|a|an)\b", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _query(phrase: str) -> str:
    """The tools' query word of a phrase: its first word ("red" in "red star"; a shape name
    would make the tools drop the subject whenever its outline reads differently)."""
    return phrase.split()[0]


def _is_tower(phrase: str) -> bool:
    return phrase.split()[-1] in _TOWER_NOUNS or phrase.split()[-1] in ("one", "other")


def de_relation(hypothesis: str) -> DeRelation | None:
    """The checkable visual relation a hypothesis states, None when it states none we can measure."""
    text = normalise(hypothesis)
    for kind, rx in _PATTERNS:
        m = rx.search(text)
        if not m:
            continue
        a, b = m.group("a"), (m.group("zone") if kind == "reach" else m.group("b"))
        if kind == "taller" and not (_is_tower(a) or _is_tower(b)):
            continue  # "higher than" about something else (a ball above a box): not a tower race
        negated = bool(_NEGATION.search(text[:m.end()]))
        if kind == "more":
            return DeRelation("more", singular(a.split()[-1]), singular(b.split()[-1]), negated)
        if kind == "reach":
            zone = b.split()
            return DeRelation("reach", _query(a), zone[0] if len(zone) > 1 else zone[-1], negated)
        return DeRelation(kind, _query(a), _query(b), negated)
    return None
