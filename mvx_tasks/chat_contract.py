"""lmms-eval's chat-model contract as the MVX adapters (``sama``, ``mvx_hf_chat``, ``mvx_replay``) use it,
tolerant of every lmms-eval version the plugin supports (0.6.1 onwards), by feature detection:

* **in**: a request's ``args`` are ``(ctx, doc_to_messages, gen_kwargs, doc_id, task, split)`` (0.6.1
  to 0.7.3); ``doc_to_messages(doc)`` is parsed by lmms-eval's own ``ChatMessages``
  (``lmms_eval/protocol.py``), which validates roles and content items (text, image, video, audio);
* **out**: ``GenerationResult(text, TokenCounts(...))`` (``lmms_eval/api/instance.py``) where the
  installed version has it (0.7.2 on), else the plain string (0.6.1);
* **multi-round** requests are refused with :class:`MultiRoundUnsupported`, never answered as one round;
* **rank, world size, device** come from the launcher (``RANK``/``LOCAL_RANK``/``WORLD_SIZE``, and
  accelerate's state under ``accelerate launch``): lmms-eval sets ``_rank``/``_world_size`` only from
  0.7.3 and only when world size > 1, and under NCCL it gathers ``torch.tensor(..., device=lm.device)``,
  so the device must be the rank's GPU (``cuda:{LOCAL_RANK}``).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval.protocol import ChatMessages

try:  # lmms-eval >= 0.7.2
    from lmms_eval.api.instance import GenerationResult, TokenCounts
except ImportError:  # 0.6.1: models return plain strings
    GenerationResult = TokenCounts = None  # type: ignore[assignment,misc]

__all__ = [
    "HAS_GENERATION_RESULT",
    "ChatRequest",
    "MultiRoundUnsupported",
    "Placement",
    "chat_messages",
    "chat_request",
    "generation_output",
    "placement",
    "question_id",
    "refuse_multi_round",
]

HAS_GENERATION_RESULT = GenerationResult is not None


def chat_messages(raw: Any) -> ChatMessages:
    """lmms-eval's ``ChatMessages`` from what ``doc_to_messages`` returned (a list of message dicts,
    or already ``ChatMessages``). A message whose content is a bare string counts as one text item."""
    if isinstance(raw, ChatMessages):
        return raw
    messages = getattr(raw, "messages", raw)
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"doc_to_messages returned {type(raw).__name__}, not a list of chat messages")
    fixed = []
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            m = {**m, "content": [{"type": "text", "text": m["content"]}]}
        fixed.append(m)
    return ChatMessages(messages=fixed)


@dataclass(frozen=True)
class ChatRequest:
    """One chat request, unpacked: the doc it asks about, its messages callable and settings."""

    doc: Any
    doc_to_messages: Any
    gen_kwargs: dict
    doc_id: int
    task: str
    split: str

    def messages(self) -> ChatMessages:
        return chat_messages(self.doc_to_messages(self.doc))


def chat_request(lm: Any, request: Any) -> ChatRequest:
    """A request of a chat model (``is_simple = False``); the doc comes from ``lm.task_dict``."""
    _ctx, doc_to_messages, gen_kwargs, doc_id, task, split = request.args[:6]
    return ChatRequest(lm.task_dict[task][split][doc_id], doc_to_messages, dict(gen_kwargs or {}), doc_id, task,
                       split)


def question_id(doc: Any, task: str, doc_id: int) -> str:
    """A name for a question: the dataset's own ``id`` when the row has a scalar one (so traces, logs
    and samples files share it), else ``<task>-<doc_id>``."""
    qid = doc.get("id") if isinstance(doc, dict) else None
    return str(qid) if isinstance(qid, (str, int)) and str(qid).strip() else f"{task}-{doc_id}"


def generation_output(text: str, *, input_tokens: int | None = None, output_tokens: int | None = None,
                      reasoning_tokens: int | None = None) -> Any:
    """What ``generate_until`` returns for one request: a ``GenerationResult`` with its token counts
    where lmms-eval has the type (it writes them to the samples log), else the text."""
    if not HAS_GENERATION_RESULT:
        return text
    counts = {"input_tokens": input_tokens, "output_tokens": output_tokens, "reasoning_tokens": reasoning_tokens}
    known = {k: int(v) for k, v in counts.items() if v is not None}
    return GenerationResult(text=text, token_counts=TokenCounts(**known) if known else None)


class MultiRoundUnsupported(NotImplementedError):
    """A ``generate_until_multi_round`` task given to a model that answers one turn per question."""


def refuse_multi_round(model: str, requests: Sequence[Any]) -> None:
    """Raise :class:`MultiRoundUnsupported` naming the tasks: answering only the first round of a
    multi-round dialogue would score a different task, silently."""
    tasks = sorted({str(getattr(r, "task_name", None) or r.args[4]) for r in requests if getattr(r, "args", None)})
    raise MultiRoundUnsupported(
        f"{model} answers one turn per question and does not implement generate_until_multi_round "
        f"(asked by {', '.join(tasks) or 'a multi-round task'}); run single-turn generate_until tasks "
        f"(e.g. mvx_bench) with it, or a model that implements multi-round dialogue for these tasks")


@dataclass(frozen=True)
class Placement:
    """Where this process runs: its global rank, the world size, its local rank and torch device."""

    rank: int
    world_size: int
    local_rank: int
    device: str


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def placement(requested: str | None = None) -> Placement:
    """Rank and device from the launcher. Several processes (``accelerate launch``, torchrun): the
    accelerator's device (``cuda:{LOCAL_RANK}`` on GPUs, ``cpu`` with ``--cpu``), whatever was asked,
    because lmms-eval gathers tensors there. One process: ``requested`` (a bare ``cuda`` becomes
    ``cuda:{LOCAL_RANK}``), else ``cuda:{LOCAL_RANK}`` when CUDA is present, else ``cpu``."""
    env = os.environ
    rank, world, local = int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_RANK", 0))
    if world > 1:
        try:
            from accelerate import PartialState

            # the state lmms-eval's CLI already built (Accelerator()), or the one it will find; like
            # Accelerator(), honour `accelerate launch`'s CPU flag (gloo on CPUs, not NCCL)
            state = PartialState(cpu=_flag("ACCELERATE_USE_CPU"))
            device = str(state.device)
            return Placement(state.process_index, state.num_processes, state.local_process_index,
                             "cpu" if device.startswith("cpu") else device)
        except Exception:  # accelerate missing or no process group: the environment still says where
            device = f"cuda:{local}" if _cuda_available() and not _flag("ACCELERATE_USE_CPU") else "cpu"
            return Placement(rank, world, local, device)
    if requested not in (None, "", "None", "auto"):
        device = str(requested)
        return Placement(rank, world, local, f"cuda:{local}" if device == "cuda" else device)
    return Placement(rank, world, local, f"cuda:{local}" if _cuda_available() else "cpu")
