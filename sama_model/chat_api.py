"""One way to call an OpenAI-compatible chat endpoint, shared by the planner and the endpoint backends.

Real servers differ from the API the code was written against, so a call here adapts once per
run and says so:

* **Parameter rejection.** A 400/422 naming a parameter the request carried (``max_tokens``,
  ``temperature``, ``seed``, ``tool_choice``, ``reasoning_effort``, ...) is retried without it, or
  with its replacement (``max_tokens`` -> ``max_completion_tokens`` and back); the change is
  remembered for the rest of the run (the :class:`ChatAPI` object lives as long as the agent) and
  reported once as an *adaptation event* that the caller writes into the question's trace.
* **Rate limits.** 429 waits what ``Retry-After`` (or ``retry-after-ms``) says, else exponential
  backoff; 5xx, timeouts and connection errors back off too.
* **Run-wide caps.** A :class:`RequestLimiter` caps requests in flight and requests per minute for
  every worker thread that shares the object (one per endpoint and model per process).
* **Usage.** prompt, completion, reasoning and cached tokens, from OpenAI's ``*_tokens_details``
  and DeepSeek's ``prompt_cache_hit_tokens``.
"""
from __future__ import annotations

import collections
import email.utils
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["ChatAPI", "RequestLimiter", "ChatAPIError", "usage_of", "retry_after", "rejected_parameter",
           "USAGE_KEYS", "limiter_for"]

#: token counts kept per call (reasoning tokens are part of completion tokens, cached part of prompt)
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
#: parameter -> what replaces it when a server rejects it (None: drop it)
REPLACEMENTS: dict[str, str | None] = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens",
                                       "temperature": None, "seed": None, "tool_choice": None,
                                       "reasoning_effort": None, "parallel_tool_calls": None, "top_p": None}
#: the longest Retry-After honoured (a server asking for more fails the call instead of stalling the run)
MAX_RETRY_AFTER = 600.0


class ChatAPIError(RuntimeError):
    """The endpoint could not be used for this call (after retries, or refused outright)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def usage_of(resp: Any) -> dict[str, int]:
    """Prompt, completion, reasoning and cached tokens of a response (zeros for what it omits)."""
    u = getattr(resp, "usage", None)
    if u is None:
        return {}

    def get(obj: Any, name: str) -> int:
        if obj is None:
            return 0
        v = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if v is None and not isinstance(obj, dict):  # fields an SDK model does not declare (DeepSeek's)
            v = (getattr(obj, "model_extra", None) or {}).get(name)
        return int(v or 0)

    cdet = getattr(u, "completion_tokens_details", None)
    pdet = getattr(u, "prompt_tokens_details", None)
    cached = get(pdet, "cached_tokens") or get(u, "prompt_cache_hit_tokens")
    return {"prompt_tokens": get(u, "prompt_tokens"), "completion_tokens": get(u, "completion_tokens"),
            "reasoning_tokens": get(cdet, "reasoning_tokens"), "cached_tokens": cached}


def retry_after(exc: Any) -> float | None:
    """Seconds a 429/503 response asks to wait (``retry-after-ms``, ``retry-after`` in seconds or as
    an HTTP date), or None."""
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None) or {}
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def rejected_parameter(exc: Any, sent: dict[str, Any]) -> str | None:
    """The request parameter a 400/422 error names (its ``param`` field, else the message), if it is
    one we know how to do without."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    if isinstance(param, str) and param in sent and param in REPLACEMENTS:
        return param
    text = str(getattr(exc, "message", "") or exc)
    hits = [(m.start(), p) for p in sent if p in REPLACEMENTS
            for m in [re.search(rf"(?<![A-Za-z_]){re.escape(p)}(?![A-Za-z_])", text)] if m]
    return min(hits)[1] if hits else None


class RequestLimiter:
    """At most ``max_in_flight`` requests at once and ``per_minute`` started in any 60 s window,
    across every thread that shares this object. Measures the peak it let through."""

    def __init__(self, max_in_flight: int | None = None, per_minute: int | None = None, window: float = 60.0) -> None:
        self.max_in_flight = int(max_in_flight) if max_in_flight else None
        self.per_minute = int(per_minute) if per_minute else None
        self.window = float(window)  # seconds of the rate window (60; shorter only in tests)
        self._slots = threading.BoundedSemaphore(self.max_in_flight) if self.max_in_flight else None
        self._starts: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def _wait_rate(self) -> None:
        if not self.per_minute:
            return
        while True:
            with self._lock:
                now = time.monotonic()
                while self._starts and now - self._starts[0] >= self.window:
                    self._starts.popleft()
                if len(self._starts) < self.per_minute:
                    self._starts.append(now)
                    return
                wait = self.window - (now - self._starts[0])
            time.sleep(max(0.01, wait))

    def __enter__(self) -> "RequestLimiter":
        if self._slots is not None:
            self._slots.acquire()
        self._wait_rate()
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.in_flight -= 1
        if self._slots is not None:
            self._slots.release()


