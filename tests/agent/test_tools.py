"""The workspace tools against real sandboxes: caps, confinement, errors the model can use."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.agent.tools import ToolLimits, WorkspaceTools, head_tail, workspace_tools
from sabench.agent.workspace import AgentWorkspace, PathOutsideWorkspace, to_workspace


def tools_by_name(workspace: AgentWorkspace, **limits: float) -> dict:
    tools = workspace_tools(WorkspaceTools(workspace, ToolLimits(**limits)))
    return {tool.name: tool for tool in tools}


def test_paper_and_submission_are_at_fixed_paths_and_gold_claims_stay_out(
        workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace)
    assert tools["list_folder"].invoke({"path": "/home"}).split() == ["paper/", "repo",
                                                                     "submission/"]
    assert sorted(tools["list_folder"].invoke({"path": "/home/paper"}).split()) == [
        "config.yaml", "paper.md"]  # sau.json (the gold claims) is never copied in
    page = tools["read_file"].invoke({"path": "/home/paper/paper.md", "num_lines": 3})
    assert page.startswith("1: ") and "[lines 1-3 of" in page


def test_write_edit_insert_and_search_round_trip(workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace)
    assert "wrote" in tools["write_file"].invoke(
        {"path": "/home/submission/train.py", "content": "lr = 0.1\nsteps = 10\n"})
    assert "replaced" in tools["edit_file"].invoke(
        {"path": "submission/train.py", "old": "lr = 0.1", "new": "lr = 3e-4"})
    tools["insert_lines"].invoke({"path": "/home/submission/train.py", "line": 0,
                                  "text": "# training settings"})
    assert workspace.read("/home/submission/train.py") == (
        b"# training settings\nlr = 3e-4\nsteps = 10\n")
    found = tools["search"].invoke({"pattern": "lr = [0-9]", "path": "/home/submission"})
    assert found.strip() == "/home/submission/train.py:2:lr = 3e-4"
    # The shell sees the same file, through the alias and through the relative `repo` link.
    assert "steps = 10" in tools["bash"].invoke({"command": "cat repo/train.py"})


def test_edit_that_does_not_match_exactly_once_says_how_to_fix_it(
        workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace)
    tools["write_file"].invoke({"path": "/home/submission/a.py", "content": "x = 1\nx = 1\n"})
    twice = tools["edit_file"].invoke({"path": "/home/submission/a.py", "old": "x = 1",
                                       "new": "x = 2"})
    missing = tools["edit_file"].invoke({"path": "/home/submission/a.py", "old": "y",
                                         "new": "z"})
    assert twice.startswith("Error:") and "found 2 times" in twice
    assert missing.startswith("Error:") and "not found" in missing
    assert workspace.read("/home/submission/a.py") == b"x = 1\nx = 1\n"  # unchanged


@pytest.mark.parametrize("path", ["/etc/passwd", "../../etc/passwd", "/home/../etc/shadow",
                                  "/tmp/x"])
def test_paths_outside_the_workspace_are_refused(workspace: AgentWorkspace, path: str) -> None:
    tools = tools_by_name(workspace)
    for name, args in (("read_file", {"path": path}),
                       ("write_file", {"path": path, "content": "x"}),
                       ("list_folder", {"path": path})):
        answer = tools[name].invoke(args)
        assert answer.startswith("Error:") and "outside the workspace" in answer, name


def test_the_paper_is_read_only(workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace)
    answer = tools["write_file"].invoke({"path": "/home/paper/paper.md", "content": "x"})
    assert answer.startswith("Error:") and "read-only" in answer


def test_a_link_planted_by_sandboxed_code_is_not_followed_by_the_file_tools(
        workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace)
    tools["bash"].invoke({"command": "ln -s /etc/passwd /home/submission/pw"})
    answer = tools["read_file"].invoke({"path": "/home/submission/pw"})
    assert answer.startswith("Error:") and "root:" not in answer


def test_bash_timeout_and_output_cap(workspace: AgentWorkspace) -> None:
    tools = tools_by_name(workspace, command_timeout_s=1.0, output_chars=1000)
    slow = tools["bash"].invoke({"command": "sleep 5"})
    assert slow.startswith("Error:") and "timed out after 1 s" in slow
    long = tools["bash"].invoke({"command": "seq 1 5000"})
    assert len(long) <= 1000 + len("\n...[output truncated]...\n")
    assert long.startswith("[exit_code] 0") and long.endswith("5000\n\n[stderr]\n")
    assert "...[output truncated]..." in long


def test_save_mirrors_the_submission_and_a_fresh_sandbox_starts_from_it(
        workspace: AgentWorkspace, tmp_path: Path) -> None:
    workspace.write("/home/submission/model.py", "W = 2\n")
    workspace.save()
    assert (tmp_path / "mirror" / "model.py").read_text() == "W = 2\n"
    workspace.exec("rm /home/submission/model.py && echo 1 > /home/submission/new.py")
    workspace.save()
    assert sorted(p.name for p in (tmp_path / "mirror").iterdir()) == ["new.py"]
    workspace.close()  # a resumed run opens a new sandbox
    assert workspace.read("/home/submission/new.py") == b"1\n"


def test_head_tail_keeps_both_ends() -> None:
    text = "a" * 50 + "b" * 50
    cut = head_tail(text, 20)
    assert cut.startswith("a" * 10) and cut.endswith("b" * 10) and "truncated" in cut
    assert head_tail("short", 20) == "short"


def test_agent_paths_map_to_the_workspace() -> None:
    assert to_workspace("/home/submission/a.py") == "submission/a.py"
    assert to_workspace("submission/b/../c.py") == "submission/c.py"
    assert to_workspace("/workspace/paper") == "paper"
    assert to_workspace("/home") == "."
    with pytest.raises(PathOutsideWorkspace):
        to_workspace("/home/../root")
