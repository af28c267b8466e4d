"""A local OpenAI-compatible chat endpoint that replays scripted responses (for tests, the
concurrency benchmark and offline dry runs of the ``openai`` planner).

Each request is answered by a responder: a function of the parsed request body returning
``(status, json_body)``. Helpers build chat-completion bodies with tool calls or text.
Requests (body and headers) are recorded for inspection.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

Responder = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


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


def error(status: int, message: str = "error") -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": "server_error", "code": status}}


def scripted(responses: list[tuple[int, dict[str, Any]] | dict[str, Any]]) -> Responder:
    """Replay ``responses`` in order (a bare dict means HTTP 200); past the end, HTTP 500."""
    queue = list(responses)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with lock:
            if not queue:
                return error(500, "script exhausted")
            r = queue.pop(0)
        return r if isinstance(r, tuple) else (200, r)

    return respond


class FakeChatEndpoint:
    """``with FakeChatEndpoint(responder, latency=0.05) as ep: ep.base_url``."""

    def __init__(self, responder: Responder, latency: float = 0.0) -> None:
        self.responder, self.latency = responder, latency
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(body)
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                if outer.latency:
                    time.sleep(outer.latency)
                status, payload = outer.responder(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
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
