"""SAMA as an lmms-eval chat model (``--model sama``): it answers any video task like any MLLM.

lmms-eval hands all requests at once; each carries the task's ``doc_to_messages`` (lmms-eval builds
one from ``doc_to_visual`` + ``doc_to_text`` for tasks without their own), parsed by lmms-eval's
``ChatMessages`` (:mod:`mvx_tasks.chat_contract`). SAMA reads only those messages, exactly what a
baseline receives: labelled videos, images, the question, its options (:mod:`.messages`). It is
never given the row's fields; the MVX task code only with ``task_hint=on``, from the lmms-eval task
name. Questions run concurrently in a thread pool; each leaves a trace and resumes from it
(:mod:`sama_model.runner`).

Out: a ``GenerationResult`` with the planner's token counts where lmms-eval has it (the text
alone on 0.6.1), and one note per answer (:mod:`mvx_tasks.answer_notes`: tokens, dollars, failure
cause, answer source) that the MVX metrics read, also when lmms-eval serves the answer from its
cache. Under ``accelerate launch`` the requests are already sharded by rank; rank and device come
from the launcher (``cuda:{LOCAL_RANK}`` on GPUs), since older lmms-eval versions do not set them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from lmms_eval.api.model import lmms
from lmms_eval.models.registry_v2 import ModelManifest

from mvx_tasks.answer_notes import use_store
from mvx_tasks.chat_contract import chat_request, generation_output, placement, question_id, refuse_multi_round
from mvx_tasks.registry import UnknownTaskError, all_tasks

from ..atomic import check_writable
from ..question import AgentQuestion
from ..runner import RunStats, answer_questions, interleaved
from .common import make_agent
from .messages import build_question, items_from_chat

__all__ = ["SAMA", "manifest", "question_id", "task_code_for"]


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


class SAMA(lmms):
    is_simple = False

    def __init__(self, batch_size: int | str = 1, device: str | None = None, **model_args: Any) -> None:
        super().__init__()
        model_args.pop("max_batch_size", None)
        model_args.pop("device_map", None)
        where = placement(device)
        self._rank, self._world_size, self._device = where.rank, where.world_size, where.device
        if self._device.startswith("cuda"):  # tool models asking for "cuda" land on this rank's GPU
            import torch

            torch.cuda.set_device(self._device)
        self.agent, self.trace_dir = make_agent(model_args)
        self.workers = self.agent.config.workers
        self.batch_size_per_gpu = int(batch_size) if str(batch_size).isdigit() else 1
        self.last_stats = RunStats()
        # one notes folder per configuration, read by the MVX metrics (also when every answer is cached)
        self.notes = use_store(f"sama-{self.agent.config.planner}-{self.agent.fingerprint}")
        check_writable(self.notes.folder, "SAMA answer notes", "set MVX_ANSWER_NOTES=<a writable folder>")

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

    def _question(self, request: Any) -> tuple[Any, AgentQuestion, str]:
        req = chat_request(self, request)
        qid = question_id(req.doc, req.task, req.doc_id)
        hint = task_code_for(req.task) if self.agent.config.task_hint else None
        try:
            items = items_from_chat(req.messages())
            return req.doc, build_question(items, qid, task=hint, stills_dir=self.stills_dir), str(req.task)
        except Exception as exc:  # a broken request fails its question alone (the agent records why)
            return req.doc, AgentQuestion(qid, f"(the request could not be read: {type(exc).__name__}: {exc})", {}, ()), \
                str(req.task)

    def generate_until(self, requests: list[Any]) -> list[Any]:
        docs, questions, tasks = zip(*(self._question(r) for r in requests)) if requests else ((), (), ())
        self.last_stats = RunStats()
        desc = f"SAMA rank {self._rank}/{self._world_size}" if self._world_size > 1 else "SAMA"
        order = interleaved(tasks)  # tasks in turns: tools warm early, a partial run covers every task
        in_turns = answer_questions(self.agent, [questions[i] for i in order], self.trace_dir, workers=self.workers,
                                    progress=True, desc=desc, stats=self.last_stats)
        answered: list[Any] = [None] * len(questions)
        for i, a in zip(order, in_turns):
            answered[i] = a
        self._write_run_stats(questions)
        out = []
        for doc, a in zip(docs, answered):
            if isinstance(doc, dict):
                self.notes.write(doc, a.output, a.note)
            out.append(generation_output(a.output, input_tokens=a.prompt_tokens, output_tokens=a.completion_tokens,
                                         reasoning_tokens=a.reasoning_tokens or None))
        return out

    def _write_run_stats(self, questions: tuple[AgentQuestion, ...]) -> None:
        """``<trace_dir>/run_stats/rank<r>.json``: this rank's resumed/answered/failed counts, its decodes
        and frame-cache hits, and the tool cache's hits and misses. Why: decodes per video and the tool
        cache's hit rate are what a long run's cost rests on, and no trace can hold a process's totals."""
        import json

        from mvx_tasks.video_decoder import decode_stats

        from ..atomic import atomic_write_text

        s = self.last_stats
        videos = {v.path for q in questions for v in q.videos}
        record = {"rank": self._rank, "world_size": self._world_size, "questions": len(questions),
                  "videos": len(videos), "resumed": s.resumed, "answered": s.answered, "failed": s.failed,
                  "decode": decode_stats(), "tool_cache": self.agent.cache.stats() if self.agent.cache else None}
        try:
            atomic_write_text(Path(self.trace_dir) / "run_stats" / f"rank{self._rank}.json", json.dumps(record, indent=1))
        except OSError:  # the answers matter more than their statistics
            pass

    def generate_until_multi_round(self, requests: list[Any]) -> list[Any]:
        """SAMA runs its own rounds but answers one user turn: a multi-round task is refused, clearly."""
        refuse_multi_round("sama", requests)

    def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
        raise NotImplementedError("SAMA is a tool-using agent that generates an answer; it has no token "
                                  "log-likelihoods. Use generate_until tasks such as mvx_bench.")
