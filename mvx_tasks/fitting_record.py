"""The fitting record: every seed and set read while fitting or choosing anything in the offline profile.

``fitting_record.yaml`` (next to this module, shipped in the wheel) lists, per use, the constant, rule or file, the
set (``real_composite``, ``mvx_synth_default``, ``mvx_synth_hard``, ``shape_clips``), the seeds and the commit. A
script that reports a held-out figure calls :func:`refuse_recorded` (seeds given on its command line) or
:func:`refuse_recorded_folders` (dataset folders, read from their generator manifests): a recorded seed is refused
with a message that says what it was used for and which seed is free. Why one file: a list kept beside one
generator (``FITTING_SEEDS``) missed most of the seeds that constants were chosen on, so a held-out claim could not
be checked.

    python -m mvx_tasks.fitting_record [SET [SEED ...]]
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

__all__ = [
    "ALLOW_HELP",
    "ALLOW_OPTION",
    "RECORD_FILE",
    "RecordedSeedError",
    "Use",
    "describe_folder",
    "folder_set",
    "guard_folders",
    "load",
    "next_free",
    "recorded_seeds",
    "refuse_recorded",
    "refuse_recorded_folders",
    "uses_of",
]

RECORD_FILE = Path(__file__).with_name("fitting_record.yaml")
HOW = ("fitted", "chosen", "checked", "read", "unknown")


class RecordedSeedError(ValueError):
    """A held-out figure was asked for on seeds the fitting record lists."""


@dataclass(frozen=True)
class Use:
    """One row of the record: ``what`` was ``how``-ed on ``seeds`` of ``set``."""

    what: str
    where: str
    how: str
    set: str
    seeds: frozenset[int]
    commit: str = ""

    def short(self) -> str:
        at = f" ({self.commit})" if self.commit else ""
        return f"{self.how}: {self.what}{at}"


def parse_seeds(items: list, where: str) -> frozenset[int]:
    """``[1, 3, "5-7"]`` -> {1, 3, 5, 6, 7}; anything else is an error naming the row."""
    out: set[int] = set()
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            out.add(item)
            continue
        a, sep, b = str(item).partition("-")
        if not (sep and a.strip().isdigit() and b.strip().isdigit() and int(a) <= int(b)):
            raise ValueError(f"{RECORD_FILE.name}: {where}: seed {item!r} is neither an integer nor a range 'a-b'")
        out.update(range(int(a), int(b) + 1))
    return frozenset(out)


@lru_cache(maxsize=4)
def load(path: str | None = None) -> tuple[dict[str, dict], tuple[Use, ...]]:
    """(sets, uses) of the record file (the shipped one by default); checked, so a bad row fails here."""
    file = Path(path) if path else RECORD_FILE
    data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    sets = dict(data.get("sets") or {})
    uses = []
    for i, row in enumerate(data.get("uses") or []):
        where = f"use {i + 1} ({str(row.get('what', ''))[:60]!r})"
        if row.get("set") not in sets:
            raise ValueError(f"{file.name}: {where}: set {row.get('set')!r} is not one of {sorted(sets)}")
        if row.get("how") not in HOW:
            raise ValueError(f"{file.name}: {where}: how {row.get('how')!r} is not one of {HOW}")
        uses.append(Use(str(row.get("what", "")), str(row.get("where", "")), row["how"], row["set"],
                        parse_seeds(list(row.get("seeds") or []), where), str(row.get("commit", "") or "")))
    return sets, tuple(uses)


def _check_set(name: str) -> None:
    sets, _ = load()
    if name not in sets:
        raise KeyError(f"the fitting record ({RECORD_FILE}) has no set {name!r}; it has {', '.join(sorted(sets))}")


def recorded_seeds(set_name: str) -> frozenset[int]:
    """Every seed of ``set_name`` that the record lists, however it was used."""
    _check_set(set_name)
    return frozenset().union(*(u.seeds for u in load()[1] if u.set == set_name))


def uses_of(set_name: str, seed: int) -> list[Use]:
    _check_set(set_name)
    return [u for u in load()[1] if u.set == set_name and int(seed) in u.seeds]


def next_free(set_name: str) -> int:
    """The first seed above every recorded one: where the next held-out figure starts."""
    return max(recorded_seeds(set_name), default=-1) + 1


def folder_set(folder: str | Path) -> tuple[str, int] | None:
    """(set name, seed) of a dataset folder, from its generator's manifest (the composite's ``real_composite.json``,
    MVX-Synth's ``synth.json``); None for a folder neither generator wrote."""
    folder = Path(folder)
    for manifest, name_of in (("real_composite.json", lambda m: m.get("footage", "real_composite")),
                              ("synth.json", lambda m: f"mvx_synth_{m.get('difficulty', 'default')}")):
        p = folder / manifest
        if p.is_file():
            try:
                meta = json.loads(p.read_text(encoding="utf-8"))
                return name_of(meta), int(meta["seed"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
    return None


def _explain(set_name: str, seeds: list[int], limit: int = 3) -> str:
    parts = []
    for s in seeds[:8]:
        uses = uses_of(set_name, s)
        shown = "; ".join(u.short() for u in uses[:limit]) + (f"; +{len(uses) - limit} more" if len(uses) > limit else "")
        parts.append(f"  {set_name} seed {s}: {shown}")
    if len(seeds) > 8:
        parts.append(f"  ... and {len(seeds) - 8} more seeds")
    return "\n".join(parts)


def refuse_recorded(set_name: str, seeds: list[int], what: str = "a held-out figure") -> None:
    """Raise :class:`RecordedSeedError` when any of ``seeds`` is recorded for ``set_name``, saying what each was used
    for and which seeds are free."""
    hit = sorted({int(s) for s in seeds} & recorded_seeds(set_name))
    if hit:
        raise RecordedSeedError(
            f"{what} cannot rest on seeds {', '.join(map(str, hit))} of {set_name}: the fitting record "
            f"({RECORD_FILE}) lists them as used while fitting or choosing the offline profile:\n"
            f"{_explain(set_name, hit)}\nUse seeds it does not list (any seed from {next_free(set_name)} on; "
            f"`python -m mvx_tasks.fitting_record {set_name}` lists the recorded ones), and add the seeds you read "
            "to that file in the commit that chooses a change on them.")


def describe_folder(folder: str | Path) -> str:
    """One line on a dataset folder's standing: held out, recorded (and how), or not from a known generator."""
    found = folder_set(folder)
    if found is None:
        return f"{folder}: no generator manifest (not a set the fitting record covers)"
    name, seed = found
    uses = uses_of(name, seed) if name in load()[0] else []
    if not uses:
        return f"{folder}: {name} seed {seed}, held out (not in the fitting record)"
    return f"{folder}: {name} seed {seed}, NOT held out ({'; '.join(sorted({u.how for u in uses}))})"


def refuse_recorded_folders(folders: list[str | Path], what: str = "a held-out figure") -> None:
    """:func:`refuse_recorded` for dataset folders (read from their manifests); a folder without a known manifest
    passes (its standing is not the record's to say)."""
    by_set: dict[str, list[int]] = {}
    for f in folders:
        found = folder_set(f)
        if found is not None and found[0] in load()[0]:
            by_set.setdefault(found[0], []).append(found[1])
    for name, seeds in by_set.items():
        refuse_recorded(name, seeds, what)


#: the option of every script that refuses recorded seeds (:func:`guard_folders`), and its help
ALLOW_OPTION = "--allow-recorded"
ALLOW_HELP = ("also read sets whose seeds the fitting record lists (mvx_tasks/fitting_record.yaml): to fit or choose "
              "on them, or to replay a recorded figure; the output then says those figures are not held out")


def guard_folders(folders: list[str | Path], allow_recorded: bool, what: str) -> list[str]:
    """Each folder's standing (:func:`describe_folder`); raises :class:`RecordedSeedError` for a recorded seed unless
    ``allow_recorded`` (a fitting or replay run, :data:`ALLOW_OPTION`)."""
    if not allow_recorded:
        try:
            refuse_recorded_folders(folders, what)
        except RecordedSeedError as exc:
            raise RecordedSeedError(f"{exc}\nTo fit, choose or replay on them, pass {ALLOW_OPTION}.") from None
    return [describe_folder(f) for f in folders]


def _ranges(seeds: frozenset[int]) -> str:
    out, run = [], []
    for s in sorted(seeds):
        if run and s == run[-1] + 1:
            run.append(s)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [s]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sets, uses = load()
    if not args:
        for name, meta in sets.items():
            seeds = recorded_seeds(name)
            print(f"{name}: {meta.get('what', '')}\n  recorded ({len(seeds)}): {_ranges(seeds)}\n"
                  f"  next free seed: {next_free(name)}")
        return 0
    name = args[0]
    try:
        _check_set(name)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    if len(args) == 1:
        for u in (u for u in uses if u.set == name):
            print(f"{_ranges(u.seeds)}: {u.short()} [{u.where}]")
        return 0
    for s in args[1:]:
        found = uses_of(name, int(s))
        print(f"{name} seed {s}: " + ("held out (not recorded)" if not found else ""))
        for u in found:
            print(f"  {u.short()} [{u.where}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
