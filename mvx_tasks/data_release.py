"""A published release read whole, as its authors ship it: exactly the files it names
(:class:`~.benchmarks.Release`), their rows (JSON, JSONL, parquet, CSV/TSV, a ``datasets`` save_to_disk
folder), each row's videos found where the authors put them, and a :class:`LoadReport` that counts
every repair and skip by row id. One row that cannot be mapped is skipped and reported (or, strict,
an error), never a silent drop and never the whole benchmark's failure; a question id seen twice is
an error that names both places. :mod:`.data_peers` (CVBench, MVU-Eval, CrossVid) and
:mod:`.data_hub` (MVX-Bench's hub copy) load through :func:`load_release`.
"""
from __future__ import annotations

import json
import logging
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Iterator, Sequence

log = logging.getLogger(__name__)

#: set to 1 (or pass ``strict=True``) to make any row that cannot be mapped an error
STRICT_ENV = "MVX_DATA_STRICT"


def strict_default() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass
class RowNote:
    """What happened to one row: repaired, skipped, or its video not found unambiguously."""

    id: str | None
    where: str
    what: str
    task: str | None = None

    def line(self) -> str:
        return f"{self.id if self.id is not None else '?'} ({self.where}): {self.what}"


@dataclass
class LoadReport:
    """What one load read and what became of every row (shown in the run log, ``mvx-bench verify`` and
    the results file's ``mvx_data_notes``)."""

    benchmark: str
    root: str
    release: str = ""
    files: list[str] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)
    rows: int = 0
    loaded: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    repairs: list[RowNote] = field(default_factory=list)
    skips: list[RowNote] = field(default_factory=list)
    videos: list[RowNote] = field(default_factory=list)  # a video name that matches several files
    missing_videos: int = 0
    count_warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        files = ", ".join(self.files) or "(none)"
        return (f"{self.benchmark} at {self.root}: {self.rows} rows from {files} -> {self.loaded} questions; "
                f"repaired {len(self.repairs)}, skipped {len(self.skips)}")

    def lines(self, counts: bool = True) -> list[str]:
        out = [self.summary()]
        if self.release:
            out.append(f"read as: {self.release}")
        out += [f"not read: {f}" for f in self.not_read[:20]]
        if len(self.not_read) > 20:
            out.append(f"not read: ... and {len(self.not_read) - 20} more table files")
        out += [f"repaired {n.line()}" for n in self.repairs]
        out += [f"skipped {n.line()}" for n in self.skips]
        out += [f"video {n.line()}" for n in self.videos]
        if self.missing_videos:
            out.append(f"{self.missing_videos} video reference(s) name no file under {self.root}")
        out += self.count_warnings if counts else []
        return out

    def task_notes(self, task: str) -> str:
        """One task's repairs and skips by row id (skips whose task is unknown are listed under every task)."""
        rep = [n for n in self.repairs if n.task == task]
        skip = [n for n in self.skips if n.task in (task, None)]
        parts = [f"repaired {len(rep)}" + (": " + "; ".join(f"{n.id} ({n.what})" for n in rep) if rep else ""),
                 f"skipped {len(skip)}" + (": " + "; ".join(f"{n.id} ({n.what})" for n in skip) if skip else "")]
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the last load of each dataset folder (resolved path), for the harness's ``mvx_data_notes`` metric
REPORTS: dict[str, LoadReport] = {}


def report_for(root: str | Path) -> LoadReport | None:
    return REPORTS.get(str(Path(root).resolve()))


# ----------------------------------------------------------------------------- which files

