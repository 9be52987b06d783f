"""A small OpenAI-compatible HTTP server for tests, on 127.0.0.1 in a daemon thread.

It serves POST /v1/chat/completions (plain and streaming SSE), GET /v1/models and
POST /v1/embeddings (vectors from the text's hash, or from `embedding_fn`), records
every request it receives (method, path, headers with lower-case names, json body),
and can be told to misbehave: reject a response
format, fail the first calls with given statuses, answer slowly, or want a key. The real
`openai` SDK talks to it over real HTTP.

    with FakeOpenAIServer(responder=lambda body: "Hello.") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")

A `responder(body) -> str | dict` decides each chat answer: a str is the
assistant's content; a dict may set content, finish_reason, usage (merged over
the computed usage), status with error (an HTTP error answer), headers (sent with
an error answer, e.g. Retry-After), raw as (content type, body) to send a body that
is not a chat completion, and delay. A streamed answer may also set prompt_progress
(llama.cpp's reading-progress events, sent before the first piece), piece_delay
(seconds between pieces) and stall (seconds of silence after the first piece).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.served import Served

API_KEY = "sk-test-NEVER-ON-DISK-42"   # the key tests set; it must never reach a file
Responder = Callable[[dict[str, Any]], "str | dict[str, Any]"]


def default_responder(body: dict[str, Any]) -> str:
    """Echo the last message: as {"echo": ...} JSON when JSON was asked for, else as text."""
    messages = body.get("messages") or [{}]
    last = str(messages[-1].get("content", ""))
    if (body.get("response_format") or {}).get("type") in ("json_schema", "json_object"):
        return json.dumps({"echo": last})
    return f"echo: {last}"


def _words(text: str) -> int:
    return len(text.split())


def _embedding(text: str, dim: int) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [round((digest[i % len(digest)] - 128) / 128, 6) for i in range(dim)]


class FakeOpenAIServer(Served):
    """An OpenAI-compatible server on 127.0.0.1:0 that records what it receives.

    Options are plain attributes, so a test may change them on a running server.
    """

    thread_name = "fake-openai"

    def __init__(self, responder: Responder | None = None, *, model: str = "fake-model",
                 reject_json_schema: bool = False, reject_json_object: bool = False,
                 fail_first: list[int] | tuple[int, ...] = (), delay: float = 0.0,
                 embedding_dim: int = 8,
                 embedding_fn: Callable[[str], list[float]] | None = None,
                 api_key: str = ""):
        self.responder: Responder = responder or default_responder
        self.model = model
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.fail_first = list(fail_first)
        self.delay = delay
        self.embedding_dim = embedding_dim
        self.embedding_fn = embedding_fn     # text -> vector; default: from the text's hash
        self.api_key = api_key               # when set, a request without it is a 401
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.streams_ended = threading.Semaphore(0)   # released as each stream ends
        self.streams_abandoned = 0                    # by a client that left mid-stream
        self._lock = threading.Lock()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, ending in /v1."""
        return f"{self.origin}/v1"


    # -- what the handler asks of the server -------------------------------

    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers,
                                  "json": body})

    def next_failure(self) -> int | None:
        with self._lock:
            return self.fail_first.pop(0) if self.fail_first else None

    def listed(self) -> list[str]:
        """The model names GET /v1/models lists."""
        return [self.model]

    def answering(self, body: dict[str, Any]) -> str:
        """The model an answer says answered: the one asked for."""
        return str(body.get("model") or self.model)

    def get_answer(self, path: str) -> tuple[int, dict[str, Any]] | None:
        """(status, JSON body) for a GET route of a server of another kind (llama.cpp's
        /props, tests/support/home_servers.py), None for the routes every server has."""
        return None

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The responder's answer as a dict with content, finish_reason, usage and
        optionally status/error."""
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema" and self.reject_json_schema:
            return {"status": 400, "error": "response_format type 'json_schema' is not supported",
                    "param": "response_format"}
        if kind == "json_object" and self.reject_json_object:
            return {"status": 400, "error": "response_format type 'json_object' is not supported",
                    "param": "response_format"}
        answer = self.responder(body)
        if isinstance(answer, str):
            answer = {"content": answer}
        answer = dict(answer)
        self.wait(float(answer.get("delay", 0.0)))
        content = str(answer.get("content", ""))
        prompt = sum(_words(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt, "completion_tokens": _words(content),
                 "prompt_tokens_details": {"cached_tokens": 0}}
        usage.update(answer.get("usage") or {})
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        answer.update(content=content, usage=usage,
                      finish_reason=answer.get("finish_reason", "stop"))
        return answer


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.0"   # one request per connection: the body ends at close

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # keep test output clean

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            self.fake.streams_abandoned += 1   # the client gave up (a timeout test)
            self.fake.streams_ended.release()

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _refused_key(self) -> bool:
        """Answer 401 when the server wants a key (`api_key`) and the request lacks it."""
        if self.fake.api_key and self.headers.get("Authorization") != f"Bearer {self.fake.api_key}":
            self._error(401, "Invalid API Key")
            return True
        return False

    def do_GET(self) -> None:
        self.fake.record("GET", self.path, self._headers(), None)
        if self._refused_key():
            return
        other = self.fake.get_answer(self.path)
        if other is not None:
            self._json(*other)
        elif self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
                for name in self.fake.listed()]})
        else:
            self._error(404, f"no route for GET {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        self.fake.record("POST", self.path, self._headers(), body)
        if self._refused_key():
            return None
        if body is None:
            return self._error(400, "request body is not JSON")
        failure = self.fake.next_failure()
        self.fake.wait(self.fake.delay)
        if failure is not None:
            return self._error(failure, f"simulated failure {failure}")
        path = self.path.rstrip("/")
        if path == "/v1/chat/completions":
            self._chat(body)
        elif path == "/v1/embeddings":
            self._embeddings(body)
        else:
            self._error(404, f"no route for POST {self.path}")

    def _chat(self, body: dict[str, Any]) -> None:
        answer = self.fake.chat_answer(body)
        if "raw" in answer:       # a body that is not a chat completion: (content type, text)
            kind, text = answer["raw"]
            data = str(text).encode("utf-8")
            self.send_response(int(answer.get("status", 200)))
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (answer.get("headers") or {}).items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(data)
            return None
        if "status" in answer:
            return self._error(int(answer["status"]), str(answer.get("error", "error")),
                               param=answer.get("param"), headers=answer.get("headers"))
        model = self.fake.answering(body)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return self._stream(model, answer, include_usage)
        self._json(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": answer["finish_reason"],
                         "message": {"role": "assistant", "content": answer["content"]}}],
            "usage": answer["usage"],
        })

    def _stream(self, model: str, answer: dict[str, Any], include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                "model": model}
        content = answer["content"]
        for progress in answer.get("prompt_progress") or []:
            self._event({**base, "prompt_progress": progress, "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": None},
                 "finish_reason": None}]})
        pieces = [content[i:i + 5] for i in range(0, len(content), 5)]
        for n, piece in enumerate(pieces):
            delta = {"role": "assistant", "content": piece} if n == 0 else {"content": piece}
            self._event({**base, "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": None}]})
            self.fake.wait(float(answer.get("stall", 0.0)) if n == 0 else 0.0)
            self.fake.wait(float(answer.get("piece_delay", 0.0)))
        self._event({**base, "choices": [{"index": 0, "delta": {},
                                          "finish_reason": answer["finish_reason"]}]})
        if include_usage:
            self._event({**base, "choices": [], "usage": answer["usage"]})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.fake.streams_ended.release()

    def _event(self, data: dict[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(data).encode("utf-8") + b"\n\n")
        self.wfile.flush()

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs or []]
        as_base64 = body.get("encoding_format") == "base64"   # the SDK's default
        data = []
        for i, text in enumerate(texts):
            vector = (self.fake.embedding_fn(text) if self.fake.embedding_fn
                      else _embedding(text, self.fake.embedding_dim))
            if as_base64:
                packed = struct.pack(f"<{len(vector)}f", *vector)
                vector = base64.b64encode(packed).decode("ascii")  # type: ignore[assignment]
            data.append({"object": "embedding", "index": i, "embedding": vector})
        tokens = sum(_words(t) for t in texts)
        self._json(200, {"object": "list", "data": data, "model": body.get("model", ""),
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _json(self, status: int, payload: dict[str, Any],
              headers: dict[str, Any] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, *, param: str | None = None,
               headers: dict[str, Any] | None = None) -> None:
        kind = "invalid_request_error" if status < 500 else "server_error"
        self._json(status, {"error": {"message": message, "type": kind, "param": param,
                                      "code": None}}, headers)
