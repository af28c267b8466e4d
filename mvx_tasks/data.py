"""Loading MVX data: a local canonical folder, or the hub dataset, into validated Samples.

Sources, in the order the harness tasks resolve them (:func:`resolve_bench_root`):

1. ``MVX_BENCH_DATA=<folder>``: a local folder in the canonical layout (``data.jsonl`` + videos).
2. The hub dataset ``MVX-bench/MVX-Bench``, snapshot-downloaded the way lmms-eval caches video
   datasets (``$HF_HOME/<cache_dir>``, default ``mvx_bench``), so a pre-filled cache works offline.
   Its column schema is not public: :func:`map_hub_row` maps the likely column names onto the
   canonical schema and fails with the columns it found and the ones it expected.

Every video path stays inside its dataset root (checked after resolving symlinks).
"""
from __future__ import annotations

import json
import logging
import os
import string
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .registry import all_tasks, get_task, UnknownTaskError
from .schema import SchemaError, Sample, Video, read_jsonl, validate_sample

log = logging.getLogger(__name__)

HUB_REPO = "MVX-bench/MVX-Bench"
HUB_CACHE_DIR = "mvx_bench"
DATA_FILE = "data.jsonl"


class DataSourceError(RuntimeError):
    """No usable dataset: says where it looked and how to provide one."""


# ----------------------------------------------------------------------------- local folders

def resolve_in_root(root: str | Path, rel: str, *, sample_id: str | None = None, what: str = "path") -> Path:
    """The absolute path of ``rel`` inside ``root``; refuses anything that escapes it (symlinks too)."""
    root_r = Path(root).resolve()
    p = (root_r / rel).resolve()
    if p != root_r and root_r not in p.parents:
        raise SchemaError(f"{what} {rel!r} resolves to {p}, outside the dataset folder {root_r}",
                          sample_id=sample_id, fix="keep every file inside the dataset folder")
    return p


def load_local(root: str | Path) -> list[Sample]:
    """Read and validate ``<root>/data.jsonl``; the first invalid line raises :class:`SchemaError`."""
    root = Path(root)
    data = root / DATA_FILE
    if not data.is_file():
        raise DataSourceError(f"{data} does not exist: a dataset folder must hold {DATA_FILE} and its videos "
                              f"(generate an offline one with `mvx-bench synth --out {root}`)")
    samples = read_jsonl(data)
    for s in samples:
        for v in s.videos:
            video = resolve_in_root(root, v.path, sample_id=s.id, what=f"video {v.label!r}")
            if v.subtitle:
                sub = resolve_in_root(root, v.subtitle, sample_id=s.id, what=f"subtitle of {v.label!r}")
                ensure_sidecar(video, sub, s.id)
    return samples


def ensure_sidecar(video: Path, subtitle: Path, sample_id: str) -> None:
    """Keep a question's subtitle beside its video as ``<video stem><ext>`` (the player convention
    through which SAMA, like any model, finds subtitles from the video path alone); copy it there
    when the dataset stores it elsewhere, and say so when the folder is read-only."""
    side = video.with_suffix(subtitle.suffix.lower() if subtitle.suffix.lower() in (".srt", ".vtt") else ".srt")
    if side == subtitle or side.exists() or not subtitle.is_file():
        return
    try:
        import shutil

        shutil.copyfile(subtitle, side)
    except OSError as exc:
        log.warning("sample %s: SAMA reads subtitles from %s, but %s cannot be copied there (%s); copy it by "
                    "hand to give SAMA's subtitle tool this video's subtitles", sample_id, side, subtitle, exc)


def sample_to_doc(sample: Sample, root: str | Path) -> dict[str, str]:
    """A flat, Arrow-friendly harness doc: nested fields as JSON strings, paths absolute.

    ``answer`` and ``meta`` travel with the doc for scoring and analysis only; prompts and
    models read ``id, task, question, options, videos``.
    """
    root_r = Path(root).resolve()
    videos = [{"label": v.label, "path": str(resolve_in_root(root_r, v.path, sample_id=sample.id)),
               "subtitle": str(resolve_in_root(root_r, v.subtitle, sample_id=sample.id)) if v.subtitle else None}
              for v in sample.videos]
    return {"id": sample.id, "task": sample.task, "question": sample.question,
            "options": json.dumps(sample.options, ensure_ascii=False), "answer": sample.answer,
            "videos": json.dumps(videos, ensure_ascii=False), "root": str(root_r),
            "meta": json.dumps(sample.meta, ensure_ascii=False, default=str)}


