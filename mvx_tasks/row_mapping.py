"""Reading one row of a published benchmark file: its options (lettered, plain, JSON, one per line, or the
joined string that one CVBench row holds), its answer as a letter, its task by name or code, and the
error that lists the columns found and expected. The per-benchmark mappings in :mod:`.benchmarks` and
the MVX hub mapping in :mod:`.data_hub` use these; a repair is returned with a note, never made silently."""
from __future__ import annotations

import json
import math
import re
import string
from typing import Any, Iterable

from .schema_error import SchemaError

Row = dict[str, Any]

_LETTERED = re.compile(r"^\s*\(?([A-Z])\s*[\.\):]\s*(.*?)\s*$", re.S)
#: where one lettered option starts inside a string that holds several: "A. x, B. y, C. z"
_JOINED_MARK = re.compile(r"(?:^|(?<=[,;\n])|(?<=\s))\(?([A-Z])[\.\)]\s+")


def missing_value(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def schema_error(bm_name: str, where: str, row: Row, problem: str, expected: str) -> SchemaError:
    found = sorted(str(k) for k in row if not str(k).startswith("_"))
    return SchemaError(f"cannot map {where} onto the {bm_name} schema: {problem}. Columns found: {found}. "
                       f"Expected: {expected}", sample_id=str(row.get("id")) if row.get("id") is not None else None,
                       fix="convert the data to data.jsonl in the canonical layout, or fix the column mapping "
                           "in mvx_tasks/benchmarks.py (one function per benchmark)")


def split_joined_options(text: str) -> list[str] | None:
    """``"A. x, B. y, C. z"`` -> ``["A. x", "B. y", "C. z"]`` when the string holds consecutive lettered
    options from A, each letter once; None when that reading is not the only one (then nothing is split)."""
    marks = list(_JOINED_MARK.finditer(text))
    letters = [m.group(1) for m in marks]
    if len(marks) < 2 or marks[0].start() != len(text) - len(text.lstrip()) or \
            letters != list(string.ascii_uppercase[:len(letters)]):
        return None
    ends = [m.start() for m in marks[1:]] + [len(text)]
    parts = [text[m.start():end].strip().rstrip(",;").strip() for m, end in zip(marks, ends)]
    return parts if all(_LETTERED.match(p) and _LETTERED.match(p).group(2) for p in parts) else None


def option_items(value: Any) -> list[str]:
    """A row's options as a list of strings: a list, an array, a JSON list string, or one option per line."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in "[{":
            value = json.loads(text)
        else:
            return [ln for ln in text.splitlines() if ln.strip()]
    if isinstance(value, dict):
        return [f"{str(k).strip('(). ').upper()}. {v}" for k, v in value.items()]
    return [str(x).strip() for x in as_list(value)]


def options_from_list(items: Any) -> dict[str, str]:
    """``["A. x", "B. y"]`` or ``["(A) x", ...]`` keep their letters; plain items get A, B, ... in order."""
    if isinstance(items, dict):
        return {str(k).strip("(). ").upper(): str(v).strip() for k, v in items.items()}
    items = option_items(items)
    lettered = [_LETTERED.match(x) for x in items]
    if items and all(lettered) and [m.group(1) for m in lettered] == list(string.ascii_uppercase[:len(items)]):
        return {m.group(1): m.group(2) for m in lettered}
    return {string.ascii_uppercase[i]: x for i, x in enumerate(items)}


def repaired_options(value: Any) -> tuple[dict[str, str], list[str]]:
    """The options of a row, and what was repaired to read them (the authors' joined-options row)."""
    items = option_items(value)
    if len(items) == 1 and (parts := split_joined_options(items[0])):
        return options_from_list(parts), [f"options: one string held {len(parts)} lettered options "
                                          f"({items[0][:60]}...); split at the letters"]
    return options_from_list(items), []


def answer_letter(answer: Any, options: dict[str, str]) -> str | None:
    """The answer as an option letter: a letter, ``(B)``, ``B.``, or an option's text (``Yes``)."""
    text = str(answer).strip()
    key = text.strip("(). ").upper()
    if key in options:
        return key
    norm = text.strip(". ").lower()
    hits = [k for k, v in options.items() if v.strip(". ").lower() == norm]
    return hits[0] if len(hits) == 1 else None


def code_by_name(names: dict[str, str], value: Any) -> str | None:
    norm = re.sub(r"[^a-z0-9]", "", str(value).lower())
    return names.get(norm)


def name_index(tasks: Iterable[Any], extra: dict[str, str] | None = None) -> dict[str, str]:
    """Normalised task name, code and short code (``OR`` of ``MVU_OR``) -> code, plus extra aliases."""
    out = {}
    for t in tasks:
        for alias in (t.name, t.code, t.code.split("_", 1)[-1]):
            out[re.sub(r"[^a-z0-9]", "", alias.lower())] = t.code
    for alias, code in (extra or {}).items():
        out[re.sub(r"[^a-z0-9]", "", alias.lower())] = code
    return out


def as_list(value: Any) -> list:
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    return list(value)


def checked_options(bm: str, where: str, row: Row, value: Any, expected: str) -> tuple[dict[str, str], list[str]]:
    try:
        options, repairs = repaired_options(value)
    except (TypeError, ValueError) as exc:
        raise schema_error(bm, where, row, f"options {value!r} cannot be read ({exc})", expected) from None
    if len(options) < 2:
        raise schema_error(bm, where, row, f"options {value!r} hold fewer than two choices and cannot be split "
                           f"unambiguously", expected)
    return options, repairs


