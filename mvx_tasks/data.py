"""Loading MVX data: a local canonical folder, or the hub dataset, into validated Samples.

Sources, in the order the harness tasks resolve them (:func:`.data_hub.resolve_bench_root`):

1. ``MVX_BENCH_DATA=<folder>``: a local folder in the canonical layout (``data.jsonl`` + videos).
2. The hub dataset ``MVX-bench/MVX-Bench``, snapshot-downloaded the way lmms-eval caches video
   datasets (``$HF_HOME/<cache_dir>``, default ``mvx_bench``), so a pre-filled cache works offline.
   Its column schema is not public: :func:`.data_hub.map_hub_row` maps the likely column names onto the
   canonical schema and fails with the columns it found and the ones it expected.

Every video path stays inside its dataset root (checked after resolving symlinks).

This module reads local canonical folders and converts samples to and from harness documents;
:mod:`.data_hub` maps and fetches the hub dataset and resolves which copy the harness reads,
:mod:`.data_peers` loads the peer benchmarks, :mod:`.data_verify` checks a folder (``mvx-bench verify``).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .schema import SchemaError, Sample, Video, read_jsonl

log = logging.getLogger(__name__)

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
