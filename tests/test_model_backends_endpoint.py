"""EndpointVideoReader against a local OpenAI-compatible HTTP server, through the real openai client."""
from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("openai")

from mvx_tasks.video_decoder import load_video  # noqa: E402
from sama_model.backends.models.endpoint_reader import EndpointVideoReader  # noqa: E402
from sama_model.tools.video_reader import VideoReaderBackend  # noqa: E402
from tiny_models import make_test_video  # noqa: E402


class _Server:
    """A /v1/chat/completions server that records requests and can fail the first N with HTTP 500."""

    def __init__(self, fail_first: int = 0) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.fail_first = fail_first
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if len(server.requests) <= server.fail_first:
                    self._send(500, {"error": {"message": "warming up", "type": "server_error"}})
                    return
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": " A red square moves. "}}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return load_video(make_test_video(tmp_path_factory.mktemp("vid") / "v.mp4", n_frames=24, fps=8))


def _parts(request: dict, kind: str) -> list[dict]:
    return [p for m in request["messages"] if isinstance(m["content"], list) for p in m["content"] if p["type"] == kind]


def test_every_requested_frame_reaches_the_server(clip, monkeypatch):
    monkeypatch.setenv("MVX_TEST_READER_KEY", "sk-test-123")
    server = _Server()
    try:
        reader = EndpointVideoReader(base_url=server.url, model="qwen2.5-vl-7b", api_key_env="MVX_TEST_READER_KEY")
        assert isinstance(reader, VideoReaderBackend)
        out = reader.read(clip, "What moves?", window=(1.0, 2.5), n_frames=7)
        assert out["answer"] == "A red square moves." and out["frames_used"] == 7 and out["window"] == [1.0, 2.5]
        req = server.requests[-1]
        images = _parts(req, "image_url")
        assert len(images) == 7
        assert all(p["image_url"]["url"].startswith("data:image/jpeg;base64,/9j/") for p in images)
        jpeg = base64.b64decode(images[0]["image_url"]["url"].split(",", 1)[1])
        assert jpeg[:2] == b"\xff\xd8"
        assert req["temperature"] == 0 and req["seed"] == 42 and req["model"] == "qwen2.5-vl-7b"
        assert server.headers[-1]["authorization"] == "Bearer sk-test-123"
        assert "1.0s to 2.5s" in _parts(req, "text")[0]["text"]
    finally:
        server.close()


def test_retries_with_backoff_then_succeeds(clip):
    server = _Server(fail_first=2)
    try:
        reader = EndpointVideoReader(base_url=server.url, model="m", backoff=0.01, max_retries=3)
        out = reader.read(clip, "What moves?", n_frames=3)
        assert out["answer"] == "A red square moves." and len(server.requests) == 3
        assert len(_parts(server.requests[-1], "image_url")) == 3
    finally:
        server.close()


def test_gives_up_with_a_clear_error(clip):
    server = _Server(fail_first=99)
    try:
        reader = EndpointVideoReader(base_url=server.url, model="m", backoff=0.01, max_retries=1)
        with pytest.raises(RuntimeError, match=r"video_reader/endpoint: http://127.0.0.1:\d+/v1 unreachable after 2 attempts"):
            reader.read(clip, "?", n_frames=2)
    finally:
        server.close()


def test_video_url_mode_sends_one_decodable_mp4(clip, tmp_path):
    server = _Server()
    try:
        reader = EndpointVideoReader(base_url=server.url, model="m", video_mode="video_url")
        reader.read(clip, "What moves?", n_frames=6)
        req = server.requests[-1]
        assert not _parts(req, "image_url")
        (video,) = _parts(req, "video_url")
        url = video["video_url"]["url"]
        assert url.startswith("data:video/mp4;base64,")
        path = tmp_path / "sent.mp4"
        path.write_bytes(base64.b64decode(url.split(",", 1)[1]))
        assert load_video(path).n_frames == 6
    finally:
        server.close()