def doc_to_sample(doc: dict[str, Any]) -> Sample:
    """Inverse of :func:`sample_to_doc` (paths stay absolute)."""
    videos = json.loads(doc["videos"]) if isinstance(doc["videos"], str) else doc["videos"]
    options = json.loads(doc["options"]) if isinstance(doc["options"], str) else doc["options"]
    meta = doc.get("meta") or "{}"
    return Sample(id=str(doc["id"]), task=doc["task"], question=doc["question"], options=dict(options),
                  answer=doc.get("answer") or "", meta=json.loads(meta) if isinstance(meta, str) else dict(meta),
                  videos=tuple(Video(v["label"], v["path"], v.get("subtitle")) for v in videos))


# ----------------------------------------------------------------------------- hub dataset

_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "question_id", "uid", "sample_id", "index", "idx"),
    "task": ("task", "task_code", "task_type", "task_name", "category", "subtask", "type", "dimension"),
    "question": ("question", "query", "prompt", "instruction", "text"),
    "options": ("options", "choices", "candidates", "option", "answer_choices", "candidate_answers"),
    "answer": ("answer", "gt", "ground_truth", "correct_answer", "label", "gt_answer", "answer_letter",
               "answer_idx", "answer_index"),
    "videos": ("videos", "video_paths", "video_path", "video", "video_list", "video_files", "clips",
               "video_names"),
    "labels": ("video_labels", "labels_of_videos", "video_names_display"),
}


def _pick(row: dict, key: str) -> tuple[str | None, Any]:
    lower = {str(k).lower(): k for k in row}
    for alias in _ALIASES[key]:
        if alias in lower and row[lower[alias]] not in (None, "", []):
            return lower[alias], row[lower[alias]]
    return None, None


def _task_code(value: Any) -> str:
    text = str(value).strip()
    try:
        return get_task(text).code
    except UnknownTaskError:
        norm = text.lower().replace("_", " ").replace("-", " ")
        for t in all_tasks():
            if norm in (t.name.lower(), t.name.lower().replace("-", " ")) or norm.replace(" ", "") == t.name.lower().replace(" ", "").replace("-", ""):
                return t.code
        raise


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _default_labels(n: int, task: str) -> list[str]:
    if n >= 3:
        return ["Reference"] + [f"Video {string.ascii_uppercase[i]}" for i in range(n - 1)]
    return [f"Video {i + 1}" for i in range(n)]


def map_hub_row(row: dict[str, Any], *, where: str = "hub row") -> dict[str, Any]:
    """Map one hub row (unknown column names) onto the canonical sample dict.

    Raises :class:`SchemaError` listing the columns found and those expected when it cannot.
    """
    found = sorted(map(str, row))
    expected = {k: v for k, v in _ALIASES.items() if k != "labels"}
    picked = {k: _pick(row, k) for k in _ALIASES}
    options = _maybe_json(picked["options"][1])
    if options is None:  # options spread over columns A, B, C, D (or option_a ...)
        letter_cols = {}
        for letter in string.ascii_uppercase[:8]:
            for name in (letter, letter.lower(), f"option_{letter.lower()}", f"option{letter}", f"choice_{letter.lower()}"):
                if name in row and row[name] not in (None, ""):
                    letter_cols[letter] = row[name]
                    break
        options = letter_cols or None
    missing = [k for k in ("task", "question", "answer", "videos") if picked[k][1] is None]
    if options is None:
        missing.append("options")
    if missing:
        raise SchemaError(
            f"cannot map {where} onto the MVX schema: no column for {', '.join(missing)}. Columns found: {found}. "
            f"Expected one of: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in expected.items() if k in missing),
            sample_id=str(picked["id"][1]) if picked["id"][1] is not None else None,
            fix="rename the columns, or convert the data to data.jsonl in the canonical layout and set MVX_BENCH_DATA")
    if isinstance(options, (list, tuple)):
        options = {string.ascii_uppercase[i]: str(o) for i, o in enumerate(options)}
    options = {str(k).strip().strip("().").upper(): str(v) for k, v in dict(options).items()}
    answer = picked["answer"][1]
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        idx = int(answer)
        answer = string.ascii_uppercase[idx] if 0 <= idx < len(options) else str(answer)
    answer = str(answer).strip()
    if answer.upper().strip("(). ") in options:
        answer = answer.upper().strip("(). ")
    else:  # the answer given as an option's text
        by_text = [k for k, v in options.items() if v.strip().lower() == answer.lower()]
        answer = by_text[0] if len(by_text) == 1 else answer
    videos = _maybe_json(picked["videos"][1])
    if isinstance(videos, str):
        videos = [v.strip() for v in videos.replace(";", ",").split(",") if v.strip()]
    labels = _maybe_json(picked["labels"][1])
    vids = []
    for i, v in enumerate(list(videos)):
        if isinstance(v, dict):
            vids.append({"label": v.get("label") or v.get("name"), "path": v.get("path") or v.get("video"),
                         "subtitle": v.get("subtitle")})
        else:
            vids.append({"label": None, "path": str(v)})
    default = labels if isinstance(labels, list) and len(labels) == len(vids) else _default_labels(len(vids), "")
    for i, v in enumerate(vids):
        v["label"] = v["label"] or default[i]
        if v.get("subtitle") is None:
            v.pop("subtitle", None)
    try:
        task = _task_code(picked["task"][1])
    except UnknownTaskError as exc:
        raise SchemaError(f"{where}: {exc}", fix="map the task column to one of the registry codes") from None
    sid = picked["id"][1]
    return {"id": str(sid) if sid is not None else f"{task.lower()}-{abs(hash(picked['question'][1])) % 10**8}",
            "task": task, "question": str(picked["question"][1]), "options": options, "answer": answer,
            "videos": vids, "meta": {"hub_columns": found}}


