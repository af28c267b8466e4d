"""The one multiple-choice answer parser: model text -> option letter, or None.

Real outputs are messy: "B", "(B)", "**B**", "Answer: B", ``<answer>B</answer>``, ``\\boxed{B}``,
"the answer is b", an option's text instead of its letter, or a long chain of thought that ends
with a verdict. The parser works in layers, from the most explicit commitment to the least, and
returns None when the text names no option or commits to several.
"""
from __future__ import annotations

import re
import unicodedata

__all__ = ["extract_choice"]

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_MARKUP = re.compile(r"[*_`#]+")


def _letters_class(letters: list[str]) -> str:
    return "".join(re.escape(x) for x in letters)


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def _strip_reasoning(text: str) -> str:
    """Drop closed <think> blocks; if a think block is never closed keep what follows its start."""
    if re.search(r"</think>", text, re.I):
        return _THINK.sub(" ", text).split("</think>")[-1] if "<think>" not in text.lower() else _THINK.sub(" ", text)
    return text


def _explicit(text: str, cls: str) -> list[str]:
    """Letters from explicit answer statements, in order of appearance."""
    L = rf"[{cls}]"
    patterns = [
        rf"<answer>\s*\(?({L})\)?[^<]{{0,80}}</answer>",
        rf"\\boxed\{{\s*(?:\\text\{{)?\s*\(?({L})\)?",
        rf"\b(?:final\s+answer|answer|correct\s+(?:answer|option|choice)|best\s+(?:answer|option|choice)"
        rf"|my\s+(?:answer|choice)|(?:i\s+)?(?:choose|select|pick))\s*(?:is|would\s+be|will\s+be|:|=|-)?\s*"
        rf"(?:option|choice|candidate|video|letter)?\s*[:\-]?\s*[\(\[]?\s*({L})\s*[\)\]]?(?![\w'])",
        rf"\b(?:option|choice)\s*[\(\[]?({L})[\)\]]?\s+is\s+(?:the\s+)?(?:correct|right|best)\b",
    ]
    hits: list[tuple[int, str]] = []
    for pat in patterns:
        for m in re.finditer(pat, text, re.I):
            hits.append((m.start(1), m.group(1)))
    hits.sort()
    return [h[1] for h in hits]


def _standalone(text: str, cls: str) -> set[str]:
    """Letters written as a choice: "B", "(B)", "B.", "B)", "[B]" - but not the article "A"."""
    L = rf"[{cls}]"
    found: set[str] = set()
    for m in re.finditer(rf"(?<![\w'])[\(\[]\s*({L})\s*[\)\]](?!\w)", text):  # (B) [B]
        found.add(m.group(1))
    for m in re.finditer(rf"(?<![\w'\(\[])({L})\s*[\.\):](?=\s|$)", text):  # B. B) B:
        found.add(m.group(1))
    for m in re.finditer(rf"(?<![\w'])({L})(?![\w'])", text):  # bare capital letter
        letter = m.group(1)
        nxt = text[m.end():m.end() + 1]
        # "A man walks" uses the article; a bare letter followed by a lower-case word is not a choice.
        after = text[m.end():].lstrip()
        if letter in "AI" and after[:1].islower() and not re.match(r"(?:or|and|nor|vs)\b", after):
            continue
        if nxt == "'":
            continue
        found.add(letter)
    return found


def _by_option_text(text: str, options: dict[str, str]) -> str | None:
    """The single option whose text the output states (longest match wins over its substrings)."""
    out = _norm(text)
    if not out:
        return None
    hits = []
    for letter, opt in options.items():
        o = _norm(opt)
        if o and re.search(rf"(?<!\w){re.escape(o)}(?!\w)", out):
            hits.append((letter, o))
    if not hits:
        return None
    # drop options whose text is contained in another hit's text ("Video A" vs "Video A and B")
    hits = [h for h in hits if not any(h is not g and h[1] in g[1] and h[1] != g[1] for g in hits)]
    letters = {h[0] for h in hits}
    return letters.pop() if len(letters) == 1 else None


def extract_choice(text: str | None, options: dict[str, str]) -> str | None:
    """Return the option letter that ``text`` commits to, or None.

    ``options`` maps letters ("A", "B", ...) to option texts. None is returned when the text is
    empty, names no option, or names several options without a final commitment.
    """
    if not text or not options:
        return None
    letters = [k.upper() for k in options]
    opts = {k.upper(): v for k, v in options.items()}
    cls = _letters_class(letters)
    raw = _strip_reasoning(str(text))
    plain = _MARKUP.sub("", raw).strip()
    if not plain:
        return None

    # 1. The whole output is a letter: "B", "(b)", "B.", "b)" ...
    m = re.fullmatch(rf"[\(\[]?\s*([{cls}{cls.lower()}])\s*[\)\]]?[\.\:]?", plain)
    if m:
        return m.group(1).upper()

    # 2. Explicit statements; the last one wins (a long reasoning ends with its verdict).
    explicit = _explicit(plain, cls + cls.lower())
    if explicit:
        return explicit[-1].upper()

    # 3. The output starts with a choice: "B. The red ball", "(C) because ...", "A: two cups".
    m = re.match(rf"[\(\[]?\s*([{cls}])\s*(?:[\)\]\.:]|$)(?!\w)", plain)
    if m:
        return m.group(1)
    m = re.match(rf"[\(\[]\s*([{cls.lower()}])\s*[\)\]]|([{cls.lower()}])[\.\)](?:\s|$)", plain)
    if m:
        return (m.group(1) or m.group(2)).upper()

    # 4. An option's text instead of its letter.
    by_text = _by_option_text(plain, opts)

    # 5. Exactly one letter written as a choice anywhere.
    standalone = _standalone(plain, cls)
    if len(standalone) == 1:
        letter = standalone.pop()
        if by_text and by_text != letter:
            return None
        return letter
    if len(standalone) > 1:
        # several letters: trust a closing line that names exactly one ("... So, C.")
        last_line = plain.strip().splitlines()[-1]
        tail = _standalone(last_line, cls)
        if len(tail) == 1 and len(plain.strip().splitlines()) > 1:
            return tail.pop()
        return by_text
    return by_text
