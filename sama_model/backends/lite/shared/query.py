"""The words of a query that lite measurements can act on: colours, shapes, numbers and a few event kinds.

Parsing is deliberately shallow (colour words, shape words, number words, a few event verbs): the lite tools
answer what their measurements cover and say "unknown" otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

COLOR_WORDS: dict[str, str] = {
    "red": "red",
    "orange": "orange",
    "yellow": "yellow",
    "gold": "yellow",
    "green": "green",
    "lime": "green",
    "cyan": "cyan",
    "teal": "cyan",
    "turquoise": "cyan",
    "blue": "blue",
    "navy": "blue",
    "purple": "purple",
    "violet": "purple",
    "magenta": "pink",
    "pink": "pink",
    "brown": "brown",
    "white": "white",
    "grey": "grey",
    "gray": "grey",
    "black": "black",
}
SHAPE_WORDS: dict[str, str] = {
    "circle": "circle",
    "ball": "circle",
    "dot": "circle",
    "disc": "circle",
    "disk": "circle",
    "sphere": "circle",
    "round": "circle",
    "square": "square",
    "box": "square",
    "cube": "square",
    "rectangle": "rectangle",
    "bar": "rectangle",
    "triangle": "triangle",
    "star": "star",
    "ellipse": "ellipse",
    "oval": "ellipse",
    "pentagon": "pentagon",
    "hexagon": "hexagon",
    "cross": "cross",
    "plus": "cross",
    "ring": "ring",
    "donut": "ring",
    "doughnut": "ring",
    "annulus": "ring",
    "blob": "blob",
    "diamond": "square",
}
NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD = re.compile(r"[a-z]+")


def _singular(word: str) -> str:
    if word.endswith("ches") or word.endswith("xes") or word.endswith("ses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@dataclass(frozen=True)
class Query:
    """The words of a query that lite measurements can act on."""

    text: str
    words: tuple[str, ...]
    colors: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    kinds: frozenset[str] = field(default_factory=frozenset)

    def matches(self, color: str, shape: str) -> bool:
        """Whether an object of ``color``/``shape`` is among those the query names (all if none)."""
        return (not self.colors or color in self.colors) and (not self.shapes or shape in self.shapes)

    @property
    def target(self) -> str:
        """The queried object as words, e.g. "red circle" (empty when the query names none)."""
        return " ".join(list(self.colors[:1]) + list(self.shapes[:1]))


_KINDS: dict[str, tuple[str, ...]] = {
    "count": ("how many", "count", "number of", "total"),
    "color": ("what colour", "what color", "which colour", "which color", "colour of", "color of"),
    "camera": ("camera", "pan", "panning", "tilt", "zoom", "viewpoint", "shot"),
    "motion": (
        "moving",
        "move",
        "motion",
        "direction",
        "speed",
        "bounce",
        "spin",
        "rotate",
        "orbit",
        "zig",
        "trajectory",
        "path",
    ),
    "describe": ("describe", "what happens", "what is shown", "summar", "what do you see", "scene"),
    "style": ("style", "palette", "colourful", "colorful", "saturat", "bright", "dark", "cartoon", "texture", "look"),
    "appear": ("appear", "enter", "emerge", "show up", "arrive", "start", "begin"),
    "disappear": ("disappear", "leave", "exit", "vanish", "end"),
    "collide": ("collide", "collision", "hit", "touch", "bump", "crash", "meet"),
    "stop": ("stop", "halt", "rest", "still"),
    "change": ("change", "cut", "transition", "switch", "scene change"),
    "where": ("where", "position", "located", "left of", "right of", "above", "below"),
}


def parse_query(text: str) -> Query:
    """Colour, shape and number words plus the kinds of question (count, colour, camera, ...)."""
    low = (text or "").lower()
    words = tuple(_WORD.findall(low))
    colors, shapes, numbers = [], [], []
    for w in words:
        s = _singular(w)
        if w in COLOR_WORDS and COLOR_WORDS[w] not in colors:
            colors.append(COLOR_WORDS[w])
        if s in SHAPE_WORDS and SHAPE_WORDS[s] not in shapes:
            shapes.append(SHAPE_WORDS[s])
        if w in NUMBER_WORDS:
            numbers.append(NUMBER_WORDS[w])
    numbers += [int(n) for n in re.findall(r"\b\d+\b", low)]
    kinds = frozenset(k for k, keys in _KINDS.items() if any(key in low for key in keys))
    return Query(
        text=text or "", words=words, colors=tuple(colors), shapes=tuple(shapes), numbers=tuple(numbers), kinds=kinds
    )


#: nouns that name no kind of object: a count of "moving objects" or "things that move" is a count of whatever moves
GENERIC_NOUNS = frozenset({"object", "thing", "mover", "item", "entity", "anything", "something", "one", "region"})
#: words before a counted noun that name no kind (articles, quantifiers, motion and presence adjectives)
_LEADING = frozenset({"the", "a", "an", "all", "any", "of", "each", "every", "moving", "visible", "distinct", "different",
                      "separate", "individual", "total", "unique", "independently", "independent", "travelling",
                      "traveling", "many", "much"})
#: words that end a counted noun phrase (verbs, prepositions, relative pronouns, comparison words)
_PHRASE_END = frozenset({"are", "is", "was", "were", "do", "does", "did", "in", "on", "at", "across", "over", "within",
                         "that", "which", "who", "move", "moves", "moved", "moving", "travel", "travels", "there",
                         "than", "as", "appear", "appears", "shown", "seen", "present", "per", "from", "with", "to",
                         "and", "or", "can", "could", "you", "through", "around", "into"})
_COUNT_CUE = re.compile(r"\b(?:how many|number of|count of|count)\b")
_PHRASE_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")


def named_kind(q: Query) -> str | None:
    """The kind of object a query names beyond "moving objects" ("cut-out", "patch", "person", "car"), its
    head noun singular; None when it names none ("", "moving objects", "things that move", "How many objects
    are visible?") or names a colour or shape (those the segmentation tells apart, :func:`parse_query`).

    Why: a count of objects moving on their own counts whatever moves; asked for a kind of object, it cannot tell
    that kind from the scene's other movers, and its result says so (``target_separable``). The phrase read is
    the one after a count cue ("how many X", "number of X", "count the X") or, without one, the query's start."""
    if q.colors or q.shapes:
        return None
    low = q.text.lower()
    cue = _COUNT_CUE.search(low)
    phrase = re.split(r"[?.!,;:]", low[cue.end():] if cue else low)[0]
    kept: list[str] = []
    for w in _PHRASE_WORD.findall(phrase):
        if not kept and w in _LEADING:
            continue
        if w in _PHRASE_END or (kept and w.endswith("ing")):
            break
        kept.append(w)
    kept = [_singular(w) for w in kept]
    if not kept or all(w in GENERIC_NOUNS for w in kept):
        return None
    return " ".join(kept)
