"""``--model mvx_replay``: score an earlier run's answers again through lmms-eval, without its model.

For a fixed answer parser or metric, a second look at a run, or a run whose model is gone: this
answers each request with the answer an earlier run logged (lmms-eval's samples logs, written with
``--log_samples`` as ``<date>_samples_<task>.jsonl``), and writes that answer's note
(:mod:`mvx_tasks.answer_notes`) from the figures logged beside it, so the replay keeps the first
run's ``mvx_tokens``, ``mvx_cost_usd``, ``mvx_iterations``, ``mvx_tool_calls``, ``mvx_agent_failed``
(with its cause) and ``mvx_src_*``. lmms-eval's own ``from_log`` model reads a log layout current
versions no longer write.

    lmms-eval --model mvx_replay --model_args samples=<earlier output folder> \\
        --tasks mvx_synth --output_path <new folder> --log_samples

``samples`` is a folder (searched recursively; per task the newest file by name, i.e. by its date
prefix) or one ``.jsonl`` file; several, separated by ``|``. A question the logs lack, or whose
logged doc names another question, is answered empty and counted as failed, with the reason.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from lmms_eval.api.model import lmms

from .answer_notes import AnswerNote, use_store
from .chat_contract import (
    chat_request,
    generation_output,
    placement,
    refuse_multi_round,
)

log = logging.getLogger(__name__)

_SAMPLES = re.compile(r"_samples_(?P<task>.+)\.jsonl$")


def samples_files(spec: str) -> dict[str, Path]:
    """task -> its samples file, from folders (newest per task) and files named in ``spec``."""
    found: dict[str, Path] = {}
    for part in (p.strip() for p in str(spec).split("|") if p.strip()):
        root = Path(part).expanduser()
        if root.is_file():
            candidates = [root]
        elif root.is_dir():
            candidates = sorted(root.rglob("*_samples_*.jsonl"), key=lambda p: p.name)
        else:
            raise FileNotFoundError(f"mvx_replay: samples={part!r} is neither a samples file nor a folder; pass the "
                                    f"--output_path of a run made with --log_samples")
        for path in candidates:
            m = _SAMPLES.search(path.name)
            if not m:
                raise ValueError(f"mvx_replay: {path} is not an lmms-eval samples log (<date>_samples_<task>.jsonl)")
            found[m.group("task")] = path  # later names (later dates) win
    if not found:
        raise FileNotFoundError(f"mvx_replay: no *_samples_<task>.jsonl under {spec!r}; the run must use --log_samples")
    return found


def logged_text(sample: dict[str, Any]) -> str:
    """The model's answer in a samples line: ``resps`` (one list of outputs per request) where the log
    keeps it, else ``filtered_resps`` (lmms-eval 0.7.3 writes only this, flattened to a string)."""
    value = sample.get("resps") if sample.get("resps") is not None else sample.get("filtered_resps")
    while isinstance(value, list):
        value = value[0] if value else ""
    return "" if value is None else str(value)


def logged_question(sample: dict[str, Any]) -> str | None:
    """The question id a samples line answers: its doc's ``id``, else the MVX record's ``id``."""
    for holder in (sample.get("doc"), sample.get("mvx_acc")):
        if isinstance(holder, dict) and holder.get("id") is not None:
            return str(holder["id"])
    return None


class Replay(lmms):
    """A chat model that answers from samples logs (``samples=...``)."""

    is_simple = False

    def __init__(self, samples: str, batch_size: int | str = 1, device: str | None = None, **unused: Any) -> None:
        super().__init__()
        unused.pop("max_batch_size", None)
        if unused:
            raise ValueError(f"mvx_replay: unknown model argument(s) {', '.join(sorted(unused))}; it takes samples=")
        where = placement(device)
        self._rank, self._world_size, self._device = where.rank, where.world_size, where.device
        self.files = samples_files(samples)
        self._logs: dict[str, dict[int, dict[str, Any]]] = {}
        digest = hashlib.sha256("|".join(str(p.resolve()) for p in self.files.values()).encode()).hexdigest()[:16]
        self.notes = use_store(f"mvx_replay-{digest}")

    @property
    def device(self) -> str:
        return self._device

    def _log(self, task: str) -> dict[int, dict[str, Any]]:
        if task not in self._logs:
            path = self.files.get(task)
            rows: dict[int, dict[str, Any]] = {}
            if path is not None:
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if line.strip():
                        try:
                            row = json.loads(line)
                            rows[int(row["doc_id"])] = row
                        except (ValueError, KeyError, TypeError) as exc:
                            raise ValueError(f"mvx_replay: {path} line {n} is not a samples record ({exc})") from None
            self._logs[task] = rows
        return self._logs[task]

    def _answer(self, doc: Any, task: str, doc_id: int) -> tuple[str, AnswerNote]:
        row = self._log(task).get(int(doc_id))
        if row is None:
            where = self.files.get(task, "no samples file for this task")
            return "", AnswerNote(failure=f"replay: no logged answer for {task} doc {doc_id} ({where})")
        logged_id = logged_question(row)
        doc_qid = doc.get("id") if isinstance(doc, dict) else None
        if logged_id is not None and doc_qid is not None and str(logged_id) != str(doc_qid):
            return "", AnswerNote(failure=f"replay: {task} doc {doc_id} is question {doc_qid}, but the log's doc "
                                          f"{doc_id} is {logged_id} ({self.files[task]}): the data changed")
        return logged_text(row), AnswerNote.from_sample(row)

    def generate_until(self, requests: list[Any]) -> list[Any]:
        out = []
        for request in requests:
            req = chat_request(self, request)
            text, note = self._answer(req.doc, req.task, req.doc_id)
            if note.failure and note.failure.startswith("replay: "):
                log.error("mvx_replay: %s", note.failure)
            if isinstance(req.doc, dict):
                self.notes.write(req.doc, text, note)
            out.append(generation_output(text))
        return out

    def generate_until_multi_round(self, requests: list[Any]) -> list[Any]:
        refuse_multi_round("mvx_replay", requests)

    def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
        raise NotImplementedError("mvx_replay replays generated answers only (generate_until tasks)")
