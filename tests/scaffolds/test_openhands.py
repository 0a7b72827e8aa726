"""OpenHands CodeAct over the loopback model server, tools run for real in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.reproduce import RunRequest, reproduce
from sabench.benchmark.scoring import make_judge, score_repo
from sabench.scaffolds.openhands import split_cwd
from tests.agent.model_server import LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = DEMO / "papers" / "smoothlr"
FAITHFUL = DEMO / "repos" / "faithful"
SUB = "/home/submission"


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    require_backend("local")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def run(server: LoopbackModelServer, out: Path, **options: Any) -> dict[str, Any]:
    return reproduce(RunRequest(paper_dir=PAPER, scaffold="openhands",
                                model="openai-compatible:oh-model", out=out, backend="local",
                                base_url=server.openai_url, judge="offline", options=options))


def observations(request: Request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


def editor(**args: Any) -> tuple[str, dict[str, Any]]:
    return ("str_replace_editor", args)


def test_openhands_on_the_demo_paper(model_server: LoopbackModelServer, tmp_path: Path) -> None:
    creates = [editor(command="create", path=f"{SUB}/{p.name}", file_text=p.read_text())
               for p in sorted(FAITHFUL.iterdir())]
    model_server.enqueue(
        Reply(tool_calls=[editor(command="view", path="/home/paper/paper.md",
                                 view_range=[1, 5])]),
        Reply(tool_calls=[("think", {"thought": "model first, then training"})]),
        Reply(tool_calls=creates[:4]),  # several actions in one reply: one iteration each
        Reply(tool_calls=creates[4:]),
        Reply(tool_calls=[("execute_bash", {"command": "cd /home/submission && ls | wc -l"})]),
        Reply(tool_calls=[("execute_bash", {"command": "pwd"})]),
        Reply(tool_calls=[("finish", {"message": "done"})]),
    )
    record = run(model_server, tmp_path / "run")
    repo = tmp_path / "run" / "repo"
    for path in FAITHFUL.iterdir():
        assert (repo / path.name).read_bytes() == path.read_bytes(), path.name
    assert record["status"] == "ok" and record["stop_reason"] == "finished"
    assert record["requests"] == 7 == model_server.request_count()
    seen = observations(model_server.requests[-1])
    assert seen[0].startswith("     1\t# SMOOTHLR") and len(seen[0].splitlines()) == 5
    assert seen[1] == "Your thought has been logged."
    assert "8\n\n[The command completed with exit code 0.]" in seen[-2]
    # The shell's directory carried over from the previous command.
    assert seen[-1].startswith("/home/submission\n")
    expected = score_repo(load_paper(PAPER), FAITHFUL, make_judge("offline"))
    assert record["overall_score"] == pytest.approx(expected.overall_score)


def test_a_failing_edit_is_reported_and_the_model_fixes_it(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    model_server.enqueue(
        Reply(tool_calls=[editor(command="create", path=f"{SUB}/lr.py", file_text="lr = 1\n")]),
        Reply(tool_calls=[editor(command="str_replace", path=f"{SUB}/lr.py",
                                 old_str="lr = 0.1", new_str="lr = 0.5")]),
        Reply(tool_calls=[editor(command="str_replace", path=f"{SUB}/lr.py",
                                 old_str="lr = 1", new_str="lr = 0.1")]),
        Reply(tool_calls=[editor(command="insert", path=f"{SUB}/lr.py", insert_line=1,
                                 new_str="steps = 10")]),
        Reply(tool_calls=[editor(command="undo_edit", path=f"{SUB}/lr.py")]),
        Reply(tool_calls=[editor(command="create", path="lr.py", file_text="x")]),
        Reply(tool_calls=[("finish", {})]),
    )
    record = run(model_server, tmp_path / "run")
    seen = observations(model_server.requests[-1])
    assert seen[1].startswith("ERROR:") and "not found" in seen[1]
    assert seen[2].startswith("The file /home/submission/lr.py has been edited.")
    assert "not an absolute path" in seen[5]
    assert (tmp_path / "run" / "repo" / "lr.py").read_text() == "lr = 0.1\n"  # insert undone
    assert record["stop_reason"] == "finished"


def test_a_message_without_an_action_gets_the_auto_continue(
        model_server: LoopbackModelServer, tmp_path: Path) -> None:
    model_server.enqueue(Reply(text="Should I use PyTorch?"),
                         Reply(tool_calls=[("finish", {"message": "ok"})]))
    record = run(model_server, tmp_path / "run")
    last = model_server.requests[-1].body["messages"][-1]
    assert last["role"] == "user" and "Do not ask for human help" in last["content"]
    assert record["stop_reason"] == "finished"


def test_the_iteration_cap_ends_in_the_error_state(model_server: LoopbackModelServer,
                                                   tmp_path: Path) -> None:
    model_server.responder = lambda request: Reply(
        tool_calls=[("think", {"thought": "again"})])
    record = run(model_server, tmp_path / "run", max_iterations=5)
    assert record["status"] == "error" and record["stop_reason"] == "iteration_cap"
    assert model_server.request_count() == 5


def test_observations_are_cut_to_the_limit(model_server: LoopbackModelServer,
                                          tmp_path: Path) -> None:
    model_server.enqueue(Reply(tool_calls=[("execute_bash", {"command": "seq 1 20000"})]),
                         Reply(tool_calls=[("finish", {})]))
    run(model_server, tmp_path / "run", observation_chars=2000)
    seen = observations(model_server.requests[-1])[0]
    assert len(seen) < 2200 and seen.startswith("1\n2\n") and "response clipped" in seen
    assert "[Current working directory: /home]" in seen


def test_split_cwd_separates_the_marker() -> None:
    assert split_cwd("out\n\n@@sabench-cwd@@/home/x\n") == ("out\n", "/home/x")
    assert split_cwd("no marker") == ("no marker", None)