_LIMITERS: dict[tuple, RequestLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(base_url: str | None, model: str, max_in_flight: int | None, per_minute: int | None) -> RequestLimiter:
    """The process-wide limiter of one endpoint and model with these caps (every worker, every
    backend instance and the planner share it when they name the same endpoint)."""
    key = (base_url or "", model, max_in_flight or 0, per_minute or 0)
    with _LIMITERS_LOCK:
        if key not in _LIMITERS:
            _LIMITERS[key] = RequestLimiter(max_in_flight, per_minute)
        return _LIMITERS[key]


@dataclass
class ChatAPI:
    """Chat completions against one endpoint and model, with the run's adaptations remembered.

    ``call`` returns ``(response, events)``: ``events`` are the adaptations this call made (each
    made once per run), for the caller to record in the question's trace.
    """

    client: Any
    model: str
    base_url: str | None = None
    label: str = "endpoint"
    max_retries: int = 5
    backoff: float = 1.0
    backoff_max: float = 30.0
    limiter: RequestLimiter = field(default_factory=RequestLimiter)
    sleep: Callable[[float], None] = time.sleep
    #: parameter -> replacement name, or None when dropped; shared by all threads for the run
    adapted: dict[str, str | None] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def _apply(self, params: dict[str, Any]) -> dict[str, Any]:
        out = dict(params)
        with self._lock:
            adapted = dict(self.adapted)
        for name, repl in adapted.items():
            if name in out:
                value = out.pop(name)
                if repl and repl not in out and repl not in adapted:
                    out[repl] = value
        return out

    def _adapt(self, name: str, status: int, message: str) -> dict[str, Any] | None:
        """Remember that ``name`` is rejected; the event if this thread made the change first."""
        with self._lock:
            if name in self.adapted:
                return None
            repl = REPLACEMENTS.get(name)
            if repl in self.adapted:  # both spellings rejected: drop the limit altogether
                repl = None
            self.adapted[name] = repl
            event = {"kind": "parameter", "endpoint": self.label, "parameter": name, "replacement": repl,
                     "action": f"retry with {repl}" if repl else "retry without it", "status": status,
                     "message": message[:300]}
            self.events.append(event)
            return event

    def call(self, **params: Any) -> tuple[Any, list[dict[str, Any]]]:
        import openai

        events: list[dict[str, Any]] = []
        attempt, adaptations = 0, 0
        last: Exception | None = None
        while True:
            kwargs = self._apply(params)
            try:
                with self.limiter:
                    return self.client.chat.completions.create(model=self.model, **kwargs), events
            except openai.RateLimitError as exc:
                last, wait = exc, retry_after(exc)
            except (openai.InternalServerError, openai.APIConnectionError) as exc:  # incl. timeouts
                last, wait = exc, retry_after(exc) if isinstance(exc, openai.InternalServerError) else None
            except openai.APIStatusError as exc:
                if exc.status_code >= 500:
                    last, wait = exc, None
                elif exc.status_code in (400, 422) and adaptations < len(REPLACEMENTS):
                    name = rejected_parameter(exc, kwargs)
                    if name is None:
                        raise ChatAPIError(f"{self.label} refused the request (HTTP {exc.status_code}): "
                                           f"{str(exc)[:300]}", exc.status_code) from None
                    adaptations += 1
                    event = self._adapt(name, exc.status_code, str(exc))
                    if event is not None:
                        events.append(event)
                    continue  # not a transient failure: retry at once, without counting an attempt
                else:
                    raise ChatAPIError(f"{self.label} refused the request (HTTP {exc.status_code}): "
                                       f"{str(exc)[:300]}", exc.status_code) from None
            if attempt >= self.max_retries:
                raise ChatAPIError(f"{self.label} unreachable after {attempt + 1} attempts: "
                                   f"{type(last).__name__}: {str(last)[:200]}")
            if wait is not None:
                if wait > MAX_RETRY_AFTER:
                    raise ChatAPIError(f"{self.label} asked to retry after {wait:.0f}s (more than "
                                       f"{MAX_RETRY_AFTER:.0f}s): {str(last)[:200]}", 429)
                delay = wait
            else:
                delay = min(self.backoff_max, self.backoff * 2 ** attempt) * (1 + 0.1 * random.random())
            self.sleep(delay)
            attempt += 1

    def describe(self) -> dict[str, Any]:
        """The run's protocol state (what was dropped or renamed), for trace configs."""
        with self._lock:
            return {"adapted": dict(self.adapted)}
