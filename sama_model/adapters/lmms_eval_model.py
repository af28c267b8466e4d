"""SAMA as an lmms-eval chat model (``--model sama``): it answers any video task like any MLLM.

lmms-eval hands all requests at once; each carries the task's ``doc_to_messages`` (lmms-eval builds
one from ``doc_to_visual`` + ``doc_to_text`` for tasks without their own). SAMA reads only those
messages, exactly what a baseline receives: labelled videos, images, the question, its options
(:mod:`.messages`). It is never given the row's fields; the MVX task code only with
``task_hint=on``, from the lmms-eval task name. Questions run concurrently in a thread pool; each
leaves a trace and resumes from it (:mod:`sama_model.runner`). Under ``accelerate launch`` the
requests are already sharded by rank; the rank only names the progress bar.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lmms_eval.api.model import lmms
from lmms_eval.models.registry_v2 import ModelManifest

from mvx_tasks.registry import UnknownTaskError, all_tasks

from ..question import AgentQuestion
from ..runner import RunStats, run_questions
from .common import make_agent
from .messages import build_question, items_from_chat


def manifest() -> ModelManifest:
    """The entry-point payload registering this class as ``--model sama`` (defined with the plugin)."""
    from ..lmms_eval_plugin import sama_manifest

    return sama_manifest()


def task_code_for(task_name: str) -> str | None:
    """The MVX registry code of an lmms-eval task name (``mvx_synth_cnt`` -> ``CNT``), else None."""
    tail = task_name.rsplit("_", 1)[-1].lower()
    try:
        for spec in all_tasks():
            if spec.slug == tail and task_name.startswith("mvx_"):
                return spec.code
    except UnknownTaskError:  # pragma: no cover - registry read errors
        return None
    return None


def question_id(doc: Any, task: str, doc_id: int) -> str:
    """A name for the question's trace: the dataset's own ``id`` when the row has a scalar one (so
    traces and samples files share it), else ``<task>-<doc_id>``. Only names files; never shown."""
    qid = doc.get("id") if isinstance(doc, dict) else None
    return str(qid) if isinstance(qid, (str, int)) and str(qid).strip() else f"{task}-{doc_id}"


class SAMA(lmms):
    is_simple = False

    def __init__(self, batch_size: int | str = 1, device: str | None = None, **model_args: Any) -> None:
        super().__init__()
        model_args.pop("max_batch_size", None)
        model_args.pop("device_map", None)
        self.agent, self.trace_dir = make_agent(model_args)
        self.workers = self.agent.config.workers
        self._device = device or "cpu"
        self.batch_size_per_gpu = int(batch_size) if str(batch_size).isdigit() else 1
        self.last_stats = RunStats()

    @property
    def device(self) -> str:
        return self._device

    @property
    def batch_size(self) -> int:
        return self.batch_size_per_gpu

    @property
    def stills_dir(self) -> Path:
        """Where images become still clips: beside the tool cache, else beside the traces."""
        base = Path(self.agent.config.cache_dir) if self.agent.config.cache_dir else Path(self.trace_dir)
        return base / "stills"

    def _question(self, request: Any) -> AgentQuestion:
        _ctx, doc_to_messages, _gen, doc_id, task, split = request.args[:6]
        doc = self.task_dict[task][split][doc_id]
        qid = question_id(doc, task, doc_id)
        hint = task_code_for(task) if self.agent.config.task_hint else None
        try:
            items = items_from_chat(doc_to_messages(doc))
            return build_question(items, qid, task=hint, stills_dir=self.stills_dir)
        except Exception as exc:  # a broken request fails its question alone (the agent records why)
            return AgentQuestion(qid, f"(the request could not be read: {type(exc).__name__}: {exc})", {}, ())

    def generate_until(self, requests: list[Any]) -> list[str]:
        questions = [self._question(r) for r in requests]
        self.last_stats = RunStats()
        desc = f"SAMA rank {self._rank}/{self._world_size}" if self._world_size > 1 else "SAMA"
        return run_questions(self.agent, questions, self.trace_dir, workers=self.workers,
                             progress=True, desc=desc, stats=self.last_stats)

    def generate_until_multi_round(self, requests: list[Any]) -> list[str]:
        """The agent runs its own rounds; one final answer per request."""
        return self.generate_until(requests)

    def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
        raise NotImplementedError("SAMA is a tool-using agent that generates an answer; it has no token "
                                  "log-likelihoods. Use generate_until tasks such as mvx_bench.")
