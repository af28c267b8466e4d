"""Video Reader on an OpenAI-compatible endpoint (vLLM / SGLang serving e.g. Qwen2.5-VL-7B-Instruct).

Serving the reader in its own process lets a GPU server batch many agents' questions. Frames of
the query window travel as base64 JPEG ``image_url`` parts (or, with ``video_mode="video_url"``,
as one MP4 data URL that vLLM decodes itself). Decoding is greedy (temperature 0, seed 42, as in
the paper). Calls go through :class:`sama_model.chat_api.ChatAPI`, like the planner's: transient
failures back off (429 honours ``Retry-After``), a rejected parameter is dropped or renamed once per
run, and ``max_in_flight`` / ``requests_per_minute`` cap the requests of every worker together. Each
answer carries the call's token usage (prompt, completion, reasoning, cached) for the question's
cost. The API key is read from the environment variable named by ``api_key_env`` and never logged.

``transformers serve`` (5.x) cannot take ``video_mode="video_url"`` for Qwen2.5-VL: it treats the
model as audio-capable and tries to load the MP4's audio track, which needs torchcodec (HTTP 500).
Use the default ``frames`` mode there; vLLM and SGLang take both.
"""
from __future__ import annotations

import base64
import logging
import os
from typing import Any

import numpy as np

from mvx_tasks.video_decoder import VideoClip

from ._common import sample_window, window_bounds

__all__ = ["EndpointVideoReader", "encode_jpeg", "encode_mp4"]

log = logging.getLogger(__name__)
BACKEND = "video_reader/endpoint"


def encode_jpeg(frame: np.ndarray, quality: int = 90) -> str:
    """An RGB frame as a ``data:image/jpeg;base64,...`` URL."""
    import cv2

    ok, buf = cv2.imencode(".jpg", frame[:, :, ::-1], [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return "data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def encode_mp4(frames: np.ndarray, fps: float) -> str:
    """RGB frames as a ``data:video/mp4;base64,...`` URL (MPEG-4 Part 2 via PyAV, even sizes)."""
    import io

    import av

    h, w = frames.shape[1] // 2 * 2, frames.shape[2] // 2 * 2
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=max(1, int(round(fps))))
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        for f in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(f[:h, :w]), format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return "data:video/mp4;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class EndpointVideoReader:
    """Answers a query about one window of one video through ``/v1/chat/completions``."""

    #: options that cannot take effect, with the reason (rejected when the agent is built)
    REJECTED_OPTIONS = {"n_frames": "the video_reader tool's own n_frames argument (chosen per call by the planner, "
                                    "default 8, at most 64) decides how many frames are read"}

    def __init__(self, base_url: str = "http://127.0.0.1:8000/v1", model: str = "Qwen/Qwen2.5-VL-7B-Instruct",
                 api_key_env: str = "SAMA_READER_API_KEY", max_tokens: int = 512,
                 video_mode: str = "frames", jpeg_quality: int = 90, timeout: float = 120.0,
                 max_retries: int = 4, backoff: float = 1.0, seed: int = 42,
                 system_prompt: str | None = None, max_in_flight: int | None = None,
                 requests_per_minute: int | None = None) -> None:
        if video_mode not in {"frames", "video_url"}:
            raise ValueError(f"{BACKEND}: video_mode must be 'frames' or 'video_url', not {video_mode!r}")
        self.base_url, self.model, self.api_key_env = base_url, model, api_key_env
        self.max_tokens, self.video_mode = int(max_tokens), video_mode
        self.jpeg_quality, self.timeout = int(jpeg_quality), float(timeout)
        self.max_retries, self.backoff, self.seed = int(max_retries), float(backoff), int(seed)
        self.system_prompt = system_prompt
        self.max_in_flight, self.requests_per_minute = max_in_flight, requests_per_minute
        self._client: Any = None
        self._api: Any = None

    @property
    def client(self) -> Any:
        """The real ``openai`` client, built on first use (its own retries off: we back off ourselves)."""
        if self._client is None:
            from openai import OpenAI

            from sama_model.trace import register_secret

            key = os.environ.get(self.api_key_env)
            register_secret(key)  # never in a trace, even inside an error message
            key = key or "EMPTY"  # vLLM / SGLang accept any key by default
            self._client = OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout, max_retries=0)
        return self._client

    def _content(self, frames: np.ndarray, times: np.ndarray, query: str, start: float, end: float) -> list[dict]:
        text = (f"The {'video' if self.video_mode == 'video_url' else 'images'} show {len(frames)} frames sampled "
                f"from {start:.1f}s to {end:.1f}s of one video (frame times: "
                f"{', '.join(f'{t:.1f}s' for t in times)}). {query.strip()}")
        if self.video_mode == "video_url":
            span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
            fps = (len(times) - 1) / span if span > 0 else 1.0
            parts = [{"type": "video_url", "video_url": {"url": encode_mp4(frames, fps)}}]
        else:
            parts = [{"type": "image_url", "image_url": {"url": encode_jpeg(f, self.jpeg_quality)}} for f in frames]
        return parts + [{"type": "text", "text": text}]

    @property
    def api(self) -> Any:
        """The run's :class:`~sama_model.chat_api.ChatAPI` for this endpoint (built on first use)."""
        if self._api is None:
            from sama_model.chat_api import ChatAPI, limiter_for

            self._api = ChatAPI(self.client, self.model, self.base_url, label=f"{BACKEND}: {self.base_url}",
                                max_retries=self.max_retries, backoff=self.backoff,
                                limiter=limiter_for(self.base_url, self.model, self.max_in_flight,
                                                    self.requests_per_minute))
        return self._api

    def _complete(self, messages: list[dict]) -> Any:
        from sama_model.chat_api import ChatAPIError

        try:
            resp, events = self.api.call(messages=messages, temperature=0, seed=self.seed, max_tokens=self.max_tokens)
        except ChatAPIError as exc:
            raise RuntimeError(str(exc)) from None
        for event in events:
            log.warning("%s: adapted to the server: %s", BACKEND, event["action"] if "action" in event else event)
        return resp, events

    def read(self, clip: VideoClip, query: str, window=(None, None), n_frames: int | None = None) -> dict:
        start, end = window_bounds(clip, window)
        frames, times, _ = sample_window(clip, int(n_frames or 8), (start, end))
        if len(frames) == 0:
            return {"answer": "", "window": [start, end], "frames_used": 0, "error": "no frames in window"}
        messages: list[dict] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": self._content(frames, times, query, start, end)})
        from sama_model.chat_api import usage_of

        resp, events = self._complete(messages)
        answer = (resp.choices[0].message.content or "").strip() if resp.choices else ""
        out = {"answer": answer, "window": [round(start, 3), round(end, 3)], "frames_used": int(len(frames)),
               "timestamps": [round(float(t), 3) for t in times], "model": self.model, "usage": usage_of(resp)}
        if events:
            out["adaptations"] = events
        return out
