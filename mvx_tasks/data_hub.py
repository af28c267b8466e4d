"""The hub dataset ``MVX-bench/MVX-Bench``: its rows mapped onto the canonical schema, the snapshot
fetched into (or reused from) the lmms-eval cache, and which MVX-Bench copy the harness tasks read
(``MVX_BENCH_DATA`` first, else the hub).

The hub's column names are not documented: :func:`map_hub_row` takes each canonical field from a
column the user names (a :class:`HubColumns` mapping: a small YAML or ``key=column`` pairs, through
``mvx-bench verify --hub-columns`` or ``$MVX_HUB_COLUMNS``), else from the likely names in
``_ALIASES``; ``mvx-bench verify --hub-columns`` prints which column each field came from and the rows
that do not map. Only the files of :data:`HUB_RELEASES` are read (or the ``files`` the mapping names)."""
from __future__ import annotations

import hashlib
import json
import os
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .benchmarks import Release
from .registry import all_tasks, bench_tasks, get_task, UnknownTaskError
from .row_mapping import answer_letter, missing_value, options_from_list
from .schema import SchemaError, Sample
from .data import DATA_FILE, DataSourceError, resolve_in_root
HUB_REPO = "MVX-bench/MVX-Bench"
HUB_CACHE_DIR = "mvx_bench"
#: a YAML file (or ``key=column,key=column``) mapping the hub's columns onto the schema
HUB_COLUMNS_ENV = "MVX_HUB_COLUMNS"
#: the forms the hub copy may take, looked for in this order; nothing else under the folder is read
HUB_RELEASES = (
    Release("a datasets save_to_disk folder", ("dataset_dict.json", "state.json"), videos=("", "videos"), arrow=True),
    Release("the hub's parquet shards", ("data/*.parquet", "*.parquet"), videos=("", "videos")),
    Release("JSON lines", ("data/*.jsonl", "*.jsonl"), videos=("", "videos")),
    Release("a JSON list", ("data/*.json", "*.json"), videos=("", "videos")),
    Release("CSV", ("data/*.csv", "*.csv"), videos=("", "videos")),
)
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
FIELDS = tuple(_ALIASES)


@dataclass
class HubColumns:
    """A user's mapping of hub columns onto the schema (fields left out are guessed from ``_ALIASES``);
    ``options`` may name one column per letter; ``files`` replaces :data:`HUB_RELEASES`' patterns."""

    columns: dict[str, str | list[str]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, specs: str | list[str] | None) -> "HubColumns":
        """From YAML files (``columns: {task: category, ...}``, ``files: [...]``) and/or ``key=column`` pairs
        (``options=A|B|C|D`` for one column per letter; ``files=data/*.parquet``)."""
        out = cls()
        items = [specs] if isinstance(specs, str) else list(specs or [])
        for item in (x for part in items for x in ([part] if "=" not in part else part.split(","))):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                key, _, col = item.partition("=")
                out._set(key.strip(), [c.strip() for c in col.split("|")] if "|" in col else col.strip(), item)
                continue
            path = Path(item)
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise ValueError(f"cannot read the hub column mapping {item!r}: {exc}. Give a YAML file or "
                                 f"key=column pairs (keys: {', '.join(FIELDS)}, files)") from None
            if not isinstance(data, dict):
                raise ValueError(f"{path}: expected a mapping with 'columns' (and optionally 'files')")
            for key, col in (data.get("columns") or {}).items():
                out._set(str(key), col, str(path))
            files = data.get("files") or []
            out.files += [files] if isinstance(files, str) else [str(f) for f in files]
        return out

    def _set(self, key: str, col: Any, where: str) -> None:
        if key == "files":
            self.files += [str(col)] if isinstance(col, str) else [str(c) for c in col]
        elif key not in FIELDS:
            raise ValueError(f"{where}: unknown field {key!r}; fields: {', '.join(FIELDS)}, files")
        else:
            self.columns[key] = col

    @classmethod
    def from_env(cls) -> "HubColumns":
        value = os.environ.get(HUB_COLUMNS_ENV, "").strip()
        return cls.parse(value) if value else cls()