def hub_cache_root(cache_dir: str = HUB_CACHE_DIR) -> Path:
    """Where lmms-eval would cache the hub dataset's files: ``$HF_HOME/<cache_dir>``."""
    hf_home = os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface"))
    return Path(os.path.expanduser(hf_home)) / cache_dir


def fetch_hub_dataset(repo_id: str = HUB_REPO, cache_dir: str = HUB_CACHE_DIR, *, name: str = "MVX-Bench",
                      env: str = "MVX_BENCH_DATA") -> Path:
    """A hub dataset's local folder: reused when present (offline), else snapshot-downloaded and unpacked."""
    root = hub_cache_root(cache_dir)
    if root.is_dir() and any(root.iterdir()):
        return root
    try:
        from huggingface_hub import snapshot_download

        path = snapshot_download(repo_id=repo_id, repo_type="dataset", local_dir=str(root))
    except Exception as exc:
        offline = "; for an offline run use the mvx_synth tasks" if name == "MVX-Bench" else ""
        raise DataSourceError(
            f"{name} is not available offline: no cached copy at {root} and downloading {repo_id} failed "
            f"({type(exc).__name__}: {str(exc)[:200]}). Fix: download it on a connected machine "
            f"(huggingface-cli download {repo_id} --repo-type dataset --local-dir {root}), or point "
            f"{env} at a local folder (the canonical layout, or the authors' files){offline}."
        ) from None
    _unpack_archives(Path(path))
    return Path(path)


def _unpack_archives(root: Path) -> None:
    import tarfile
    import zipfile

    for arc in list(root.rglob("*.zip")) + list(root.rglob("*.tar")) + list(root.rglob("*.tar.gz")):
        marker = arc.with_name(arc.name + ".unpacked")
        if marker.exists():
            continue
        dest = arc.parent
        if arc.suffix == ".zip":
            with zipfile.ZipFile(arc) as z:
                for name in z.namelist():
                    resolve_in_root(dest, name, what="archive member")
                z.extractall(dest)
        else:
            with tarfile.open(arc) as t:
                t.extractall(dest, filter="data")
        marker.touch()


