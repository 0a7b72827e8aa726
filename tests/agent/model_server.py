"""A loopback model server: the OpenAI chat-completions and Anthropic messages APIs on
127.0.0.1, answering with scripted replies, so tests drive the real LangChain clients (and
their SDKs: HTTP, retries, parsing, usage) without a network or a key.

Replies are queued with `enqueue` (or computed by `responder` when the queue is empty); every
request received is kept. The server runs in threads of the test process, so a client in a
subprocess reaches it through `openai_url` / `anthropic_url` and the test counts its requests.

Both APIs are served plain (JSON) and streamed (server-sent events, as the real APIs send them
when a request says `"stream": true`, e.g. under LangGraph's `stream_mode="messages"`). A request
that finds nothing to answer gets a 500 "script exhausted" that tells the SDK not to retry, so a
test whose script is too short fails at once instead of waiting through retries.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

MAX_BODY = 64 << 20  # bytes of one request body
MAX_CONNECTIONS = 64  # connections served at once (one thread each)
IDLE_SECONDS = 30.0  # an idle keep-alive connection is closed after this, freeing its slot
ACCEPT_WAIT_SECONDS = 10.0  # a connection beyond the cap waits this long, then is dropped


@dataclass
class Reply:
    """One scripted assistant reply.

    `raw_arguments`, when set, are the tool calls' argument strings sent verbatim (one per tool
    call), e.g. invalid JSON. Anthropic sends tool input as an object: an argument string that
    is a JSON object is sent as that object, any other string is sent as a string `input`
    (a malformed reply; streamed, it is the `partial_json` the client has to parse).
    """

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    raw_arguments: list[str] | None = None
    input_tokens: int = 100  # the whole prompt, cached part included (as OpenAI counts it)
    output_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    finish: str | None = None  # None: natural; "length": cut at max tokens; or a raw reason
    model: str | None = None


@dataclass
class HttpError:
    """An error response (the SDKs retry 408, 409, 429 and 5xx)."""

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
_TO_OPENAI_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
_TO_ANTHROPIC_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _arguments(reply: Reply) -> list[str]:
    if reply.raw_arguments is None:
        return [json.dumps(args) for _, args in reply.tool_calls]
    if len(reply.raw_arguments) != len(reply.tool_calls):
        raise ValueError("Reply.raw_arguments needs one string per tool call")
    return list(reply.raw_arguments)


def _tool_input(arguments: str) -> Any:
    """Anthropic's `input`: the object the arguments encode, else the string itself."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def openai_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion object as the OpenAI API returns it."""
    calls = [{"id": f"call_{next(_ids)}", "type": "function",
              "function": {"name": name, "arguments": arguments}}
             for (name, _), arguments in zip(reply.tool_calls, _arguments(reply), strict=True)]
    finish = _TO_OPENAI_FINISH.get(reply.finish or "", reply.finish)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None,
                               "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
        "model": reply.model or request.get("model", "model"),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish or ("tool_calls" if calls else "stop")}],
        "usage": {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
                  "total_tokens": reply.input_tokens + reply.output_tokens,
                  "prompt_tokens_details": {"cached_tokens": reply.cached_tokens,
                                            "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0,
                                                "rejected_prediction_tokens": 0}},
        "service_tier": "default", "system_fingerprint": None,
    }


