"""A small server speaking Anthropic's Messages API for tests, on 127.0.0.1 in a daemon
thread: FakeOpenAIServer's twin for the `anthropic` provider (same API, same habits).

It serves POST /v1/messages, plain and streaming (SSE: message_start,
content_block_start/delta/stop, message_delta with the usage, message_stop), and
records every request it receives (method, path, headers with lower-case names,
json body), so a test can see where `cache_control` sat. It checks what the real API
refuses (a role other than user or assistant, an empty text block, more than four
cache breakpoints, a tool_choice naming no tool, a key other than `api_key` when that
is set, in `x-api-key` or as the SDK sends it, `Authorization: Bearer`: 401) and can
be told to misbehave: fail the first calls with given statuses (429, 500, 529
overloaded...), or answer slowly.

    with FakeAnthropicServer(responder=lambda body: "Hello.") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-test")

The prompt cache is simulated: the prompt is laid out as the API caches it (tools,
then the system blocks, then each message's blocks), a token is a word, and the
server remembers the prefix up to each `cache_control` breakpoint it has seen. A
request whose prefix up to a breakpoint, or up to one of the 20 block boundaries
before one (as the API looks), was remembered reads those tokens from the cache (`cache_read_input_tokens`); the rest up
to its last breakpoint is written (`cache_creation_input_tokens`); `input_tokens` are
the others. Prefixes under `min_cache_tokens` are not cached, as the API's minimum.

A `responder(body) -> str | dict` decides each answer, as for FakeOpenAIServer: a str is
the answer's text (with a forced tool, the JSON of the tool's input); a dict may set
content, finish_reason ("length" or "max_tokens" for a cut answer), usage (merged over
the computed usage), status with error (an HTTP error answer, e.g. 529), headers, delay,
piece_delay and stall. `openai_shaped(responder)` lets a responder written for
FakeOpenAIServer (StoryServer, which answers like the offline model) answer here.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.support.served import Served

API_KEY = "sk-ant-test-NEVER-ON-DISK-42"   # the key tests set; it must never reach a file
Responder = Callable[[dict[str, Any]], "str | dict[str, Any]"]
MAX_BREAKPOINTS = 4
LOOKBACK = 20          # block boundaries looked at for a cached prefix, from a breakpoint back
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def _words(text: str) -> int:
    return len(text.split())


def block_text(content: Any) -> str:
    """The text of a message's or the system's content: a string, or its text blocks'."""
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool a request forces with tool_choice (None when it forces none)."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") != "tool":
        return None
    return next((t for t in body.get("tools") or [] if t.get("name") == choice.get("name")), None)


def default_responder(body: dict[str, Any]) -> str:
    """Echo the last message: as {"echo": ...} JSON when a tool is forced, else as text."""
    last = block_text((body.get("messages") or [{}])[-1].get("content", ""))
    return json.dumps({"echo": last}) if forced_tool(body) else f"echo: {last}"