def _matches(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.glob(pattern) if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


#: the metadata files of a ``datasets`` save_to_disk folder: never question rows (only an arrow release names them)
SAVE_TO_DISK_FILES = ("dataset_dict.json", "dataset_info.json", "state.json")


def release_files(root: Path, releases: Sequence[Any], name: str) -> tuple[Any, list[Path], list[Path]]:
    """The first release whose files are present, those files, and the other releases' files (not read)."""
    found = [(rel, [f for pat in rel.patterns for f in _matches(root, pat)
                    if rel.arrow or f.name not in SAVE_TO_DISK_FILES]) for rel in releases]
    chosen = next(((rel, files) for rel, files in found if files), None)
    if chosen is None:
        expected = "; ".join(f"{', '.join(r.patterns)} ({r.what})" for r in releases)
        hint = ""
        stray = [p for p in SAVE_TO_DISK_FILES if list(root.rglob(p))]
        if stray and not any(r.arrow for r in releases):
            hint = (f" Found a `datasets` save_to_disk folder ({', '.join(stray)}): {name} is not published in that "
                    f"form; write its rows out with datasets.load_from_disk(...).to_json(...) under a name above.")
        raise _source_error(f"no {name} annotation file under {root}. Expected one of: {expected}.{hint}")
    rel, files = chosen
    files = list(dict.fromkeys(files))
    if rel.single and len(files) > 1:
        raise _source_error(f"{name} at {root}: {len(files)} files match {', '.join(rel.patterns)} "
                            f"({', '.join(str(f.relative_to(root)) for f in files)}), but the release is one "
                            f"annotation file ({rel.what}). Fix: keep the authors' file there and move the others out")
    others = [f for r, fs in found if r is not rel for f in fs if f not in files]
    tables = (".json", ".jsonl", ".parquet", ".csv", ".tsv", ".arrow")
    others += [p for pat in ("*", "*/*") for p in _matches(root, pat)
               if p.suffix.lower() in tables and p not in files and p not in others
               and not (rel.arrow and files and files[0].parent in p.parents)]
    return rel, files, others


def _source_error(msg: str) -> Exception:
    from .data import DataSourceError

    return DataSourceError(msg)


# ----------------------------------------------------------------------------- rows

def read_rows(files: Iterable[Path], *, arrow: bool = False) -> Iterator[tuple[str, dict]]:
    """Rows of jsonl / json (a list, ``{"data": [...]}`` or ``{"0": {...}}``) / parquet / csv / tsv files,
    or of the save_to_disk folders that hold the named ``dataset_dict.json`` / ``state.json``. Each row
    carries ``_file``, its file's stem (CrossVid's task is its file name)."""
    for f in files:
        if arrow:
            yield from _arrow_rows(f.parent)
            continue
        suffix = f.suffix.lower()
        tag = {"_file": f.stem}
        if suffix == ".jsonl":
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    try:
                        yield f"{f}:{i}", {**tag, **json.loads(line)}
                    except json.JSONDecodeError as exc:  # one broken line is one skipped row
                        yield f"{f}:{i}", {**tag, UNREADABLE: f"not valid JSON ({exc.msg} at column {exc.colno})"}
        elif suffix == ".json":
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise _source_error(f"{f} is not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}). "
                                    f"Fix: restore the file as its authors publish it") from None
            if isinstance(data, dict) and isinstance(data.get("data", data.get("questions")), list):
                data = data.get("data", data.get("questions"))
            if isinstance(data, dict):  # {"0": {...}, "1": {...}}: the key is the question index
                for k, r in data.items():
                    if isinstance(r, dict):
                        yield f"{f}[{k}]", {**tag, "_key": k, **r}
            elif isinstance(data, list):
                for i, r in enumerate(data):
                    if isinstance(r, dict):
                        yield f"{f}[{i}]", {**tag, **r}
        else:
            import pandas as pd

            df = (pd.read_parquet(f) if suffix == ".parquet" else
                  pd.read_csv(f, sep="\t" if suffix == ".tsv" else ","))
            for i, r in enumerate(df.to_dict(orient="records")):
                yield f"{f}[{i}]", {**tag, **r}


def _arrow_rows(folder: Path) -> Iterator[tuple[str, dict]]:
    try:
        import datasets
    except ImportError:
        raise _source_error(f"{folder} is a `datasets` save_to_disk folder; reading it needs the `datasets` package "
                            f"(pip install datasets), or write its rows to JSON first") from None
    loaded = datasets.load_from_disk(str(folder))
    splits = loaded.items() if isinstance(loaded, datasets.DatasetDict) else [("", loaded)]
    for split, ds in splits:
        for i, r in enumerate(ds):
            yield f"{folder}[{split}][{i}]" if split else f"{folder}[{i}]", {"_file": split or folder.name, **r}


#: the key a row that could not be parsed at all carries (its reason), so the load skips and reports it
UNREADABLE = "_unreadable"


def row_id(row: dict) -> str | None:
    for k in ("id", "_key", "QA_index", "index", "qid", "question_id"):
        if row.get(k) is not None and str(row.get(k)).strip() not in ("", "nan"):
            return str(row[k])
    return None


# ----------------------------------------------------------------------------- videos

class VideoFinder:
    """A row's video path -> the file under the dataset folder: where the release says, else the one file
    whose path ends with the whole written path, else with ``<group>/<file>``, else with the bare file
    name; a name that matches several files is reported, never picked silently."""

    def __init__(self, root: Path, dirs: Sequence[str] = ("",)):
        self.root = root
        self.dirs = [d.strip("/") for d in dirs] or [""]
        self._index: list[str] | None = None

    def _all(self) -> list[str]:
        if self._index is None:
            from .schema import VIDEO_EXTENSIONS

            self._index = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                                 if p.suffix.lower() in VIDEO_EXTENSIONS and p.is_file())
        return self._index

    def find(self, written: str) -> tuple[str, str | None]:
        """(path relative to the root, problem or None)."""
        path = written.strip().replace("\\", "/")
        if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:
            return path, None  # the schema check names the problem
        for d in self.dirs:
            rel = f"{d}/{path}" if d else path
            if (self.root / rel).is_file():
                return rel, None
        parts = PurePosixPath(path).parts
        tails = [("/".join(parts), False)] if len(parts) > 1 else []  # the whole written path
        tails += [("/".join(parts[-2:]), False)] if len(parts) > 2 else []  # <group>/<file>
        tails.append((parts[-1], True))  # the bare file name
        for tail, bare in tails:
            hits = [p for p in self._all() if p == tail or p.endswith("/" + tail)]
            if len(hits) == 1:
                return hits[0], None
            if len(hits) > 1 and not bare:
                return path, f"video {written!r} matches {len(hits)} files ({', '.join(hits[:4])}); kept as written"
            if len(hits) > 1:
                return self._expected(path), (f"video {written!r} is not at {self._expected(path)}, and its file "
                                              f"name matches {len(hits)} files in different folders "
                                              f"({', '.join(hits[:4])}); not picked by name. Fix: put it at "
                                              f"{self._expected(path)}")
        return self._expected(path), "missing"

    def _expected(self, path: str) -> str:
        return f"{self.dirs[0]}/{path}" if self.dirs[0] else path


