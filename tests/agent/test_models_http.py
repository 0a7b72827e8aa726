"""The real LangChain clients (and their SDKs) over HTTP against the loopback model server:
replies, tool calls, malformed replies, retries, usage and stop reasons, for both APIs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from langchain_core.exceptions import ModelAPIError, ModelRateLimitError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, Field

from sabench.agent.models import make_model
from sabench.agent.usage import UsageRecorder
from tests.agent import model_server as server_module
from tests.agent.model_server import HttpError, LoopbackModelServer, RawBody, Reply

REPO_ROOT = Path(__file__).resolve().parents[2]
# provider -> (spec, which server URL it takes)
SPECS = {
    "openai": ("openai:gpt-4o", "openai_url"),
    "openai-compatible": ("openai-compatible:local-model", "openai_url"),
    "anthropic": ("anthropic:claude-sonnet-4-6", "anthropic_url"),
}
# what each API calls a natural end, an end for tool calls and a cut at max tokens
FINISH_KEY = {"openai": "finish_reason", "anthropic": "stop_reason"}
FINISHES = {"openai": ("stop", "tool_calls", "length"),
            "anthropic": ("end_turn", "tool_use", "max_tokens")}


class ReadFile(BaseModel):
    """Read a file of the repository."""

    path: str = Field(description="path relative to the repository root")
    start: int = Field(default=1, description="first line")


class Bash(BaseModel):
    """Run a shell command."""

    command: str


@pytest.fixture(autouse=True)
def _fake_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")


@pytest.fixture(params=list(SPECS))
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


def api_of(provider: str) -> str:
    return "anthropic" if provider == "anthropic" else "openai"


def model_for(provider: str, server: LoopbackModelServer, **options: Any) -> BaseChatModel:
    spec, url = SPECS[provider]
    return make_model(spec, base_url=getattr(server, url), **options)


def finish_of(message: BaseMessage, provider: str) -> str:
    return message.response_metadata[FINISH_KEY[api_of(provider)]]


def streamed(model: Any, prompt: str) -> AIMessage:
    """The message a `.stream()` call adds up to."""
    total = None
    for chunk in model.stream(prompt):
        total = chunk if total is None else total + chunk
    assert total is not None
    return total


# --- plain replies -------------------------------------------------------------------------

def test_a_text_reply_is_the_message_content(model_server: LoopbackModelServer,
                                             provider: str) -> None:
    model_server.enqueue(Reply(text="The learning rate is 3e-4."))
    message = model_for(provider, model_server).invoke("What is the learning rate?")
    assert isinstance(message, AIMessage)
    assert message.text == "The learning rate is 3e-4." and not message.tool_calls
    assert finish_of(message, provider) == FINISHES[api_of(provider)][0]
    [request] = model_server.requests
    assert request.api == api_of(provider)
    assert request.path.endswith("/chat/completions" if request.api == "openai" else "/messages")
    assert request.body["model"] == SPECS[provider][0].split(":", 1)[1]
    assert request.body["messages"][-1]["role"] == "user"
    assert "What is the learning rate?" in json.dumps(request.body["messages"])
    assert not request.body.get("stream")  # plain invoke does not stream


def test_keys_and_api_versions_travel_as_headers(model_server: LoopbackModelServer,
                                                 provider: str) -> None:
    model_server.enqueue(Reply(text="ok"))
    model_for(provider, model_server).invoke("hi")
    headers = {k.lower(): v for k, v in model_server.requests[0].headers.items()}
    key = "test-anthropic-key" if provider == "anthropic" else "test-openai-key"
    assert key in (headers.get("authorization", "") + headers.get("x-api-key", ""))
    assert ("anthropic-version" in headers) == (provider == "anthropic")


def test_the_system_prompt_goes_where_each_api_wants_it(model_server: LoopbackModelServer,
                                                       provider: str) -> None:
    from langchain_core.messages import SystemMessage

    model_server.enqueue(Reply(text="ok"))
    model_for(provider, model_server).invoke([SystemMessage("You reproduce papers."),
                                              HumanMessage("Start.")])
    body = model_server.requests[0].body
    if provider == "anthropic":
        assert "You reproduce papers." in json.dumps(body["system"])
        assert [m["role"] for m in body["messages"]] == ["user"]
    else:
        assert [m["role"] for m in body["messages"]] == ["system", "user"]


# --- tool calls ------------------------------------------------------------------------------

def test_tool_calls_arrive_with_names_args_and_unique_ids(model_server: LoopbackModelServer,
                                                        provider: str) -> None:
    model_server.enqueue(Reply(text="Reading both.", tool_calls=[
        ("ReadFile", {"path": "train.py", "start": 10}), ("Bash", {"command": "ls -la"})]))
    model = model_for(provider, model_server).bind_tools([ReadFile, Bash])
    message = model.invoke("Look around.")
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("ReadFile", {"path": "train.py", "start": 10}), ("Bash", {"command": "ls -la"})]
    ids = [c["id"] for c in message.tool_calls]
    assert len(set(ids)) == 2 and all(ids)
    assert all(i.startswith("toolu_" if provider == "anthropic" else "call_") for i in ids)
    assert finish_of(message, provider) == FINISHES[api_of(provider)][1]
    body = model_server.requests[0].body
    names = [t["name"] if provider == "anthropic" else t["function"]["name"]
             for t in body["tools"]]
    assert names == ["ReadFile", "Bash"]


def test_tool_results_go_back_under_their_call_ids(model_server: LoopbackModelServer,
                                                  provider: str) -> None:
    model_server.enqueue(Reply(tool_calls=[("Bash", {"command": "pwd"})]), Reply(text="Done."))
    model = model_for(provider, model_server).bind_tools([Bash])
    history: list[BaseMessage] = [HumanMessage("Where am I?")]
    call = model.invoke(history)
    history += [call, ToolMessage("/home/submission", tool_call_id=call.tool_calls[0]["id"])]
    assert model.invoke(history).text == "Done."
    sent = json.dumps(model_server.requests[1].body["messages"])
    assert call.tool_calls[0]["id"] in sent and "/home/submission" in sent
    if provider == "anthropic":
        result = model_server.requests[1].body["messages"][-1]["content"][0]
        assert result["type"] == "tool_result"
        assert result["tool_use_id"] == call.tool_calls[0]["id"]
    else:
        result = model_server.requests[1].body["messages"][-1]
        assert (result["role"], result["tool_call_id"]) == ("tool", call.tool_calls[0]["id"])


def test_tool_call_ids_differ_between_replies(model_server: LoopbackModelServer,
                                              provider: str) -> None:
    model_server.enqueue(*[Reply(tool_calls=[("Bash", {"command": "ls"})])] * 3)
    model = model_for(provider, model_server).bind_tools([Bash])
    ids = [model.invoke("go").tool_calls[0]["id"] for _ in range(3)]
    assert len(set(ids)) == 3


@pytest.mark.parametrize("provider", ["openai", "openai-compatible"])
def test_openai_arguments_that_are_not_json_become_invalid_tool_calls(
        model_server: LoopbackModelServer, provider: str) -> None:
    model_server.enqueue(Reply(tool_calls=[("Bash", {}), ("ReadFile", {})],
                               raw_arguments=['{"command": "ls', '{"path": "a.py"}']))
    message = model_for(provider, model_server).bind_tools([Bash, ReadFile]).invoke("go")
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("ReadFile", {"path": "a.py"})]
    [bad] = message.invalid_tool_calls
    assert (bad["name"], bad["args"]) == ("Bash", '{"command": "ls')
    assert bad["id"] and "not valid JSON" in bad["error"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_streamed_arguments_that_are_not_json_become_invalid_tool_calls(
        model_server: LoopbackModelServer, provider: str) -> None:
    model_server.enqueue(Reply(tool_calls=[("Bash", {})], raw_arguments=["ls -la"]))
    message = streamed(model_for(provider, model_server).bind_tools([Bash]), "go")
    assert not message.tool_calls
    assert [(c["name"], c["args"]) for c in message.invalid_tool_calls] == [("Bash", "ls -la")]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_streamed_arguments_cut_short_are_completed_silently(
        model_server: LoopbackModelServer, provider: str) -> None:
    """langchain parses streamed arguments as partial JSON: a cut-off call looks whole.
    Plain invoke (what the scaffolds use) reports the same arguments as invalid instead."""
    model_server.enqueue(Reply(tool_calls=[("Bash", {})], raw_arguments=['{"command": "rm -r'],
                               finish="length"))
    message = streamed(model_for(provider, model_server).bind_tools([Bash]), "go")
    assert [c["args"] for c in message.tool_calls] == [{"command": "rm -r"}]
    assert finish_of(message, provider) == FINISHES[api_of(provider)][2]


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK's serializer notices it too
def test_an_anthropic_tool_input_that_is_not_an_object_is_an_error(
        model_server: LoopbackModelServer) -> None:
    """The Messages API always sends `input` as an object; a string there must not pass."""
    model_server.enqueue(Reply(tool_calls=[("Bash", {})], raw_arguments=['{"command": "ls']))
    model = model_for("anthropic", model_server).bind_tools([Bash])
    with pytest.raises(ValueError, match="valid dictionary"):
        model.invoke("go")


def test_openai_arguments_that_are_json_but_no_object_are_an_error(
        model_server: LoopbackModelServer) -> None:
    """langchain-openai hands a JSON list to AIMessage as the args: the reply is lost."""
    model_server.enqueue(Reply(tool_calls=[("Bash", {})], raw_arguments=['["ls"]']))
    with pytest.raises(ValueError, match="valid dictionary"):
        model_for("openai", model_server).bind_tools([Bash]).invoke("go")


# --- errors and retries ---------------------------------------------------------------------

@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_transient_error_is_retried_by_the_sdk(model_server: LoopbackModelServer,
                                                 provider: str, status: int) -> None:
    model_server.enqueue(HttpError(status), Reply(text="after the retry"))
    message = model_for(provider, model_server).invoke("hi")
    assert message.text == "after the retry"
    first, second = model_server.requests
    assert first.body == second.body
    retries = {k.lower(): v for k, v in second.headers.items()}["x-stainless-retry-count"]
    assert retries == "1"


def test_errors_beyond_the_retries_surface_as_provider_neutral_errors(
        model_server: LoopbackModelServer, provider: str) -> None:
    model_server.enqueue(*[HttpError(429)] * 2, *[HttpError(500)] * 2)
    model = model_for(provider, model_server, max_retries=1)
    with pytest.raises(ModelRateLimitError):
        model.invoke("hi")
    with pytest.raises(ModelAPIError):
        model.invoke("hi")
    assert model_server.request_count() == 4


def test_a_client_error_is_not_retried(model_server: LoopbackModelServer,
                                       provider: str) -> None:
    model_server.enqueue(HttpError(400), Reply(text="never sent"))
    with pytest.raises(Exception, match="400"):
        model_for(provider, model_server).invoke("hi")
    assert model_server.request_count() == 1


@pytest.mark.parametrize("body", ["this is not JSON", '{"unexpected": true}', "{}"])
def test_a_malformed_200_body_raises_instead_of_an_empty_message(
        model_server: LoopbackModelServer, provider: str, body: str) -> None:
    model_server.enqueue(RawBody(body))
    recorder = UsageRecorder()
    with pytest.raises((ValueError, TypeError, KeyError, IndexError)):
        model_for(provider, model_server, callbacks=[recorder]).invoke("hi")
    assert model_server.request_count() == 1  # a 200 is never retried
    assert recorder.totals().calls == 0


def test_an_exhausted_script_fails_at_once_and_is_recorded(
        model_server: LoopbackModelServer, provider: str) -> None:
    with pytest.raises(ModelAPIError, match="script exhausted"):
        model_for(provider, model_server).invoke("hi")
    assert model_server.request_count() == 1  # the server told the SDK not to retry


def test_a_responder_that_raises_is_reported_not_retried(
        model_server: LoopbackModelServer, provider: str) -> None:
    def broken(request: Any) -> Reply:
        raise RuntimeError("the test's responder is broken")

    model_server.responder = broken
    with pytest.raises(ModelAPIError, match="responder is broken"):
        model_for(provider, model_server).invoke("hi")
    assert model_server.request_count() == 1


# --- usage, prices, stop reasons --------------------------------------------------------------

def test_usage_with_cached_tokens_reaches_the_recorder_openai(
        model_server: LoopbackModelServer) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="a", input_tokens=1000, output_tokens=200,
                               cached_tokens=600),
                         Reply(text="b", input_tokens=500, output_tokens=50,
                               model="gpt-4o-2024-08-06"))
    model = model_for("openai", model_server, callbacks=[recorder])
    model.invoke("one")
    model.invoke("two")
    totals = recorder.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens, totals.cached_tokens) == (
        2, 1500, 250, 600)
    # gpt-4o: $2.50 in, $1.25 cached in, $10 out per million tokens; the dated name is priced
    # by its family
    expected = (400 * 2.5 + 600 * 1.25 + 200 * 10 + 500 * 2.5 + 50 * 10) / 1e6
    assert totals.dollars == pytest.approx(expected) and totals.unpriced_calls == 0
    assert recorder.calls[1].model == "gpt-4o-2024-08-06"


def test_usage_with_cache_reads_and_writes_reaches_the_recorder_anthropic(
        model_server: LoopbackModelServer) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="a", input_tokens=1000, output_tokens=200,
                               cached_tokens=600, cache_write_tokens=100))
    message = model_for("anthropic", model_server, callbacks=[recorder]).invoke("one")
    # the wire carries only the uncached part as input_tokens; langchain adds the cache back
    assert message.response_metadata["usage"]["input_tokens"] == 300
    totals = recorder.totals()
    assert (totals.input_tokens, totals.output_tokens, totals.cached_tokens,
            totals.cache_write_tokens) == (1000, 200, 600, 100)
    # claude-sonnet-4: $3 in, $0.30 cache read, $3.75 cache write, $15 out per million
    expected = (300 * 3 + 600 * 0.3 + 100 * 3.75 + 200 * 15) / 1e6
    assert totals.dollars == pytest.approx(expected)


def test_an_unpriced_model_is_counted_apart_never_as_free(
        model_server: LoopbackModelServer) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="a", input_tokens=10, output_tokens=5))
    model_for("openai-compatible", model_server, callbacks=[recorder]).invoke("hi")
    totals = recorder.totals()
    assert (totals.calls, totals.unpriced_calls, totals.input_tokens) == (1, 1, 10)
    assert recorder.calls[0].dollars is None


def test_a_reply_cut_at_max_tokens_says_so(model_server: LoopbackModelServer,
                                           provider: str) -> None:
    model_server.enqueue(Reply(text="def train(", finish="length"))
    message = model_for(provider, model_server).invoke("write it")
    assert message.text == "def train("
    assert finish_of(message, provider) == FINISHES[api_of(provider)][2]


# --- streaming ----------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_streamed_reply_adds_up_to_the_plain_one(model_server: LoopbackModelServer,
                                                   provider: str) -> None:
    recorder = UsageRecorder()
    model_server.enqueue(Reply(text="Running it.", tool_calls=[("Bash", {"command": "ls"})],
                               input_tokens=300, output_tokens=30, cached_tokens=200))
    model = model_for(provider, model_server, callbacks=[recorder], stream_usage=True)
    message = streamed(model.bind_tools([Bash]), "go")
    assert model_server.requests[0].body["stream"] is True
    assert message.text == "Running it."
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("Bash", {"command": "ls"})]
    assert finish_of(message, provider) == FINISHES[api_of(provider)][1]
    assert message.usage_metadata is not None
    assert (message.usage_metadata["input_tokens"], message.usage_metadata["output_tokens"]) == (
        300, 30)
    assert recorder.totals().cached_tokens == 200


# --- the server itself ----------------------------------------------------------------------

def test_a_client_in_another_process_reaches_the_server(
        model_server: LoopbackModelServer) -> None:
    model_server.enqueue(Reply(text="from afar"))
    code = textwrap.dedent("""
        import sys
        from sabench.agent.models import make_model
        print(make_model("openai-compatible:m", base_url=sys.argv[1]).invoke("hi").text)
    """)
    done = subprocess.run([sys.executable, "-c", code, model_server.openai_url],
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from afar"
    assert model_server.request_count() == 1


def test_the_responder_answers_when_the_queue_is_empty(
        model_server: LoopbackModelServer) -> None:
    model_server.enqueue(Reply(text="queued"))
    model_server.responder = lambda request: Reply(text=f"seen {len(request.body['messages'])}")
    model = model_for("openai", model_server)
    assert [model.invoke("x").text for _ in range(3)] == ["queued", "seen 1", "seen 1"]


def test_a_prefix_before_the_api_path_is_accepted(model_server: LoopbackModelServer) -> None:
    model_server.enqueue(Reply(text="via a gateway"), Reply(text="also"))
    openai = make_model("openai-compatible:m", base_url=model_server.url + "/gateway/v1")
    anthropic = make_model("anthropic:claude-sonnet-4-6",
                           base_url=model_server.url + "/gateway")
    assert openai.invoke("x").text == "via a gateway" and anthropic.invoke("x").text == "also"
    assert [r.path for r in model_server.requests] == [
        "/gateway/v1/chat/completions", "/gateway/v1/messages"]


def post(url: str, data: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_server_listens_on_loopback_and_refuses_what_it_does_not_serve(
        model_server: LoopbackModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    assert model_server.url.startswith("http://127.0.0.1:")
    status, body = post(model_server.url + "/v1/embeddings", b"{}")
    assert status == 404 and "no such endpoint" in body["error"]["message"]
    status, body = post(model_server.openai_url + "/chat/completions", b"[not json")
    assert status == 400
    monkeypatch.setattr(server_module, "MAX_BODY", 1000)
    status, body = post(model_server.openai_url + "/chat/completions",
                        json.dumps({"messages": ["x" * 2000]}).encode())
    assert status == 413
    assert model_server.request_count() == 0  # refused before any reply was used


def test_replies_are_shaped_as_the_real_apis_send_them(
        model_server: LoopbackModelServer) -> None:
    model_server.enqueue(Reply(text="hi", tool_calls=[("f", {"a": 1})], cached_tokens=7),
                         Reply(text="hi", tool_calls=[("f", {"a": 1})], cached_tokens=7,
                               cache_write_tokens=3))
    status, completion = post(model_server.openai_url + "/chat/completions",
                              b'{"model": "m", "messages": []}')
    assert status == 200 and completion["object"] == "chat.completion"
    assert completion["id"].startswith("chatcmpl-") and completion["model"] == "m"
    choice = completion["choices"][0]
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "f",
                                                              "arguments": '{"a": 1}'}
    assert completion["usage"]["prompt_tokens_details"]["cached_tokens"] == 7
    assert completion["usage"]["total_tokens"] == 120
    status, message = post(model_server.anthropic_url + "/v1/messages", b'{"model": "c"}')
    assert status == 200 and message["type"] == "message" and message["id"].startswith("msg_")
    assert [b["type"] for b in message["content"]] == ["text", "tool_use"]
    assert message["content"][1]["input"] == {"a": 1}
    assert message["usage"]["input_tokens"] == 90  # 100 minus the cache read and write
    assert (message["usage"]["cache_read_input_tokens"],
            message["usage"]["cache_creation_input_tokens"]) == (7, 3)