def _hub_rows(root: Path) -> Iterable[tuple[str, dict]]:
    """Rows from the annotation files of a hub snapshot (jsonl, json, parquet, csv)."""
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in (".jsonl", ".json", ".parquet", ".csv")
                   and p.is_file() and not p.name.startswith("."))
    if not files:
        raise DataSourceError(f"no annotation file (jsonl/json/parquet/csv) found under {root}")
    for f in files:
        if f.suffix == ".jsonl":
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    yield f"{f}:{i}", json.loads(line)
        elif f.suffix == ".json":
            data = json.loads(f.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else data.get("data") or data.get("questions") or []
            for i, r in enumerate(rows):
                if isinstance(r, dict):
                    yield f"{f}[{i}]", r
        else:
            import pandas as pd

            df = pd.read_parquet(f) if f.suffix == ".parquet" else pd.read_csv(f)
            for i, r in enumerate(df.to_dict(orient="records")):
                yield f"{f}[{i}]", r


def load_hub(root: str | Path | None = None) -> list[Sample]:
    """Samples from a hub snapshot folder (fetched or cached when ``root`` is None)."""
    root = Path(root) if root else fetch_hub_dataset()
    if (root / DATA_FILE).is_file():
        return load_local(root)
    samples = []
    for where, row in _hub_rows(root):
        raw = map_hub_row(row, where=where)
        for v in raw["videos"]:  # hub paths may be relative to a videos/ folder
            if not (root / v["path"]).exists():
                hits = list(root.rglob(Path(v["path"]).name))
                if len(hits) == 1:
                    v["path"] = str(hits[0].relative_to(root))
        s = validate_sample(raw, where=where)
        for v in s.videos:
            resolve_in_root(root, v.path, sample_id=s.id)
        samples.append(s)
    return samples


def resolve_bench_root() -> tuple[Path, str]:
    """Which MVX-Bench copy the harness tasks read: (folder, how it was chosen)."""
    env = os.environ.get("MVX_BENCH_DATA")
    if env:
        return Path(env), "MVX_BENCH_DATA"
    return fetch_hub_dataset(), f"hub {HUB_REPO}"


def load_bench_samples() -> tuple[Path, list[Sample]]:
    root, _ = resolve_bench_root()
    return root, (load_local(root) if (root / DATA_FILE).is_file() else load_hub(root))


# ----------------------------------------------------------------------------- peer benchmarks

def _video_index(root: Path) -> dict[str, list[Path]]:
    """Every video file under ``root`` by file name (one walk; hub layouts move videos into folders)."""
    from .schema import VIDEO_EXTENSIONS

    index: dict[str, list[Path]] = defaultdict(list)
    for p in root.rglob("*"):
        if p.suffix.lower() in VIDEO_EXTENSIONS and p.is_file():
            index[p.name].append(p)
    return index


def load_benchmark(bm: Any, root: str | Path | None = None) -> list[Sample]:
    """A peer benchmark's questions (see :mod:`.benchmarks`) from a folder: the canonical layout
    (``data.jsonl``) when present, else the authors' files mapped by ``bm.map_row``. Without
    ``root``: ``$<bm.env>``, else the hub cache. Video paths that are not where a row says are
    looked up by file name under the folder (the authors' archives unpack flat or into folders)."""
    root = Path(root) if root else resolve_benchmark_root(bm)[0]
    if (root / DATA_FILE).is_file():
        samples = load_local(root)
        wrong = sorted({s.task for s in samples if get_task(s.task).benchmark != bm.name})
        if wrong:
            raise DataSourceError(f"{root}/{DATA_FILE} is read as {bm.name}, but holds tasks {wrong} of another "
                                  f"benchmark; {bm.name}'s codes: {', '.join(t.code for t in bm.tasks)}")
        return samples
    index: dict[str, list[Path]] | None = None
    samples, skipped = [], Counter()
    for where, row in bm.rows(root):
        raw = bm.map_row(row, where)
        if raw is None:
            skipped[str(row.get("_qa_file") or "?")] += 1
            continue
        for v in raw["videos"]:
            if (root / v["path"]).exists():
                continue
            if index is None:
                index = _video_index(root)
            hits = index.get(Path(v["path"]).name, [])
            if len(hits) == 1:
                v["path"] = hits[0].relative_to(root).as_posix()
        samples.append(validate_sample(raw, where=where))
    if skipped:
        log.warning("%s at %s: skipped %s (formats the multiple-choice schema cannot hold; see "
                    "mvx_tasks/benchmarks.py)", bm.name, root, ", ".join(f"{k}: {n}" for k, n in sorted(skipped.items())))
    if not samples:
        raise DataSourceError(f"no {bm.name} questions found under {root}. Expected {bm.expected_columns}")
    return samples


def resolve_benchmark_root(bm: Any) -> tuple[Path, str]:
    """Which copy of a peer benchmark the harness reads: ``$<bm.env>`` or the hub cache."""
    env = os.environ.get(bm.env)
    if env:
        return Path(env), bm.env
    return fetch_hub_dataset(bm.hub_repo, bm.cache_dir, name=bm.name, env=bm.env), f"hub {bm.hub_repo}"


def load_benchmark_samples(bm: Any) -> tuple[Path, list[Sample]]:
    root, _ = resolve_benchmark_root(bm)
    return root, load_benchmark(bm, root)


# ----------------------------------------------------------------------------- verify

@dataclass
class VerifyReport:
    root: str
    counts: dict[str, int] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    n_videos: int = 0
    benchmark: str = "MVX-Bench"
    expected_total: int | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        w = max([6] + [len(c) + 2 for c in list(self.counts) + list(self.expected)])
        lines = [f"{self.benchmark} dataset at {self.root}", f"{'task':<{w}}{'questions':>10}{'expected':>10}"]
        for code in sorted(set(self.counts) | set(self.expected), key=lambda c: list(self.expected).index(c)
                           if c in self.expected else 99):
            n, e = self.counts.get(code, 0), self.expected.get(code, 0)
            flag = "" if n == e else ("  (per-task count not published)" if not e else "  (differs from the full benchmark)")
            lines.append(f"{code:<{w}}{n:>10}{(e or '?'):>10}{flag}")
        total = self.expected_total if self.expected_total is not None else sum(self.expected.values())
        lines.append(f"{'total':<{w}}{sum(self.counts.values()):>10}{total:>10}")
        lines.append(f"videos checked: {self.n_videos}")
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"error: {e}" for e in self.errors]
        lines.append("OK" if self.ok else f"FAILED with {len(self.errors)} error(s)")
        return "\n".join(lines)