# ----------------------------------------------------------------------------- the load

def load_release(name: str, root: Path, releases: Sequence[Any], map_row: Callable[[dict, str], dict], *,
                 tasks: Sequence[Any] = (), strict: bool | None = None) -> tuple[list, LoadReport]:
    """Every question of the release under ``root``: rows mapped by ``map_row``, videos found, repairs and
    skips reported by row id, duplicate ids refused, per-task counts checked against ``tasks``' published
    counts. ``strict`` (default: ``$MVX_DATA_STRICT``) turns a skip into an error."""
    from .schema import SchemaError, validate_sample

    strict = strict_default() if strict is None else strict
    root = Path(root)
    rel, files, others = release_files(root, releases, name)
    report = LoadReport(benchmark=name, root=str(root))
    report.release = rel.what
    report.files = [f.relative_to(root).as_posix() for f in files]
    report.not_read = [f.relative_to(root).as_posix() for f in others]
    finder = VideoFinder(root, rel.videos)
    samples, seen = [], {}
    for where, row in read_rows(files, arrow=rel.arrow):
        report.rows += 1
        rid = row_id(row)
        try:
            if UNREADABLE in row:
                raise SchemaError(row[UNREADABLE], where=where)
            raw = map_row(row, where)
            for v in raw["videos"]:
                v["path"], problem = finder.find(str(v["path"]))
                if problem == "missing":
                    report.missing_videos += 1
                elif problem:
                    report.videos.append(RowNote(rid, where, problem, raw.get("task")))
            sample = validate_sample(raw, where=where)
        except (SchemaError, TypeError, ValueError, KeyError, AttributeError) as exc:  # this row, not the release
            problem = exc.problem if isinstance(exc, SchemaError) else f"{type(exc).__name__}: {exc}"
            note = RowNote(rid, where, problem, _row_task(row, tasks))
            if strict:
                raise _source_error(f"{name} (strict): row {note.line()}. Fix: correct the row, or leave "
                                    f"{STRICT_ENV} unset to skip it and report it") from None
            report.skips.append(note)
            continue
        if sample.id in seen:
            raise _source_error(f"{name}: question id {sample.id!r} appears twice: {seen[sample.id]} and {where}. "
                                f"Fix: each question once (a second copy of the release beside the first is "
                                f"read only if the record names it)")
        seen[sample.id] = where
        report.repairs += [RowNote(sample.id, where, r, sample.task) for r in sample.meta.get("repairs", [])]
        samples.append(sample)
    report.loaded = len(samples)
    report.counts = dict(Counter(s.task for s in samples))
    report.count_warnings = count_warnings(name, tasks, report.counts, report.files)
    REPORTS[str(root.resolve())] = report
    log.info("%s", report.summary())
    for what, notes in (("repaired", report.repairs), ("skipped", report.skips), ("video", report.videos)):
        for n in notes:
            log.warning("%s: %s %s", name, what, n.line())
    for line in report.count_warnings:
        log.warning("%s", line)
    return samples, report


