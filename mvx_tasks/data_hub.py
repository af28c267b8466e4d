"""The hub dataset ``MVX-bench/MVX-Bench``: its rows mapped onto the canonical schema, the snapshot
fetched into (or reused from) the lmms-eval cache, and which MVX-Bench copy the harness tasks read
(``MVX_BENCH_DATA`` first, else the hub)."""
from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any, Iterable

from .registry import all_tasks, get_task, UnknownTaskError
from .schema import SchemaError, Sample, validate_sample
from .data import DATA_FILE, DataSourceError, load_local, resolve_in_root
HUB_REPO = "MVX-bench/MVX-Bench"
HUB_CACHE_DIR = "mvx_bench"
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
