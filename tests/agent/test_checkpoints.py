"""Checkpoint stores: SQLite files and a real PostgreSQL server, resuming a graph that failed."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from sabench.agent.checkpoints import CheckpointConfigError, open_checkpointer, thread_config


class Counted(TypedDict, total=False):
    done: Annotated[list[str], operator.add]


def counting_graph(ran: list[str], fail_at: set[str]):
    """a -> b -> c; each node notes that it ran, and fails while its name is in `fail_at`."""

    def node(name: str):
        def run(state: Counted) -> Counted:
            ran.append(name)
            if name in fail_at:
                raise RuntimeError(f"{name} failed")
            return {"done": [name]}
        return run

    graph = StateGraph(Counted)
    for name in "abc":
        graph.add_node(name, node(name))
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", "c")
    graph.add_edge("c", END)
    return graph


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return str(tmp_path / "state" / "checkpoints.sqlite")


def test_a_failed_run_resumes_after_its_last_completed_node(store: str, tmp_path: Path) -> None:
    ran: list[str] = []
    fail_at = {"c"}
    config = thread_config(f"resume-{tmp_path.name}")
    with open_checkpointer(store) as saver:
        graph = counting_graph(ran, fail_at).compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="c failed"):
            graph.invoke({}, config, durability="sync")
    fail_at.clear()
    with open_checkpointer(store) as saver:  # a new connection, as a new process would open
        graph = counting_graph(ran, fail_at).compile(checkpointer=saver)
        assert graph.get_state(config).next == ("c",)
        final = graph.invoke(None, config, durability="sync")
    assert ran == ["a", "b", "c", "c"]  # a and b ran once
    assert final["done"] == ["a", "b", "c"]


def test_the_default_path_is_used_without_a_target(tmp_path: Path) -> None:
    with open_checkpointer(None, default_path=tmp_path / "run" / "cp.sqlite") as saver:
        counting_graph([], set()).compile(checkpointer=saver).invoke(
            {}, thread_config("t"), durability="sync")
    assert (tmp_path / "run" / "cp.sqlite").is_file()
    with open_checkpointer(f"sqlite:///{tmp_path / 'b.sqlite'}"):
        pass
    assert (tmp_path / "b.sqlite").is_file()


def test_bad_targets_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(CheckpointConfigError, match="no checkpoint store"), \
            open_checkpointer(None):
        pass
    closed = "postgresql://user:secret@127.0.0.1:1/none"
    with pytest.raises(CheckpointConfigError) as info, open_checkpointer(closed):
        pass
    assert "secret" not in str(info.value) and "user:***@" in str(info.value)
    assert "\n" not in str(info.value)
