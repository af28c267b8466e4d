"""When may a finished trace stand in for answering a question again?

Only when nothing that could change the answer has changed. A trace's *resume key* covers:

* the question's content: id, text, options, video labels, each video's content (size plus the
  first and last MiB, see :func:`quick_file_hash`) and each subtitle file's bytes;
* the configuration fingerprint (planner, skills, backends and their options ...);
* the code revision: the package version, the tool cache revision and the decoder's settings.

Same id with another question (a regenerated or another seed of MVX-Synth, another dataset
version under ``MVX_BENCH_DATA``), an edited video, another configuration or an upgraded package
all give another key, so the question is recomputed instead of silently reusing an old answer.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .question import AgentQuestion

#: bytes read from each end of a video for its content hash
EDGE_BYTES = 1 << 20
_QUICK: dict[tuple[str, int, int], str] = {}
_QUICK_LOCK = threading.Lock()


def code_revision() -> str:
    """The package version, the tool cache revision and the decoder's settings that change the frames the tools read
    (:func:`mvx_tasks.video_decoder.decode_settings`): a new release, or another ``MVX_MAX_DECODE_SIDE``,
    ``MVX_SAMPLE_FPS``, ``MVX_DECODER`` ..., never reuses old answers."""
    from mvx_tasks.video_decoder import decode_settings

    from . import __version__
    from .cache import CACHE_REVISION

    decode = hashlib.sha256(json.dumps(decode_settings(), sort_keys=True).encode()).hexdigest()[:8]
    return f"{__version__}+tools{CACHE_REVISION}+decode{decode}"


def quick_file_hash(path: str | os.PathLike) -> str:
    """BLAKE2b of a file's size, first and last MiB (cheap on multi-GB videos), memoised per
    (resolved path, size, mtime). A missing file hashes to ``"missing"``: the question then
    fails when run, and is recomputed once the file is back."""
    try:
        p = Path(path).resolve()
        st = p.stat()
    except OSError:
        return "missing"
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _QUICK_LOCK:
        if key in _QUICK:
            return _QUICK[key]
    h = hashlib.blake2b(digest_size=16)
    h.update(str(st.st_size).encode())
    try:
        with p.open("rb") as fh:
            h.update(fh.read(EDGE_BYTES))
            if st.st_size > EDGE_BYTES:
                fh.seek(max(EDGE_BYTES, st.st_size - EDGE_BYTES))
                h.update(fh.read(EDGE_BYTES))
    except OSError:
        return "unreadable"
    digest = h.hexdigest()
    with _QUICK_LOCK:
        _QUICK[key] = digest
    return digest


def _resolve(question: AgentQuestion, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() or not question.root else Path(question.root) / p


def question_content(question: AgentQuestion) -> dict[str, Any]:
    """What the agent is shown, with files replaced by their content hashes (paths may move)."""
    return {"id": question.id, "task": question.task, "question": question.question,
            "options": dict(question.options), "instruction": question.instruction,
            "videos": [{"label": v.label, "video": quick_file_hash(_resolve(question, v.path)),
                        "subtitle": quick_file_hash(_resolve(question, v.subtitle)) if v.subtitle else None}
                       for v in question.videos]}


def question_digest(question: AgentQuestion) -> str:
    payload = json.dumps(question_content(question), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ResumeKey:
    """The three parts of a resume key, kept apart so a rerun can say *what* changed."""

    question: str
    fingerprint: str
    revision: str

    @classmethod
    def of(cls, question: AgentQuestion, fingerprint: str) -> "ResumeKey":
        return cls(question_digest(question), fingerprint, code_revision())

    def to_dict(self) -> dict[str, str]:
        return {"question": self.question, "fingerprint": self.fingerprint, "revision": self.revision}

    def changed(self, stored: Any) -> list[str]:
        """Which parts differ from a trace's stored key (all three for a trace without one)."""
        stored = stored if isinstance(stored, dict) else {}
        return [k for k, v in self.to_dict().items() if stored.get(k) != v]
