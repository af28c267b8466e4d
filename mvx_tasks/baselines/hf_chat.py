"""``--model mvx_hf_chat``: one transformers image-text-to-text chat adapter for the baselines.

lmms-eval's own adapters fail on the pinned stack for several Table 1 models (``llava_hf`` passes
``device_map=""`` and ``images=[]``, ignores ``max_frames_num`` and puts every video before the
labels; ``huggingface`` passes ``audios=[]`` and loads ``AutoModel`` for Idefics3; the HF video
processors want torchcodec to read files). This adapter reads each request's chat messages (MVX
tasks send ``"<label>:"`` then that video), decodes every video with the project's decoder
(:func:`mvx_tasks.video_decoder.sample_video`: one decoder, one frame cache, no torchcodec) to
``frames_per_video`` frames, and gives the processor, in the message's order, either those frames
as images (``video_input=frames``) or the frames as one video (``video_input=video``, for processors
with a video path). When a chat template moves visuals away from their text (LLaVA-OneVision renders
all images, then all videos, then the text), the placeholders are written inline into the text
instead, so each label still stands right before its video. A question that fails is answered
empty and its note (:mod:`mvx_tasks.answer_notes`) keeps the cause for ``mvx_agent_failed``, also when
the answer is later replayed; the run goes on.

On lmms-eval's chat contract (:mod:`mvx_tasks.chat_contract`): messages parsed by ``ChatMessages``,
answers returned as ``GenerationResult`` with the prompt and generated token counts where lmms-eval
has it, a multi-round task refused, and the model placed on the rank's device (``cuda:{LOCAL_RANK}``
under ``accelerate launch``; one process may spread a large model over its GPUs, ``device_map=auto``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from typing import Any

from lmms_eval.api.model import lmms

from ..answer_notes import AnswerNote, use_store
from ..chat_contract import (ChatMessages, chat_request, generation_output, placement, question_id,
                             refuse_multi_round)
from ..video_decoder import sample_video

log = logging.getLogger(__name__)

VIDEO_INPUTS = ("auto", "frames", "video")
_MARK_A, _MARK_B = "MVXMARKA", "MVXMARKB"


def _as_bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


def _diff(longer: str, shorter: str) -> str:
    """The part of ``longer`` that ``shorter`` lacks (both rendered from the same template)."""
    i = 0
    while i < min(len(longer), len(shorter)) and longer[i] == shorter[i]:
        i += 1
    j = 0
    while j < min(len(longer), len(shorter)) - i and longer[-1 - j] == shorter[-1 - j]:
        j += 1
    return longer[i:len(longer) - j]


class HFChat(lmms):
    """A transformers chat VLM (``AutoModelForImageTextToText``) that sees every labelled video."""

    is_simple = False

    def __init__(self, pretrained: str, frames_per_video: int | str = 8, video_input: str = "auto",
                 device: str | None = None, device_map: str | None = None, dtype: str = "auto",
                 attn_implementation: str | None = None, trust_remote_code: bool | str = False,
                 revision: str | None = None, lora_subfolder: str | None = None,
                 max_side: int | str | None = None, batch_size: int | str = 1,
                 max_batch_size: int | str | None = None) -> None:
        # No **kwargs: a misspelt model_arg fails at load (and in the config check), never silently.
        super().__init__()
        import torch
        from transformers import AutoProcessor

        if str(video_input) not in VIDEO_INPUTS:
            raise ValueError(f"mvx_hf_chat: video_input={video_input!r} must be one of {VIDEO_INPUTS}")
        self.frames_per_video = int(frames_per_video)
        self.max_side = int(max_side) if max_side not in (None, "", "None") else None
        self.batch_size_per_gpu = int(batch_size) if str(batch_size).isdigit() else 1
        remote = _as_bool(trust_remote_code)
        where = placement(device)
        self._rank, self._world_size, device = where.rank, where.world_size, where.device
        if device_map in (None, "", "None"):
            # several processes: each rank's copy on its own GPU; one process: spread over its GPUs
            device_map = "auto" if device.startswith("cuda") and where.world_size == 1 else device
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        hub = {"trust_remote_code": remote, **({"revision": revision} if revision else {})}
        load = {"dtype": getattr(torch, dtype), "device_map": device_map, **hub}
        if attn_implementation not in (None, "", "None"):
            load["attn_implementation"] = attn_implementation
        self.processor = AutoProcessor.from_pretrained(pretrained, **hub)
        self._model = self._load_model(pretrained, load)
        if lora_subfolder:  # e.g. Phi-4-multimodal's vision-lora: without it the base model answers poorly
            self._model = self._merge_lora(self._model, pretrained, lora_subfolder, revision)
        self._device = self._model.device
        self.video_input = self._choose_video_input(str(video_input))
        self.inline = {kind: self._inline_placeholder(kind) for kind in ("image", "video")}
        identity = {"pretrained": pretrained, "revision": revision, "frames_per_video": self.frames_per_video,
                    "video_input": self.video_input, "max_side": self.max_side, "dtype": str(dtype),
                    "lora_subfolder": lora_subfolder}
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
        self.notes = use_store(f"mvx_hf_chat-{digest}")  # each answer's failure cause, for mvx_agent_failed

    # ------------------------------------------------------------------ loading

    @staticmethod
    def _load_model(pretrained: str, load: dict[str, Any]):
        """``AutoModelForImageTextToText``; a causal-LM multimodal class (Phi-4-multimodal) otherwise."""
        from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

        try:
            return AutoModelForImageTextToText.from_pretrained(pretrained, **load).eval()
        except ValueError as exc:
            if "Unrecognized configuration class" not in str(exc):
                raise
            return AutoModelForCausalLM.from_pretrained(pretrained, **load).eval()

    @staticmethod
    def _merge_lora(model, pretrained: str, subfolder: str, revision: str | None):
        """Apply a PEFT LoRA from ``<pretrained>/<subfolder>`` and merge it into the weights. Through peft
        itself: transformers' ``load_adapter`` refuses the installed peft (it asks for >= 0.22, which PyPI
        does not have)."""
        from peft import PeftModel

        extra = {"revision": revision} if revision else {}
        return PeftModel.from_pretrained(model, pretrained, subfolder=subfolder, **extra).merge_and_unload().eval()

    @property
    def model(self):
        return self._model

    @property
    def device(self):
        return self._device

    @property
    def batch_size(self) -> int:
        return self.batch_size_per_gpu

    def _template(self, messages: list[dict[str, Any]]) -> str:
        """The processor's chat template, else the tokenizer's (Phi-4-multimodal's processor loads without
        its own, while the tokenizer carries it)."""
        owner = self.processor if getattr(self.processor, "chat_template", None) else self.processor.tokenizer
        return owner.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _render(self, content: list[dict[str, Any]]) -> str:
        return self._template([{"role": "user", "content": content}])

    def _placeholder(self, kind: str) -> str:
        """What the chat template writes for one ``kind`` item ('' when it ignores the kind)."""
        try:
            with_item = self._render([{"type": kind}, {"type": "text", "text": _MARK_A}])
        except Exception:  # a template that refuses the kind (e.g. images only)
            return ""
        return _diff(with_item, self._render([{"type": "text", "text": _MARK_A}])).strip()

    def _inline_placeholder(self, kind: str) -> str | None:
        """None when the template keeps ``kind`` items where they stand; else the placeholder to
        write inline (the template moves them away from their label, e.g. LLaVA-OneVision)."""
        token = self._placeholder(kind)
        if not token:
            return None
        text = self._render([{"type": "text", "text": _MARK_A}, {"type": kind}, {"type": "text", "text": _MARK_B}])
        a, b = text.find(_MARK_A), text.find(_MARK_B)
        return None if 0 <= a < b and token in text[a:b] else token

    def _choose_video_input(self, wanted: str) -> str:
        takes_video = getattr(self.processor, "video_processor", None) is not None and bool(self._placeholder("video"))
        if wanted == "video" and not takes_video:
            raise ValueError(f"mvx_hf_chat: video_input=video, but {type(self.processor).__name__} has no video path "
                             f"(no video processor, or its chat template renders no video); use video_input=frames")
        if wanted == "auto":
            return "video" if takes_video else "frames"
        return wanted

    # ------------------------------------------------------------------ requests

    @staticmethod
    def _image(url: Any) -> Any:
        from PIL import Image

        return Image.open(url).convert("RGB") if isinstance(url, (str, os.PathLike)) else url

    def build_inputs(self, messages: ChatMessages) -> tuple[str, list, list]:
        """The prompt text, images and videos, in message order: text items as they are, each image
        item an image, each video item its frames as images or as one video."""
        from PIL import Image

        hf_messages, images, videos = [], [], []
        for msg in messages.messages:
            items: list[dict[str, Any]] = []
            for item in msg.content:
                kind = item.type
                if kind == "text":
                    items.append({"type": "text", "text": item.text})
                elif kind == "image":
                    images.append(self._image(item.url))
                    items.append({"type": "image"})
                elif kind == "video":
                    frames, _times = sample_video(item.url, self.frames_per_video, max_side=self.max_side)
                    if self.video_input == "video":
                        videos.append(frames)
                        items.append({"type": "video"})
                    else:
                        images.extend(Image.fromarray(f) for f in frames)
                        items.extend({"type": "image"} for _ in range(len(frames)))
                else:
                    raise ValueError(f"content item of type {kind!r} is not supported (text, image, video)")
            if any(self.inline.get(i["type"]) for i in items if i["type"] != "text"):
                items = [{"type": "text", "text": self._inline_text(items)}]
            hf_messages.append({"role": msg.role, "content": items})
        return self._template(hf_messages), images, videos

    def _inline_text(self, items: list[dict[str, Any]]) -> str:
        parts = []
        for i in items:
            if i["type"] == "text":
                parts.append(i["text"])
            else:
                parts.append(self.inline[i["type"]] or self._placeholder(i["type"]))
        return "\n".join(parts)

    def answer(self, messages: ChatMessages, gen_kwargs: dict[str, Any]) -> tuple[str, int, int]:
        """(answer text, prompt tokens, generated tokens) for one request's messages."""
        import torch

        text, images, videos = self.build_inputs(messages)
        inputs = self.processor(text=[text], images=images or None, videos=videos or None, return_tensors="pt")
        inputs = inputs.to(self.model.device, dtype=self.model.dtype)
        temperature = float(gen_kwargs.get("temperature", 0) or 0)
        kwargs: dict[str, Any] = {"max_new_tokens": int(gen_kwargs.get("max_new_tokens", 512)),
                                  "do_sample": temperature > 0}
        if temperature > 0:
            kwargs["temperature"] = temperature
        tok = getattr(self.processor, "tokenizer", None)
        if tok is not None and tok.pad_token_id is not None:
            kwargs["pad_token_id"] = tok.pad_token_id
        with torch.inference_mode():
            out = self.model.generate(**inputs, **kwargs)
        n_prompt = int(inputs["input_ids"].shape[1])
        generated = out[:, n_prompt:]
        answer = self.processor.batch_decode(generated, skip_special_tokens=True)[0]
        for stop in gen_kwargs.get("until") or []:
            if stop and stop in answer:
                answer = answer.split(stop)[0]
        return answer.strip(), n_prompt, int(generated.shape[1])

    def generate_until(self, requests: list[Any]) -> list[Any]:
        from tqdm import tqdm

        out = []
        for request in tqdm(requests, desc="mvx_hf_chat", disable=self._rank != 0):
            req = chat_request(self, request)
            qid = question_id(req.doc, req.task, req.doc_id)
            try:
                answer, n_in, n_out = self.answer(req.messages(), req.gen_kwargs)
                note, result = AnswerNote(), generation_output(answer, input_tokens=n_in, output_tokens=n_out)
            except Exception as exc:  # one question's failure must not end the run: note it, go on
                cause = f"{type(exc).__name__}: {exc}"
                log.error("mvx_hf_chat: question %s (task %s) failed: %s", qid, req.task, cause)
                answer, note = "", AnswerNote(failure=cause)
                result = generation_output(answer)
            if isinstance(req.doc, dict):
                self.notes.write(req.doc, answer, note)
            out.append(result)
        return out

    def generate_until_multi_round(self, requests: list[Any]) -> list[Any]:
        refuse_multi_round("mvx_hf_chat", requests)

    def loglikelihood(self, requests: list[Any]) -> list[tuple[float, bool]]:
        raise NotImplementedError("mvx_hf_chat generates answers only; use generate_until tasks such as mvx_bench")
