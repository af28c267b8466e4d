"""SAMA as an lmms-eval simple model (``--model sama``).

lmms-eval hands all requests at once; the docs are MVX docs (``id``, ``task``, ``question``,
``options`` and ``videos`` as JSON strings, ``root``); only those fields are read, never
``answer`` or ``meta``. Questions run concurrently in a thread pool; each leaves a trace, and a
question whose finished trace exists (same configuration) is not recomputed. Under
``accelerate launch`` the docs are already sharded by rank; the rank only names the progress bar.
"""
from __future__ import annotations

from typing import Any

from lmms_eval.api.model import lmms
from lmms_eval.models.registry_v2 import ModelManifest

from ..question import AgentQuestion
from ..runner import RunStats, run_questions
from .common import make_agent


def manifest() -> ModelManifest:
    """The entry-point payload registering this class as ``--model sama``."""
    return ModelManifest(model_id="sama", simple_class_path="sama_model.adapters.lmms_eval_model.SAMA")


class SAMA(lmms):
    is_simple = True

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

    def _question(self, request: Any) -> AgentQuestion:
        doc_id, task, split = request.args[-3:]
        return AgentQuestion.from_doc(self.task_dict[task][split][doc_id])

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