def _present(value: Any) -> bool:
    if hasattr(value, "__len__") and not isinstance(value, str):
        return len(value) > 0
    return not missing_value(value)


def _pick(row: dict, key: str, given: dict[str, Any] | None = None) -> tuple[str | None, Any]:
    if given and key in given and not isinstance(given[key], list):
        col = given[key]
        if col not in row:
            raise SchemaError(f"column {col!r} given for {key} is not in the row; columns found: "
                              f"{sorted(map(str, row))}", fix=f"name an existing column for {key}")
        return col, row[col] if _present(row[col]) else None
    lower = {str(k).lower(): k for k in row if not str(k).startswith("_")}
    for alias in _ALIASES[key]:
        if alias in lower and _present(row[lower[alias]]):
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


def _letter_columns(row: dict, given: Any) -> tuple[list[str], dict[str, Any]] | None:
    """Options spread over one column per letter: the user's list, else A, B, C, D (or option_a ...)."""
    if isinstance(given, list):
        missing = [c for c in given if c not in row]
        if missing:
            raise SchemaError(f"option columns {missing} are not in the row; columns found: {sorted(map(str, row))}",
                              fix="name existing columns, one per letter")
        return list(given), {string.ascii_uppercase[i]: row[c] for i, c in enumerate(given) if _present(row[c])}
    cols, opts = [], {}
    for letter in string.ascii_uppercase[:8]:
        for name in (letter, letter.lower(), f"option_{letter.lower()}", f"option{letter}", f"choice_{letter.lower()}"):
            if name in row and _present(row[name]):
                cols.append(name)
                opts[letter] = row[name]
                break
    return (cols, opts) if opts else None


def map_hub_row(row: dict[str, Any], *, where: str = "hub row", columns: HubColumns | None = None) -> dict[str, Any]:
    """Map one hub row onto the canonical sample dict: each field from the column ``columns`` names, else
    from the likely names. ``meta["hub_mapping"]`` says which column each field came from.

    Raises :class:`SchemaError` listing the columns found and those expected when it cannot.
    """
    given = (columns or HubColumns()).columns
    found = sorted(map(str, row))
    expected = {k: v for k, v in _ALIASES.items() if k != "labels"}
    picked = {k: _pick(row, k, given) for k in _ALIASES}
    options = _maybe_json(picked["options"][1])
    mapping = {k: col for k, (col, value) in picked.items() if col is not None and value is not None}
    if options is None and (spread := _letter_columns(row, given.get("options"))):
        mapping["options"], options = spread
    missing = [k for k in ("task", "question", "answer", "videos") if picked[k][1] is None]
    if options is None:
        missing.append("options")
    if missing:
        raise SchemaError(
            f"cannot map {where} onto the MVX schema: no column for {', '.join(missing)}. Columns found: {found}. "
            f"Expected one of: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in expected.items() if k in missing),
            sample_id=str(picked["id"][1]) if picked["id"][1] is not None else None,
            fix=f"name the columns with `mvx-bench verify --hub-columns {missing[0]}=<column>` (or ${HUB_COLUMNS_ENV}), "
                "or convert the data to data.jsonl in the canonical layout and set MVX_BENCH_DATA")
    options = options_from_list(options)
    answer = picked["answer"][1]
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        idx = int(answer)
        answer = string.ascii_uppercase[idx] if 0 <= idx < len(options) else str(answer)
    answer = answer_letter(answer, options) or str(answer).strip()
    videos = _maybe_json(picked["videos"][1])
    if isinstance(videos, str):
        videos = [v.strip() for v in videos.replace(";", ",").split(",") if v.strip()]
    labels = _maybe_json(picked["labels"][1])
    vids = []
    for v in list(videos):
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
    if sid is None:  # a stable id from the question's text (the same in every run, so resume works)
        sid = f"{task.lower()}-{hashlib.sha1(str(picked['question'][1]).encode()).hexdigest()[:10]}"
    return {"id": str(sid), "task": task, "question": str(picked["question"][1]), "options": options,
            "answer": answer, "videos": vids, "meta": {"hub_columns": found, "hub_mapping": mapping}}