def load_canonical(name: str, root: Path, tasks: Sequence[Any] = ()) -> tuple[list, LoadReport]:
    """A folder in the canonical layout (``data.jsonl``): every line validated, counts checked, reported."""
    from .data import DATA_FILE, load_local

    samples = load_local(root)
    counts = dict(Counter(s.task for s in samples))
    report = LoadReport(benchmark=name, root=str(root), release="the canonical layout", files=[DATA_FILE],
                        rows=len(samples), loaded=len(samples), counts=counts,
                        count_warnings=count_warnings(name, tasks, counts, [DATA_FILE]))
    REPORTS[str(Path(root).resolve())] = report
    for line in report.count_warnings:
        log.warning("%s: %s", name, line)
    return samples, report


def _row_task(row: dict, tasks: Sequence[Any]) -> str | None:
    """The task a row that could not be mapped belongs to, where its task column names one."""
    from .registry import UnknownTaskError, get_task
    from .row_mapping import code_by_name, name_index

    names = name_index(tasks)
    for key in ("task", "task_type", "category", "_file"):
        value = row.get(key)
        if value is None:
            continue
        code = code_by_name(names, value)
        if code:
            return code
        try:
            return get_task(str(value)).code
        except UnknownTaskError:
            continue
    return None


def count_warnings(name: str, tasks: Sequence[Any], counts: dict[str, int], files: Sequence[str]) -> list[str]:
    """A warning per task whose question count differs from the published one (naming expected, found, file)."""
    where = ", ".join(files) or "(no file)"
    return [f"{name} task {t.code} ({t.name}): expected {t.n_questions} questions (published), found "
            f"{counts.get(t.code, 0)} in {where}" for t in tasks if t.n_questions and counts.get(t.code, 0) != t.n_questions]
