"""A local OpenAI-compatible chat endpoint that replays scripted responses (for tests, the
concurrency benchmark and offline dry runs of the ``openai`` planner).

Each request is answered by a responder: a function of the parsed request body returning
``(status, json_body)`` or ``(status, json_body, response_headers)``. Helpers build chat-completion
bodies with tool calls or text. Requests (body, headers, arrival time) are recorded for
inspection, and the server measures how many requests it was serving at once (``peak``): the
faults a real server will not produce on demand (429 with ``Retry-After``, 5xx, parameter
rejections, slow replies) are tested against it.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

Responder = Callable[[dict[str, Any]], tuple]


def completion(content: str | None = None, tool_calls: Iterable[tuple[str, dict[str, Any] | str]] = (),
               prompt_tokens: int = 100, completion_tokens: int = 20) -> dict[str, Any]:
    """A chat.completion body; ``tool_calls`` are (name, arguments) with arguments a dict or raw string."""
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
             for i, (name, args) in enumerate(tool_calls)]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-local", "object": "chat.completion", "created": 0, "model": "local",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def error(status: int, message: str = "error", param: str | None = None,
          headers: dict[str, str] | None = None) -> tuple:
    """An error reply in OpenAI's shape (``param`` names a rejected parameter, as OpenAI's 400s do)."""
    body = {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                      "param": param, "code": status}}
    return (status, body, headers) if headers else (status, body)


def scripted(responses: list[tuple[int, dict[str, Any]] | dict[str, Any]]) -> Responder:
    """Replay ``responses`` in order (a bare dict means HTTP 200); past the end, HTTP 500."""
    queue = list(responses)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> tuple:
        with lock:
            if not queue:
                return error(500, "script exhausted")
            r = queue.pop(0)
        return r if isinstance(r, tuple) else (200, r)

    return respond


def tools_then_answer(tool_calls: Iterable[tuple[str, dict[str, Any]]], answer: str) -> Responder:
    """A planner: the first turn calls ``tool_calls`` at once; once their results are in, ``answer``."""
    calls = list(tool_calls)

    def respond(body: dict[str, Any]) -> tuple:
        if not any(m.get("role") == "tool" for m in body.get("messages", [])):
            return 200, completion(tool_calls=calls)
        return 200, completion(content=answer)

    return respond


class FakeChatEndpoint:
    """``with FakeChatEndpoint(responder, latency=0.05) as ep: ep.base_url``."""

    def __init__(self, responder: Responder, latency: float = 0.0) -> None:
        self.responder, self.latency = responder, latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []  # arrival (time.monotonic) of each request
        self.in_flight = 0
        self.peak = 0  # most requests being served at the same time
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                    outer.times.append(time.monotonic())
                    outer.in_flight += 1
                    outer.peak = max(outer.peak, outer.in_flight)
                try:
                    if outer.latency:
                        time.sleep(outer.latency)
                    reply = outer.responder(body)
                finally:
                    with outer._lock:
                        outer.in_flight -= 1
                status, payload = reply[0], reply[1]
                extra = reply[2] if len(reply) > 2 else {}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (extra or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeChatEndpoint":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
