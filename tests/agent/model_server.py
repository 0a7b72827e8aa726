"""A loopback model server: the OpenAI chat-completions and Anthropic messages APIs on
127.0.0.1, answering with scripted replies, so tests drive the real LangChain clients (and
their SDKs: HTTP, retries, parsing, usage) without a network or a key.

Replies are queued with `enqueue` (or computed by `responder` when the queue is empty); every
request received is kept. The server runs in threads of the test process, so a client in a
subprocess reaches it through `openai_url` / `anthropic_url` and the test counts its requests.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MAX_BODY = 64 << 20


@dataclass
class Reply:
    """One scripted assistant reply."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    raw_arguments: list[str] | None = None
    input_tokens: int = 100
    output_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    finish: str | None = None
    model: str | None = None


@dataclass
class HttpError:
    """An error response (the SDKs retry 429 and 5xx)."""

    status: int
    body: str = ""
    retry_after: float | None = 0


@dataclass
class RawBody:
    """A 200 response with exactly this body (malformed replies)."""

    text: str


@dataclass
class Request:
    """What the server received."""

    api: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Answer = Reply | HttpError | RawBody
_ids = itertools.count(1)


def _arguments(reply: Reply) -> list[str]:
    if reply.raw_arguments is not None:
        return list(reply.raw_arguments)
    return [json.dumps(args) for _, args in reply.tool_calls]


def openai_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion object as the OpenAI API returns it."""
    calls = [{"id": f"call_{next(_ids)}", "type": "function",
              "function": {"name": name, "arguments": arguments}}
             for (name, _), arguments in zip(reply.tool_calls, _arguments(reply), strict=True)]
    finish = reply.finish or ("tool_calls" if calls else "stop")
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
        "model": reply.model or request.get("model", "model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
                  "total_tokens": reply.input_tokens + reply.output_tokens,
                  "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}},
    }


def anthropic_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    """A message object as the Anthropic API returns it (input_tokens excludes the cache)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for (name, _), arguments in zip(reply.tool_calls, _arguments(reply), strict=True):
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name,
                        "input": json.loads(arguments)})
    finish = {"length": "max_tokens"}.get(reply.finish or "", reply.finish)
    return {
        "id": f"msg_{next(_ids)}", "type": "message", "role": "assistant",
        "model": reply.model or request.get("model", "model"), "content": content,
        "stop_reason": finish or ("tool_use" if reply.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens - reply.cached_tokens
                  - reply.cache_write_tokens,
                  "output_tokens": reply.output_tokens,
                  "cache_read_input_tokens": reply.cached_tokens,
                  "cache_creation_input_tokens": reply.cache_write_tokens},
    }


def error_body(api: str, status: int) -> str:
    if api == "anthropic":
        return json.dumps({"type": "error", "error": {"type": "api_error",
                                                      "message": f"scripted {status}"}})
    return json.dumps({"error": {"message": f"scripted {status}", "type": "server_error",
                                 "code": status}})


class LoopbackModelServer:
    """Serves queued answers to OpenAI and Anthropic clients on 127.0.0.1."""

    def __init__(self) -> None:
        self.responder: Callable[[Request], Answer] | None = None
        self._queue: list[Answer] = []
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def enqueue(self, *answers: Answer) -> None:
        with self._lock:
            self._queue.extend(answers)

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def answer(self, request: Request) -> Answer:
        """Record the request and pick its answer (queue first, then the responder)."""
        with self._lock:
            self._requests.append(request)
            if self._queue:
                return self._queue.pop(0)
        if self.responder is not None:
            return self.responder(request)
        return HttpError(500, json.dumps({"error": {"message": "script exhausted: no reply "
                                                    "queued for this request"}}), None)

    def start(self) -> LoopbackModelServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, daemon=True,
                                        name="loopback-model-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(owner: LoopbackModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            api = _api_of(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if api is None or length > MAX_BODY:
                self._send(404 if api is None else 413, json.dumps({"error": "not served"}))
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, json.dumps({"error": {"message": "body is not JSON"}}))
                return
            if body.get("stream"):
                self._send(400, json.dumps({"error": {"message": "streaming is not served"}}))
                return
            request = Request(api, self.path, dict(self.headers.items()), body)
            self._reply(api, owner.answer(request), body)

        def _reply(self, api: str, answer: Answer, body: dict[str, Any]) -> None:
            if isinstance(answer, HttpError):
                headers = {} if answer.retry_after is None else {
                    "Retry-After": str(answer.retry_after)}
                self._send(answer.status, answer.body or error_body(api, answer.status),
                           headers)
            elif isinstance(answer, RawBody):
                self._send(200, answer.text)
            else:
                build = openai_body if api == "openai" else anthropic_body
                self._send(200, json.dumps(build(answer, body)))

        def _send(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _api_of(path: str) -> str | None:
    clean = path.split("?", 1)[0].rstrip("/")
    if clean.endswith("/chat/completions"):
        return "openai"
    if clean.endswith("/messages"):
        return "anthropic"
    return None


@pytest.fixture
def model_server() -> Iterator[LoopbackModelServer]:
    """A started loopback model server, stopped at teardown."""
    with LoopbackModelServer() as server:
        yield server