def hub_cache_root(cache_dir: str = HUB_CACHE_DIR) -> Path:
    """Where lmms-eval would cache the hub dataset's files: ``$HF_HOME/<cache_dir>``."""
    hf_home = os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface"))
    return Path(os.path.expanduser(hf_home)) / cache_dir


def fetch_hub_dataset(repo_id: str = HUB_REPO, cache_dir: str = HUB_CACHE_DIR, *, name: str = "MVX-Bench",
                      env: str = "MVX_BENCH_DATA", allow_patterns: tuple[str, ...] | None = None) -> Path:
    """A hub dataset's local folder: reused when present (offline), else snapshot-downloaded and unpacked.
    ``allow_patterns`` limits the download to the files the tasks run here read (CrossVid: two of ten)."""
    root = hub_cache_root(cache_dir)
    if root.is_dir() and any(root.iterdir()):
        return root
    try:
        from huggingface_hub import snapshot_download

        path = snapshot_download(repo_id=repo_id, repo_type="dataset", local_dir=str(root),
                                 allow_patterns=list(allow_patterns) if allow_patterns else None)
    except Exception as exc:
        offline = "; for an offline run use the mvx_synth tasks" if name == "MVX-Bench" else ""
        raise DataSourceError(
            f"{name} is not available offline: no cached copy at {root} and downloading {repo_id} failed "
            f"({type(exc).__name__}: {str(exc)[:200]}). Fix: download it on a connected machine "
            f"(huggingface-cli download {repo_id} --repo-type dataset --local-dir {root}"
            + "".join(f" --include '{p}'" for p in allow_patterns or ()) + "), or point "
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


def hub_releases(columns: HubColumns | None = None) -> tuple[Release, ...]:
    """The files read from a hub copy: the user's ``files`` patterns, else :data:`HUB_RELEASES`."""
    if columns is not None and columns.files:
        return (Release("the files named by the column mapping", tuple(columns.files), videos=("", "videos")),)
    return HUB_RELEASES


def load_hub_report(root: str | Path | None = None, *, columns: HubColumns | None = None,
                    strict: bool | None = None) -> tuple[list[Sample], Any]:
    """Samples from a hub snapshot folder (fetched or cached when ``root`` is None) and the load's report:
    rows that do not map are skipped and reported by id (``strict``: an error), duplicate ids refused,
    per-task counts checked against MVX-Bench's."""
    from .data_release import load_canonical, load_release

    root = Path(root) if root else fetch_hub_dataset()
    columns = columns if columns is not None else HubColumns.from_env()
    if (root / DATA_FILE).is_file():
        return load_canonical("MVX-Bench", root, bench_tasks())
    samples, report = load_release("MVX-Bench", root, hub_releases(columns),
                                   lambda row, where: map_hub_row(row, where=where, columns=columns),
                                   tasks=bench_tasks(), strict=strict)
    for s in samples:
        for v in s.videos:
            resolve_in_root(root, v.path, sample_id=s.id)
    return samples, report


def load_hub(root: str | Path | None = None, *, columns: HubColumns | None = None,
             strict: bool | None = None) -> list[Sample]:
    """Samples from a hub snapshot folder (see :func:`load_hub_report`)."""
    return load_hub_report(root, columns=columns, strict=strict)[0]


def resolve_bench_root() -> tuple[Path, str]:
    """Which MVX-Bench copy the harness tasks read: (folder, how it was chosen)."""
    env = os.environ.get("MVX_BENCH_DATA")
    if env:
        return Path(env), "MVX_BENCH_DATA"
    return fetch_hub_dataset(), f"hub {HUB_REPO}"


def load_bench_samples() -> tuple[Path, list[Sample]]:
    root, _ = resolve_bench_root()
    return root, load_hub(root)