def verify(root: str | Path, *, decode: bool = True, benchmark: str | None = None) -> VerifyReport:
    """Check a canonical folder: schema, ids, per-task counts, every video present and decodable to its
    end (a truncated file is reported with the time where its data stops). ``benchmark`` (a peer such
    as ``cvbench``) also reads the authors' own files through that benchmark's mapping."""
    from .video_decoder import check_video
    from .registry import bench_tasks

    root = Path(root)
    bm = None
    if benchmark and benchmark.lower().replace("-", "_") not in ("mvx", "mvx_bench"):
        from .benchmarks import get_benchmark

        bm = get_benchmark(benchmark)
    tasks = bm.tasks if bm else bench_tasks()
    report = VerifyReport(root=str(root), expected={t.code: t.n_questions for t in tasks},
                          benchmark=bm.name if bm else "MVX-Bench",
                          expected_total=bm.n_questions if bm else sum(t.n_questions for t in tasks))
    data = root / DATA_FILE
    samples: list[Sample] = []
    if bm is not None and not data.is_file():
        try:
            samples = load_benchmark(bm, root)
        except (SchemaError, DataSourceError, ValueError) as exc:
            report.errors.append(str(exc))
            return report
    elif not data.is_file():
        report.errors.append(f"{data} does not exist (a dataset folder holds {DATA_FILE} and its videos)")
        return report
    for lineno, line in enumerate(data.read_text(encoding="utf-8").splitlines() if data.is_file() else [], 1):
        if not line.strip():
            continue
        where = f"{data}:{lineno}"
        try:
            raw = json.loads(line)
            samples.append(validate_sample(raw, where=where))
        except json.JSONDecodeError as exc:
            report.errors.append(f"({where}): not valid JSON ({exc.msg}). Fix: write one JSON object per line")
        except SchemaError as exc:
            report.errors.append(str(exc))
    ids = Counter(s.id for s in samples)
    for sid, n in ids.items():
        if n > 1:
            report.errors.append(f"question id {sid!r} appears {n} times. Fix: give every question a unique id")
    report.counts = dict(Counter(s.task for s in samples))
    seen: dict[str, str | None] = {}
    for s in samples:
        for v in s.videos:
            for rel, what in ((v.path, "video"), (v.subtitle, "subtitle")):
                if not rel:
                    continue
                try:
                    p = resolve_in_root(root, rel, sample_id=s.id, what=f"{what} of {v.label!r}")
                except SchemaError as exc:
                    report.errors.append(str(exc))
                    continue
                if what == "subtitle":
                    if not p.is_file():
                        report.errors.append(f"question {s.id!r}: subtitle file {p} is missing. Fix: add it or "
                                             f"remove the subtitle field")
                    continue
                key = str(p)
                if key not in seen:
                    seen[key] = check_video(p) if decode else (None if p.is_file() else f"video file {p} does not exist")
                if seen[key]:
                    report.errors.append(f"question {s.id!r}, video {v.label!r}: {seen[key]}. Fix: restore or "
                                         f"re-encode the file (H.264 MP4)")
    report.n_videos = len(seen)
    for code, n in report.counts.items():
        if code in report.expected and report.expected[code] and n != report.expected[code]:
            report.warnings.append(f"task {code} has {n} questions; the full {report.benchmark} has "
                                   f"{report.expected[code]}")
    total = sum(report.counts.values())
    if bm is not None and total != bm.n_questions:
        report.warnings.append(f"{total} questions; the full {bm.name} has {bm.n_questions} ({bm.counts_note})")
    for code in report.expected:
        if code not in report.counts:
            report.warnings.append(f"task {code} has no questions")
    return report