def anthropic_body(reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
    """A message object as the Anthropic API returns it (input_tokens excludes the cache)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for (name, _), arguments in zip(reply.tool_calls, _arguments(reply), strict=True):
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name,
                        "input": _tool_input(arguments)})
    finish = _TO_ANTHROPIC_FINISH.get(reply.finish or "", reply.finish)
    fresh = reply.input_tokens - reply.cached_tokens - reply.cache_write_tokens
    return {
        "id": f"msg_{next(_ids)}", "type": "message", "role": "assistant",
        "model": reply.model or request.get("model", "model"), "content": content,
        "stop_reason": finish or ("tool_use" if reply.tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": max(fresh, 0), "output_tokens": reply.output_tokens,
                  "cache_read_input_tokens": reply.cached_tokens,
                  "cache_creation_input_tokens": reply.cache_write_tokens,
                  "service_tier": "standard"},
    }


def openai_stream(completion: dict[str, Any], request: dict[str, Any]) -> str:
    """A chat.completion as the server-sent chunks of a streamed response."""
    head = {key: completion[key] for key in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                     "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if choice["message"]["content"]:
        chunks.append(chunk({"content": choice["message"]["content"]}))
    for index, call in enumerate(choice["message"].get("tool_calls", [])):
        function = call["function"]
        chunks.append(chunk({"tool_calls": [{"index": index, "id": call["id"],
                                             "type": "function", "function": {
                                                 "name": function["name"], "arguments": ""}}]}))
        chunks.append(chunk({"tool_calls": [{"index": index, "function": {
            "arguments": function["arguments"]}}]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def anthropic_stream(message: dict[str, Any]) -> str:
    """A message as the server-sent events of a streamed response."""
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block))
    events.append({"type": "message_delta", "usage": message["usage"],
                   "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}})
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "text":
        empty, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        given = block["input"]
        empty = {**block, "input": {}}
        delta = {"type": "input_json_delta",
                 "partial_json": given if isinstance(given, str) else json.dumps(given)}
    return [{"type": "content_block_start", "index": index, "content_block": empty},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index}]


def error_body(api: str, status: int, message: str | None = None) -> str:
    """An error body shaped as the provider shapes it."""
    text = message or f"scripted {status}"
    if api == "anthropic":
        kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "api_error")
        return json.dumps({"type": "error", "error": {"type": kind, "message": text}})
    kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
    return json.dumps({"error": {"message": text, "type": kind, "param": None,
                                 "code": str(status)}})


class _Refusal(Exception):
    """A request the server answers with an error the SDK must not retry."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class LoopbackModelServer:
    """Serves queued answers to OpenAI and Anthropic clients on 127.0.0.1.

    Args:
        max_connections: connections served at once; more wait for a free slot.
    """

    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        self.responder: Callable[[Request], Answer] | None = None
        self.max_connections = max_connections
        self._queue: list[Answer] = []
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._server: _BoundedServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients (`ChatOpenAI(base_url=...)`)."""
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        """Base URL for Anthropic clients (`ChatAnthropic(base_url=...)`)."""
        return self.url

    def enqueue(self, *answers: Answer) -> None:
        """Queue answers, served in order before the responder is asked."""
        with self._lock:
            self._queue.extend(answers)

    @property
    def requests(self) -> list[Request]:
        """Every request received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def answer(self, request: Request) -> Answer:
        """Record the request and pick its answer (queue first, then the responder).

        The responder runs in the server's threads, possibly several at once.

        Raises:
            _Refusal: nothing to answer with, or the responder raised.
        """
        with self._lock:
            self._requests.append(request)
            if self._queue:
                return self._queue.pop(0)
        if self.responder is None:
            raise _Refusal(500, "script exhausted: no reply queued and no responder set "
                                f"(request {self.request_count()}, {request.api})")
        try:
            return self.responder(request)
        except Exception:
            raise _Refusal(500, "responder raised:\n" + traceback.format_exc()) from None

    def start(self) -> LoopbackModelServer:
        server = _BoundedServer(("127.0.0.1", 0), _handler_for(self), self.max_connections)
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05},  # quick to stop
                                        name="loopback-model-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=ACCEPT_WAIT_SECONDS + 5)
            self._thread = None

    def __enter__(self) -> LoopbackModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _BoundedServer(ThreadingHTTPServer):
    """A threading HTTP server with at most `slots` connections (threads) at once."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 slots: int) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(slots)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(timeout=ACCEPT_WAIT_SECONDS):
            self.shutdown_request(request)  # the client sees a connection error and retries
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _handler_for(owner: LoopbackModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_SECONDS

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            api = _api_of(self.path)
            if api is None:
                self._refuse("openai", 404, f"no such endpoint: POST {self.path}")
                return
            body = self._read_body(api)
            if body is None:
                return
            request = Request(api, self.path, dict(self.headers.items()), body)
            try:
                self._reply(api, owner.answer(request), body)
            except _Refusal as refusal:
                self._refuse(api, refusal.status, str(refusal))
            except Exception:  # a bad scripted reply: say so instead of dropping the line
                self._refuse(api, 500, "bad scripted reply:\n" + traceback.format_exc())

        def _read_body(self, api: str) -> dict[str, Any] | None:
            """The request's JSON object, or None after refusing it."""
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit():
                self._refuse(api, 411, "a Content-Length is required")
            elif int(length) > MAX_BODY:
                self._refuse(api, 413, f"request body over {MAX_BODY} bytes")
            else:
                try:
                    body = json.loads(self.rfile.read(int(length)) or b"{}")
                except (ValueError, OSError):
                    body = None
                if isinstance(body, dict):
                    return body
                self._refuse(api, 400, "the request body is not a JSON object")
            return None

        def _reply(self, api: str, answer: Answer, body: dict[str, Any]) -> None:
            if isinstance(answer, HttpError):
                self._send(answer.status, answer.body or error_body(api, answer.status),
                           _retry_headers(answer.retry_after))
            elif isinstance(answer, RawBody):
                self._send(200, answer.text)
            elif api == "openai":
                self._send_message(openai_body(answer, body), body,
                                   lambda m: openai_stream(m, body))
            else:
                self._send_message(anthropic_body(answer, body), body, anthropic_stream)

        def _send_message(self, message: dict[str, Any], body: dict[str, Any],
                          stream: Callable[[dict[str, Any]], str]) -> None:
            if body.get("stream"):
                self._send(200, stream(message), content_type="text/event-stream")
            else:
                self._send(200, json.dumps(message))

        def _refuse(self, api: str, status: int, message: str) -> None:
            """An error the SDK must surface at once: no retries, connection closed."""
            self.close_connection = True
            self._send(status, error_body(api, status, message),
                       {"x-should-retry": "false", "Connection": "close"})

        def _send(self, status: int, text: str, headers: dict[str, str] | None = None,
                  content_type: str = "application/json") -> None:
            data = text.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True  # the client went away (e.g. killed): nothing to do

    return Handler


def _retry_headers(seconds: float | None) -> dict[str, str]:
    """Retry-After, plus the SDKs' retry-after-ms: they ignore a zero delay (and back off
    half a second instead), so 0 is sent as one millisecond."""
    if seconds is None:
        return {}
    return {"Retry-After": str(math.ceil(seconds)),
            "retry-after-ms": f"{max(seconds * 1000, 1):g}"}


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