def openai_body(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic request as the OpenAI chat request it stands for: the system as the
    first message, each message's text, the forced tool's schema as a json_schema
    response format."""
    system = block_text(body.get("system") or "")
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": m.get("role"), "content": block_text(m.get("content"))}
        for m in body.get("messages") or []]
    shaped: dict[str, Any] = {"model": body.get("model"), "messages": messages,
                              "max_tokens": body.get("max_tokens")}
    tool = forced_tool(body)
    if tool is not None:
        shaped["response_format"] = {"type": "json_schema", "json_schema": {
            "name": tool.get("name"), "schema": tool.get("input_schema") or {}}}
    return shaped


def openai_shaped(responder: Responder) -> Responder:
    """A responder written for FakeOpenAIServer (StoryServer) answering Anthropic requests."""
    return lambda body: responder(openai_body(body))


def cache_blocks(body: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """The prompt as the API caches it, block by block: (the block's identity, its
    tokens, whether a cache_control breakpoint ends it)."""
    blocks: list[tuple[str, int, bool]] = []

    def add(kind: str, block: Any, text: str) -> None:
        plain = {k: v for k, v in block.items() if k != "cache_control"} \
            if isinstance(block, dict) else block
        blocks.append((kind + json.dumps(plain, sort_keys=True), _words(text),
                       isinstance(block, dict) and "cache_control" in block))

    for tool in body.get("tools") or []:
        add("tool", tool, json.dumps(tool.get("input_schema") or {}) + str(tool.get("name")))
    system = body.get("system")
    for block in ([{"type": "text", "text": system}] if isinstance(system, str) and system
                  else system or []):
        add("system", block, block_text([block]))
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in ([{"type": "text", "text": content}] if isinstance(content, str)
                      else content or []):
            add(str(message.get("role")), block, block_text([block]))
    return blocks


def request_problem(body: dict[str, Any]) -> str:
    """What the real API would refuse in this request ("" when nothing)."""
    if not body.get("model") or not isinstance(body.get("max_tokens"), int):
        return "model and max_tokens are required"
    messages = body.get("messages") or []
    if not messages:
        return "messages: at least one message is required"
    for n, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{n}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not blocks or any(b.get("type") == "text" and not str(b.get("text", "")).strip()
                             for b in blocks):
            return f"messages.{n}: text content blocks must contain non-whitespace text"
    marks = sum(mark for _, _, mark in cache_blocks(body))
    if marks > MAX_BREAKPOINTS:
        return (f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {marks}.")
    choice = body.get("tool_choice")
    if choice and choice.get("type") == "tool" and forced_tool(body) is None:
        return f"tool_choice: no tool named {choice.get('name')!r}"
    temperature = body.get("temperature")
    if temperature is not None and not 0 <= temperature <= 1:
        return "temperature: Input should be less than or equal to 1"
    return ""


class FakeAnthropicServer(Served):
    """A Messages API server on 127.0.0.1:0 that records what it receives.

    Options are plain attributes, so a test may change them on a running server.
    """

    thread_name = "fake-anthropic"

    def __init__(self, responder: Responder | None = None, *, api_key: str | None = None,
                 fail_first: list[int] | tuple[int, ...] = (), delay: float = 0.0,
                 min_cache_tokens: int = 0):
        self.responder: Responder = responder or default_responder
        self.api_key = api_key          # when set, any other x-api-key is a 401
        self.fail_first = list(fail_first)
        self.delay = delay
        self.min_cache_tokens = min_cache_tokens
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.cache: set[str] = set()    # the prefixes remembered, by hash
        self.streams_ended = threading.Semaphore(0)   # released as each stream ends
        self._lock = threading.Lock()

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def base_url(self) -> str:
        """The URL to give an Anthropic client (it adds /v1/messages)."""
        return f"{self.origin}"


    @property
    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the Messages requests received, oldest first."""
        return [r["json"] for r in self.requests if r["path"].rstrip("/") == "/v1/messages"]

    # -- what the handler asks of the server -------------------------------

    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers,
                                  "json": body})

    def next_failure(self) -> int | None:
        with self._lock:
            return self.fail_first.pop(0) if self.fail_first else None

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def cache_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """input_tokens, cache_read_input_tokens and cache_creation_input_tokens of a
        request, remembering the prefixes up to its breakpoints."""
        blocks = cache_blocks(body)
        prefix, hashes, tokens = hashlib.sha256(str(body.get("model")).encode()), [], [0]
        for identity, count, _ in blocks:
            prefix.update(identity.encode("utf-8"))
            hashes.append(prefix.hexdigest())
            tokens.append(tokens[-1] + count)
        marks = [n for n, (_, _, mark) in enumerate(blocks) if mark]
        last = marks[-1] if marks else -1
        with self._lock:
            looked = {n for m in marks for n in range(max(0, m - LOOKBACK + 1), m + 1)}
            hits = sorted(n for n in looked if hashes[n] in self.cache)
            read = tokens[hits[-1] + 1] if hits else 0
            for n in marks:
                if tokens[n + 1] >= max(self.min_cache_tokens, 1):
                    self.cache.add(hashes[n])
        cacheable = tokens[last + 1] if last >= 0 and tokens[last + 1] >= self.min_cache_tokens \
            else 0
        written = max(0, cacheable - read)
        return {"input_tokens": tokens[-1] - read - written, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The responder's answer as a dict with content, stop_reason, usage and the tool
        it is the input of (or status/error)."""
        answer = self.responder(body)
        if isinstance(answer, str):
            answer = {"content": answer}
        answer = dict(answer)
        self.wait(float(answer.get("delay", 0.0)))
        if "status" in answer:
            return answer
        content = str(answer.get("content", ""))
        stop = {"length": "max_tokens", "stop": "end_turn"}.get(
            str(answer.get("finish_reason", "stop")), str(answer.get("finish_reason")))
        for sequence in body.get("stop_sequences") or []:
            if sequence in content:
                content, stop = content[: content.index(sequence)], "stop_sequence"
        words = content.split(" ")
        if len(content.split()) > int(body["max_tokens"]):
            content, stop = " ".join(words[: int(body["max_tokens"])]), "max_tokens"
        tool = forced_tool(body)
        usage = {**self.cache_usage(body), "output_tokens": _words(content)}
        usage.update(answer.get("usage") or {})
        return {**answer, "content": content, "usage": usage,
                "stop_reason": "tool_use" if tool is not None and stop == "end_turn" else stop,
                "tool": tool}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropicServer
    protocol_version = "HTTP/1.0"   # one request per connection: the body ends at close

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # keep test output clean

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            self.fake.streams_ended.release()    # the client gave up (a timeout test)

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        headers = self._headers()
        self.fake.record("POST", self.path, headers, body)
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.api_key is not None and given != self.fake.api_key:
            return self._error(401, "invalid x-api-key")
        if body is None:
            return self._error(400, "request body is not JSON")
        failure = self.fake.next_failure()
        self.fake.wait(self.fake.delay)
        if failure is not None:
            return self._error(failure, "Overloaded" if failure == 529
                               else f"simulated failure {failure}")
        if self.path.rstrip("/") != "/v1/messages":
            return self._error(404, f"no route for POST {self.path}")
        problem = request_problem(body)
        if problem:
            return self._error(400, problem)
        answer = self.fake.answer(body)
        if "status" in answer:
            return self._error(int(answer["status"]), str(answer.get("error", "error")),
                               headers=answer.get("headers"))
        if body.get("stream"):
            return self._stream(body, answer)
        self._json(200, {**self._message(body, answer), "content": [self._block(answer)]})

    @staticmethod
    def _message(body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        return {"id": "msg_fake", "type": "message", "role": "assistant",
                "model": body.get("model"), "stop_reason": answer["stop_reason"],
                "stop_sequence": None, "usage": answer["usage"]}

    @staticmethod
    def _block(answer: dict[str, Any]) -> dict[str, Any]:
        tool = answer["tool"]
        if tool is None:
            return {"type": "text", "text": answer["content"]}
        try:
            given = json.loads(answer["content"])
        except ValueError:
            given = {}
        return {"type": "tool_use", "id": "toolu_fake", "name": tool["name"],
                "input": given if isinstance(given, dict) else {}}

    def _stream(self, body: dict[str, Any], answer: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        usage = answer["usage"]
        start = {**self._message(body, answer), "content": [], "stop_reason": None,
                 "usage": {**usage, "output_tokens": 1}}
        self._event("message_start", {"type": "message_start", "message": start})
        block = self._block(answer)
        if block["type"] == "text":
            opening, kind, key, text = {"type": "text", "text": ""}, "text_delta", "text", \
                block["text"]
        else:
            opening = {**block, "input": {}}
            kind, key, text = "input_json_delta", "partial_json", json.dumps(block["input"])
        self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                            "content_block": opening})
        self._event("ping", {"type": "ping"})
        pieces = [text[i:i + 5] for i in range(0, len(text), 5)]
        for n, piece in enumerate(pieces):
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": kind, key: piece}})
            self.fake.wait(float(answer.get("stall", 0.0)) if n == 0 else 0.0)
            self.fake.wait(float(answer.get("piece_delay", 0.0)))
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": answer["stop_reason"], "stop_sequence": None}, "usage": usage})
        self._event("message_stop", {"type": "message_stop"})
        self.fake.streams_ended.release()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: ".encode() + json.dumps(data).encode("utf-8")
                         + b"\n\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any],
              headers: dict[str, Any] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, *, headers: dict[str, Any] | None = None) -> None:
        kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        self._json(status, {"type": "error", "error": {"type": kind, "message": message}},
                   headers)


@pytest.fixture
def fake_anthropic():
    """A started FakeAnthropicServer; reconfigure it through its attributes."""
    with FakeAnthropicServer() as server:
        yield server
