"""Video Reader on an OpenAI-compatible endpoint (vLLM / SGLang serving e.g. Qwen2.5-VL-7B-Instruct).

Serving the reader in its own process lets a GPU server batch many agents' questions. Frames of
the query window travel as base64 JPEG ``image_url`` parts (or, with ``video_mode="video_url"``,
as one MP4 data URL that vLLM decodes itself). Decoding is greedy (temperature 0, seed 42, as in
the paper); transient failures are retried with exponential backoff. The API key is read from the
environment variable named by ``api_key_env`` and never logged.
"""
from __future__ import annotations

import base64
import logging
import os
import random
import time
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
                 system_prompt: str | None = None) -> None:
        if video_mode not in {"frames", "video_url"}:
            raise ValueError(f"{BACKEND}: video_mode must be 'frames' or 'video_url', not {video_mode!r}")
        self.base_url, self.model, self.api_key_env = base_url, model, api_key_env
        self.max_tokens, self.video_mode = int(max_tokens), video_mode
        self.jpeg_quality, self.timeout = int(jpeg_quality), float(timeout)
        self.max_retries, self.backoff, self.seed = int(max_retries), float(backoff), int(seed)
        self.system_prompt = system_prompt
        self._client: Any = None

    @property
    def client(self) -> Any:
        """The real ``openai`` client, built on first use (its own retries off: we back off ourselves)."""
        if self._client is None:
            from openai import OpenAI

            key = os.environ.get(self.api_key_env) or "EMPTY"  # vLLM / SGLang accept any key by default
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

    def _complete(self, messages: list[dict]) -> Any:
        import openai

        retryable = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                     openai.InternalServerError)
        for attempt in range(self.max_retries + 1):
            try:
                return self.client.chat.completions.create(model=self.model, messages=messages, temperature=0,
                                                           seed=self.seed, max_tokens=self.max_tokens)
            except retryable as exc:
                if attempt == self.max_retries:
                    raise RuntimeError(f"{BACKEND}: {self.base_url} failed after {attempt + 1} attempts: "
                                       f"{type(exc).__name__}: {str(exc)[:200]}") from exc
                delay = self.backoff * (2 ** attempt) * (1 + 0.1 * random.random())
                log.warning("%s: %s (attempt %d), retrying in %.1fs", BACKEND, type(exc).__name__, attempt + 1, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    def read(self, clip: VideoClip, query: str, window=(None, None), n_frames: int | None = None) -> dict:
        start, end = window_bounds(clip, window)
        frames, times, _ = sample_window(clip, int(n_frames or 8), (start, end))
        if len(frames) == 0:
            return {"answer": "", "window": [start, end], "frames_used": 0, "error": "no frames in window"}
        messages: list[dict] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        messages.append({"role": "user", "content": self._content(frames, times, query, start, end)})
        resp = self._complete(messages)
        answer = (resp.choices[0].message.content or "").strip() if resp.choices else ""
        return {"answer": answer, "window": [round(start, 3), round(end, 3)], "frames_used": int(len(frames)),
                "timestamps": [round(float(t), 3) for t in times], "model": self.model}
