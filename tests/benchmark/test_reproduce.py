"""`sabench reproduce` end to end: BasicAgent driven over real HTTP by the loopback model
server, tools run for real in the sandbox, the repository scored by the offline judge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.reproduce import RunFailed, RunMismatch, RunRequest, reproduce
from sabench.benchmark.scoring import make_judge, score_repo
from tests.agent.model_server import HttpError, LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = DEMO / "papers" / "smoothlr"
FAITHFUL = DEMO / "repos" / "faithful"
MODEL = "openai-compatible:scripted-gpt"


@pytest.fixture(autouse=True)
def _local_sandbox() -> None:
    require_backend("local")


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def write_file_call(path: Path, name: str) -> tuple[str, dict[str, Any]]:
    """A bash heredoc that writes one file of the faithful repository (as models do)."""
    text = path.read_text()
    return ("bash", {"command": f"mkdir -p /home/submission && cat > /home/submission/{name} "
                                f"<< 'SABENCH_EOF'\n{text}SABENCH_EOF"})


def faithful_run() -> list[Reply]:
    """Read the paper, write the faithful reproduction file by file, submit."""
    files = sorted(p.name for p in FAITHFUL.iterdir() if p.is_file())
    return [
        Reply(tool_calls=[("read_file_chunk", {"path": "/home/paper/paper.md",
                                               "start_line": 1, "num_lines": 40})]),
        Reply(text="Writing the code.",
              tool_calls=[write_file_call(FAITHFUL / name, name) for name in files]),
        Reply(text=""),  # no tool call: the continue message follows
        Reply(tool_calls=[("submit", {"summary": "SmoothLR reproduced"})]),
    ]


def request(server: LoopbackModelServer, out: Path, **changes: Any) -> RunRequest:
    settings: dict[str, Any] = dict(paper_dir=PAPER, scaffold="basic", model=MODEL, out=out,
                                    backend="local", base_url=server.openai_url)
    settings.update(changes)
    return RunRequest(**settings)


def tool_results(req: Request) -> list[str]:
    return [m["content"] for m in req.body["messages"] if m["role"] == "tool"]


def test_a_full_run_writes_scores_and_records(model_server: LoopbackModelServer,
                                              tmp_path: Path) -> None:
    model_server.enqueue(*faithful_run())
    record = reproduce(request(model_server, tmp_path / "run"))

    repo = tmp_path / "run" / "repo"
    for path in FAITHFUL.iterdir():
        assert (repo / path.name).read_bytes() == path.read_bytes(), path.name
    assert record["scaffold"] == "basic" and record["status"] == "ok"
    assert record["stop_reason"] == "submitted"
    assert record["requests"] == 4 == model_server.request_count()
    assert record["usage"]["input_tokens"] == 4 * 100 and record["usage"]["calls"] == 4
    # The continue message went out after the reply without a tool call.
    last = model_server.requests[-1].body["messages"]
    assert last[-1]["role"] == "user" and "improving" in last[-1]["content"]
    # The scaffold saw the paper but never the gold claims.
    first = json.dumps(model_server.requests[1].body)
    assert "SMOOTHLR" in first and "sau.json" not in first
    # score.json is the official-compatible score of the written repository.
    paper = load_paper(PAPER)
    expected = score_repo(paper, FAITHFUL, make_judge("offline"))
    score = json.loads((tmp_path / "run" / "score.json").read_text())
    assert score["overall_score"] == pytest.approx(expected.overall_score)
    assert record["overall_score"] == pytest.approx(expected.overall_score)
    assert set(score["dimensions"]) == {"D1", "D2", "D3", "D4"}


def test_running_again_leaves_a_finished_run_alone(model_server: LoopbackModelServer,
                                                   tmp_path: Path) -> None:
    model_server.enqueue(*faithful_run())
    first = reproduce(request(model_server, tmp_path / "run"))
    again = reproduce(request(model_server, tmp_path / "run"))
    assert again["requests"] == first["requests"] == model_server.request_count() == 4
    with pytest.raises(RunMismatch, match="thread"):
        reproduce(request(model_server, tmp_path / "run", thread="other"))


def test_budget_exhaustion_stops_cleanly_and_keeps_the_files(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    from sabench.agent.types import Budget

    model_server.enqueue(*faithful_run())
    record = reproduce(request(model_server, tmp_path / "run", budget=Budget(calls=2)))
    assert record["status"] == "stopped" and record["stop_reason"] == "budget_calls"
    assert model_server.request_count() == 2
    assert (tmp_path / "run" / "repo" / "train.py").read_bytes() == \
        (FAITHFUL / "train.py").read_bytes()
    assert json.loads((tmp_path / "run" / "score.json").read_text())["overall_score"] > 0


def test_tool_errors_reach_the_model_as_text(model_server: LoopbackModelServer,
                                             tmp_path: Path) -> None:
    model_server.enqueue(
        Reply(tool_calls=[("bash", {"command": "sleep 30"})]),
        Reply(tool_calls=[("read_file_chunk", {"path": "/etc/passwd"})]),
        Reply(tool_calls=[("bash", {})], raw_arguments=['{"command": "ls'],),
        Reply(tool_calls=[("submit", {"summary": "stop"})]),
    )
    record = reproduce(request(model_server, tmp_path / "run",
                               options={"command_timeout_s": 1}))
    assert record["stop_reason"] == "submitted"
    results = tool_results(model_server.requests[-1])
    assert results[0].startswith("ToolError:") and "timed out after 1 seconds" in results[0]
    assert results[1].startswith("ToolError:") and "outside the workspace" in results[1]
    assert "not valid JSON" in results[2]


def test_a_429_is_retried_by_the_client(model_server: LoopbackModelServer,
                                        tmp_path: Path) -> None:
    model_server.enqueue(HttpError(429), Reply(tool_calls=[("submit", {"summary": "x"})]))
    record = reproduce(request(model_server, tmp_path / "run"))
    assert record["stop_reason"] == "submitted"
    assert model_server.request_count() == 2 and record["requests"] == 1


def test_a_failing_model_is_an_error_record_and_a_rerun_resumes(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    model_server.enqueue(Reply(tool_calls=[("bash", {"command": "echo 1 > /home/submission/a"})]),
                         *[HttpError(500)] * 3)
    with pytest.raises(RunFailed, match="run again to resume"):
        reproduce(request(model_server, tmp_path / "run"))
    failed = json.loads((tmp_path / "run" / "record.json").read_text())
    assert failed["status"] == "error" and "500" in failed["error"]
    assert (tmp_path / "run" / "repo" / "a").read_text() == "1\n"  # the partial repository
    model_server.enqueue(Reply(tool_calls=[("submit", {"summary": "done"})]))
    record = reproduce(request(model_server, tmp_path / "run"))
    assert record["status"] == "ok" and (tmp_path / "run" / "repo" / "a").read_text() == "1\n"
    # The first reply was not asked for again: the resumed run continued after it.
    assert len(tool_results(model_server.requests[-1])) == 1


def assistant_turns(req: Request) -> int:
    return sum(1 for m in req.body["messages"] if m["role"] == "assistant")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def checkpoint_flags(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """The default SQLite file, or a real PostgreSQL server (a thread of its own per test)."""
    if request.param == "sqlite":
        return []
    return ["--checkpoint", request.getfixturevalue("postgres_url"),
            "--thread", f"kill-{tmp_path.name}"]


def test_kill_9_during_a_command_then_resume_repeats_no_model_call(
        model_server: LoopbackModelServer, tmp_path: Path, checkpoint_flags: list[str]) -> None:
    out = tmp_path / "run"
    model_server.enqueue(
        Reply(tool_calls=[("bash", {"command": "echo one > /home/submission/one.txt"})]),
        Reply(tool_calls=[("bash", {"command": "sleep 20; echo late > /home/submission/x"})]),
        Reply(tool_calls=[("bash", {"command": "echo two > /home/submission/two.txt"})]),
        Reply(tool_calls=[("submit", {"summary": "done"})]),
    )
    command = [sys.executable, "-m", "sabench.benchmark.cli", "reproduce", str(PAPER),
               "--scaffold", "basic", "--model", MODEL, "--out", str(out), "--backend", "local",
               "--base-url", model_server.openai_url, "--judge", "none", *checkpoint_flags]
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    wait_for(lambda: len(started_tools(out)) == 2, process)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    turns = [assistant_turns(r) for r in model_server.requests]
    assert turns == sorted(set(turns)) == [0, 1, 2, 3], "a completed model call was repeated"
    record = json.loads((out / "record.json").read_text())
    assert record["stop_reason"] == "submitted" and record["requests"] == 4
    repo = out / "repo"
    assert (repo / "one.txt").read_text() == "one\n" and (repo / "two.txt").read_text() == "two\n"
    assert not (repo / "x").exists()  # the killed command was not run again on resume
    interrupted = tool_results(model_server.requests[2])[-1]
    assert "not run again on resume" in interrupted
    assert (out / "checkpoints.sqlite").exists() == (not checkpoint_flags)


def started_tools(out: Path) -> list[Path]:
    folder = out / "journal" / "tools-started"
    return list(folder.iterdir()) if folder.is_dir() else []


def wait_for(condition: Any, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the run ended early: {process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("timed out waiting for the run")
        time.sleep(0.05)


def test_without_a_key_the_cli_names_the_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "sabench.benchmark.cli", "reproduce", str(PAPER), "--scaffold",
         "basic", "--model", "anthropic:claude-sonnet-4-6", "--out", str(tmp_path / "r")],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "ANTHROPIC_API_KEY" in done.stderr


def test_scaffolds_lists_basic() -> None:
    done = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "scaffolds"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("basic\tBasicAgent")


def test_anthropic_runs_cache_the_prompt_prefix_and_record_cached_tokens(
        model_server: LoopbackModelServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model_server.enqueue(
        Reply(tool_calls=[("read_file_chunk", {"path": "/home/paper/paper.md"})],
              input_tokens=3000, cache_write_tokens=2500),
        Reply(tool_calls=[("submit", {"summary": "done"})], input_tokens=4000,
              cached_tokens=2500))
    record = reproduce(request(model_server, tmp_path / "run",
                               model="anthropic:claude-sonnet-4-6",
                               base_url=model_server.anthropic_url, judge=None))
    assert record["stop_reason"] == "submitted"
    assert {r.api for r in model_server.requests} == {"anthropic"}
    body = model_server.requests[1].body
    task = body["messages"][0]["content"]  # the system prompt travels apart, in `system`
    assert task[-1]["cache_control"] == {"type": "ephemeral"}
    assert not any("cache_control" in block for message in body["messages"][1:]
                   for block in message["content"] if isinstance(block, dict))
    usage = record["usage"]
    assert usage["cached_tokens"] == 2500 and usage["cache_write_tokens"] == 2500
    assert usage["input_tokens"] == 7000
    # Cache reads are billed at a tenth of the input price, writes at 1.25 times.
    fresh = 7000 - 2500 - 2500
    expected = (fresh * 3 + 2500 * 0.3 + 2500 * 3.75 + 2 * 20 * 15) / 1e6
    assert usage["dollars"] == pytest.approx(expected)


@pytest.mark.parametrize(("flags", "message"), [
    (["--backend", "bogus"], "unknown sandbox backend 'bogus'"),
    (["--scaffold", "nope"], "unknown scaffold 'nope'"),
    (["--model", "bad"], "model spec 'bad'"),
    (["--judge", "bogus"], "judge 'bogus'"),
])
def test_bad_flags_are_one_line_errors_and_write_nothing(
        tmp_path: Path, flags: list[str], message: str) -> None:
    command = [sys.executable, "-m", "sabench.benchmark.cli", "reproduce", str(PAPER),
               "--scaffold", "basic", "--model", "openai-compatible:m", "--base-url",
               "http://127.0.0.1:9", "--out", str(tmp_path / "run"), *flags]
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and done.stderr.strip().count("\n") == 0
    assert not (tmp_path / "run").exists()


def test_version_and_the_judge_message_name_every_kind() -> None:
    done = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("sabench ")
    bad = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "score", "--paper",
                          "smoothlr", "--repo", str(FAITHFUL), "--papers", str(PAPER.parent),
                          "--judge", "bogus"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "expected offline, keyword, llm:<provider:model> or hybrid" in bad.stderr


def test_no_flag_shows_a_value_type_in_any_help() -> None:
    """Boolean flags take no value: no command's help may show one as `<bool>`."""
    from typer.main import get_command

    from sabench.benchmark.cli import _register_all, app

    _register_all()

    def commands(group, path=()):  # noqa: ANN001, ANN202 - click objects
        yield path
        for name, sub in getattr(group, "commands", {}).items():
            yield from commands(sub, (*path, name))

    paths = list(commands(get_command(app)))
    assert len(paths) > 15  # every command and sub-command, not just the root
    env = {**os.environ, "COLUMNS": "200", "TERM": "dumb"}
    for path in paths:
        done = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", *path, "--help"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, (path, done.stderr)
        assert "<bool>" not in done.stdout and "--" in done.stdout, path
