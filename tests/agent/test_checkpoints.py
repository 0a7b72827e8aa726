"""Checkpoint stores against a SQLite file and a real PostgreSQL server: the durability facts
the agent core relies on.

Graphs here record every node run in a side-effect file, so "not run again" is counted, not
inferred from state. A kill is a real SIGKILL: a second Python process runs the graph (this
module's `main`), its node kills its own process after recording itself, and a third
process resumes the thread. Established here (both stores, `durability="sync"`):

- a run that failed or was killed resumes at the node it was in; earlier nodes do not run
  again (the node in flight does: it never completed);
- a compiled child graph used as a node, and a child graph invoked inside a node function
  (once, twice, or two different ones), resume inside the child at its last completed node;
  the calling node's own code does run again;
- with `durability="exit"` a kill loses the whole run (nothing is checkpointed before the
  end); the default "async" loses recent steps some of the time, which
  tests/perf/bench_checkpoints.py measures rather than tests;
- the runtime context reaches the nodes as the same live object and is never stored.
"""

from __future__ import annotations

import json
import operator
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from sabench.agent.checkpoints import (
    CheckpointConfigError,
    completed,
    latest_state,
    open_checkpointer,
    parse_target,
    thread_config,
)
from tests.agent.postgres_server import fresh_database

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_TIMEOUT_S = 120


class Steps(TypedDict, total=False):
    done: Annotated[list[str], operator.add]  # the parent's nodes
    sub: Annotated[list[str], operator.add]  # the child graphs' nodes


class ChildSteps(TypedDict, total=False):
    sub: Annotated[list[str], operator.add]


@dataclass
class Ctx:
    """The runtime context: a side-effect file, where to fail or die, and live objects."""

    log: Path
    kill_at: str = ""  # "name" or "name#n": SIGKILL this process in the n-th run of name
    fail_at: frozenset[str] = frozenset()
    marker: str = "context-only-marker"
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: list[str] = field(default_factory=list)


def ran(log: Path) -> list[str]:
    """The node runs recorded in a side-effect file, in order."""
    return log.read_text().split() if log.is_file() else []


def step(name: str, key: str = "done") -> Callable[..., dict[str, list[str]]]:
    """A node that records its run, then dies or fails if the context says so."""

    def run(state: dict[str, Any], runtime: Runtime[Ctx]) -> dict[str, list[str]]:
        ctx = runtime.context
        with ctx.lock:
            ctx.seen.append(name)
            with ctx.log.open("a") as log:
                log.write(f"{name}\n")
        target, _, nth = ctx.kill_at.partition("#")
        if name == target and ran(ctx.log).count(name) == int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)
        if name in ctx.fail_at:
            raise RuntimeError(f"{name} failed")
        return {key: [name]}

    return run


def chain(names: list[str], schema: type = Steps, key: str = "done") -> StateGraph:
    """START -> names[0] -> ... -> END."""
    graph = StateGraph(schema, context_schema=Ctx)
    previous = START
    for name in names:
        graph.add_node(name, step(name, key))
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph


def child(prefix: str, size: int) -> Any:
    return chain([f"{prefix}{i}" for i in range(1, size + 1)], ChildSteps, "sub").compile()


def calling(*children: Any) -> Callable[..., dict[str, list[str]]]:
    """A node function that invokes child graphs in turn, passing the runtime context on."""

    def call(state: dict[str, Any], runtime: Runtime[Ctx]) -> dict[str, list[str]]:
        with runtime.context.log.open("a") as log:
            log.write("call\n")
        steps: list[str] = []
        for graph in children:
            steps += graph.invoke({}, context=runtime.context)["sub"]
        return {"sub": steps}

    return call


def parent(how: str) -> StateGraph:
    """p1 -> the child part -> p2, the child part being one of SUBGRAPH_WAYS."""
    graph = StateGraph(Steps, context_schema=Ctx)
    part: Any = {
        "node": lambda: child("c", 4),
        "call": lambda: calling(child("c", 4)),
        "call-two": lambda: calling(child("a", 3), child("b", 3)),
        "call-same": lambda: (lambda same: calling(same, same))(child("a", 3)),
    }[how]()
    graph.add_node("p1", step("p1"))
    graph.add_node("child", part)
    graph.add_node("p2", step("p2"))
    graph.add_edge(START, "p1")
    graph.add_edge("p1", "child")
    graph.add_edge("child", "p2")
    graph.add_edge("p2", END)
    return graph


def build(name: str) -> StateGraph:
    return chain(["n1", "n2", "n3", "n4", "n5"]) if name == "chain" else parent(name)


def main() -> None:
    """Worker process: run or resume one graph as the JSON job in argv[1] says; print the
    final state."""
    job = json.loads(sys.argv[1])
    context = Ctx(log=Path(job["log"]), kill_at=job.get("kill_at", ""))
    durability = {} if job["durability"] == "default" else {"durability": job["durability"]}
    with open_checkpointer(job["store"]) as saver:
        graph = build(job["graph"]).compile(checkpointer=saver)
        start = None if job.get("resume") else {}
        final = graph.invoke(start, thread_config(job["thread"]), context=context,
                             **durability)
    print(json.dumps(final))


def worker(**job: Any) -> subprocess.CompletedProcess[str]:
    code = "from tests.agent.test_checkpoints import main; main()"
    return subprocess.run([sys.executable, "-c", code, json.dumps(job, default=str)],
                          cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=WORKER_TIMEOUT_S, check=False)


def kill_then_resume(store: str, graph: str, kill_at: str, log: Path,
                     thread: str) -> dict[str, Any]:
    """Run `graph` in a process that SIGKILLs itself at `kill_at`, then resume it in another;
    the final state."""
    job = {"store": store, "graph": graph, "log": log, "thread": thread,
           "durability": "sync"}
    killed = worker(**job, kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    resumed = worker(**job, resume=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    return json.loads(resumed.stdout.strip().splitlines()[-1])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return str(tmp_path / "state" / "checkpoints.sqlite")


@pytest.fixture
def thread(tmp_path: Path) -> str:
    """A thread id of this test's own (the PostgreSQL database is shared by the session)."""
    return f"thread-{tmp_path.name}-{os.getpid()}"


def test_a_failed_run_resumes_at_the_failed_node(store: str, thread: str,
                                                  tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    with open_checkpointer(store) as saver:
        graph = build("chain").compile(checkpointer=saver)
        failing = Ctx(log, fail_at=frozenset({"n3"}))
        with pytest.raises(RuntimeError, match="n3 failed"):
            graph.invoke({}, thread_config(thread), context=failing, durability="sync")
        assert latest_state(graph, thread).next == ("n3",)
        assert not completed(graph, thread)
    with open_checkpointer(store) as saver:  # a new connection, as a new process would open
        graph = build("chain").compile(checkpointer=saver)
        final = graph.invoke(None, thread_config(thread), context=Ctx(log),
                             durability="sync")
        assert completed(graph, thread)
    assert ran(log) == ["n1", "n2", "n3", "n3", "n4", "n5"]
    assert final["done"] == ["n1", "n2", "n3", "n4", "n5"]


def test_a_run_killed_with_sigkill_resumes_in_another_process(store: str, thread: str,
                                                               tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    final = kill_then_resume(store, "chain", "n3", log, thread)
    assert ran(log) == ["n1", "n2", "n3", "n3", "n4", "n5"]  # n1, n2 ran once
    assert final["done"] == ["n1", "n2", "n3", "n4", "n5"]
    with open_checkpointer(store) as saver:
        assert completed(build("chain").compile(checkpointer=saver), thread)


# How a child graph runs inside the parent p1 -> child -> p2, where it is killed, and the
# node runs the two processes record between them. "call" is the node function that
# invokes the children: its own code runs again on resume, the children's completed
# nodes do not.
SUBGRAPH_WAYS = {
    "node": ("c3", "p1 c1 c2 c3 | c3 c4 p2", ["c1", "c2", "c3", "c4"]),
    "call": ("c3", "p1 call c1 c2 c3 | call c3 c4 p2", ["c1", "c2", "c3", "c4"]),
    "call-two": ("b2", "p1 call a1 a2 a3 b1 b2 | call b2 b3 p2",
                 ["a1", "a2", "a3", "b1", "b2", "b3"]),
    "call-same": ("a2#2", "p1 call a1 a2 a3 a1 a2 | call a2 a3 p2",
                  ["a1", "a2", "a3", "a1", "a2", "a3"]),
}


@pytest.mark.parametrize("how", list(SUBGRAPH_WAYS))
def test_a_child_graph_killed_inside_resumes_at_its_last_completed_node(
        how: str, store: str, thread: str, tmp_path: Path) -> None:
    kill_at, expected, child_steps = SUBGRAPH_WAYS[how]
    log = tmp_path / "ran.log"
    final = kill_then_resume(store, how, kill_at, log, thread)
    assert ran(log) == expected.replace("|", "").split()
    assert final == {"done": ["p1", "p2"], "sub": child_steps}


def test_exit_durability_loses_the_whole_run_to_a_kill(tmp_path: Path) -> None:
    store, log = str(tmp_path / "cp.sqlite"), tmp_path / "ran.log"
    killed = worker(store=store, graph="chain", log=log, thread="t", durability="exit",
                    kill_at="n3")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    with open_checkpointer(store) as saver:
        assert latest_state(build("chain").compile(checkpointer=saver), "t") is None


def test_a_child_node_sharing_a_reducer_key_hands_the_parents_items_back(
        tmp_path: Path) -> None:
    """Not about durability, but about child graphs as nodes: a child whose state shares a
    reducer key with the parent returns its whole state, input included, and the parent's
    reducer adds it again. The graphs above give the child a key of its own."""
    graph = StateGraph(Steps, context_schema=Ctx)
    graph.add_node("p1", step("p1"))
    graph.add_node("child", chain(["c1"]).compile())  # writes "done", like the parent
    graph.add_edge(START, "p1")
    graph.add_edge("p1", "child")
    final = graph.compile().invoke({}, context=Ctx(tmp_path / "ran.log"))
    assert final["done"] == ["p1", "p1", "c1"]


def test_the_runtime_context_reaches_nodes_and_is_never_stored(store: str, thread: str,
                                                               tmp_path: Path) -> None:
    context = Ctx(tmp_path / "ran.log", marker=f"only-in-the-context-{thread}")
    with open_checkpointer(store) as saver:
        graph = parent("call").compile(checkpointer=saver)
        final = graph.invoke({}, thread_config(thread), context=context, durability="sync")
        items = list(saver.list(thread_config(thread)))  # every namespace of the thread
        stored = [repr(item) for item in items]
    assert context.seen == ["p1", "c1", "c2", "c3", "c4", "p2"]  # this very object
    assert final == {"done": ["p1", "p2"], "sub": ["c1", "c2", "c3", "c4"]}
    assert {item.config["configurable"]["checkpoint_ns"] != "" for item in items} == {
        False, True}  # the parent's checkpoints and the child's
    assert not any(context.marker in text or "_thread.lock" in text for text in stored)
    if not store.startswith("postgres"):
        raw = b"".join(path.read_bytes() for path in Path(store).parent.iterdir())
        assert context.marker.encode() not in raw


def test_sqlite_files_are_in_wal_mode_and_their_folders_are_made(tmp_path: Path) -> None:
    path = tmp_path / "run" / "nested" / "cp.sqlite"
    with open_checkpointer(None, default_path=path) as saver:
        build("chain").compile(checkpointer=saver).invoke(
            {}, thread_config("t"), context=Ctx(tmp_path / "ran.log"), durability="sync")
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("SELECT count(*) FROM checkpoints").fetchone()[0] > 0


def test_sqlite_urls_follow_sqlalchemy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_target("sqlite:///rel/cp.sqlite") == ("sqlite", Path("rel/cp.sqlite"))
    assert parse_target(f"sqlite:///{tmp_path}/a.sqlite") == ("sqlite", tmp_path / "a.sqlite")
    with open_checkpointer("sqlite:///rel/cp.sqlite"):
        pass
    assert (tmp_path / "rel" / "cp.sqlite").is_file()


def test_thread_config_puts_run_options_at_the_top() -> None:
    assert thread_config("t", recursion_limit=500, user="x") == {
        "recursion_limit": 500, "configurable": {"thread_id": "t", "user": "x"}}


def not_a_database(tmp_path: Path) -> str:
    path = tmp_path / "notes.txt"
    path.write_text("these are notes, not a database\n" * 100)
    return str(path)


BAD_TARGETS: dict[str, tuple[Callable[[Path], Any], str]] = {
    "nothing": (lambda tmp: None, "no checkpoint store"),
    "empty": (lambda tmp: "", "unsupported checkpoint target ''"),
    "other scheme": (lambda tmp: "mysql://me:secret@db/runs",
                     "unsupported checkpoint target 'mysql://me:\\*\\*\\*@db/runs'"),
    "sqlite without a path": (lambda tmp: "sqlite://cp.db", "unsupported checkpoint target"),
    "not a database": (not_a_database, "notes.txt: not a usable checkpoint file"),
    "a folder": (lambda tmp: str(tmp), "cannot open the checkpoint file"),
    "no server": (lambda tmp: "postgresql://me:secret@127.0.0.1:1/runs",
                  r"postgresql://me:\*\*\*@127.0.0.1:1/runs: cannot use this PostgreSQL"),
    "password parameter": (lambda tmp: "postgresql://127.0.0.1:1/runs?password=secret",
                           r"password=\*\*\*: cannot use"),
}


@pytest.mark.parametrize("case", list(BAD_TARGETS))
def test_bad_targets_are_one_line_errors(case: str, tmp_path: Path) -> None:
    make, expected = BAD_TARGETS[case]
    with pytest.raises(CheckpointConfigError, match=expected) as info, \
            open_checkpointer(make(tmp_path)):
        pass
    assert "\n" not in str(info.value) and "secret" not in str(info.value)


def test_a_missing_postgres_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres", None)
    with pytest.raises(CheckpointConfigError, match=r"pip install 'sabench\[postgres\]'"), \
            open_checkpointer("postgresql://127.0.0.1/x"):
        pass


@pytest.mark.postgres
def test_concurrent_first_uses_of_a_database_take_turns(postgres_url: str,
                                                        tmp_path: Path) -> None:
    """LangGraph's setup() collides with itself on an empty database (duplicate keys);
    parallel runs of `sabench run --checkpoint postgresql://...` all open it at once."""
    url = fresh_database(postgres_url, f"setup_{os.getpid()}_{tmp_path.name[-20:]}".lower())
    barrier, errors = threading.Barrier(6), []

    def first_use() -> None:
        barrier.wait()
        try:
            with open_checkpointer(url):
                pass
        except CheckpointConfigError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=first_use) for _ in range(6)]
    for each in threads:
        each.start()
    for each in threads:
        each.join(timeout=60)
    assert errors == []


@pytest.mark.postgres
def test_a_dropped_connection_is_replaced(postgres_url: str, tmp_path: Path) -> None:
    """A server restart or a dropped idle connection does not end a long run."""
    import psycopg

    url = fresh_database(postgres_url, f"drop_{os.getpid()}_{tmp_path.name[-20:]}".lower())
    log = tmp_path / "ran.log"
    with open_checkpointer(url) as saver:
        graph = build("chain").compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="n3 failed"):
            graph.invoke({}, thread_config("t"), context=Ctx(log, fail_at=frozenset({"n3"})),
                         durability="sync")
        with psycopg.connect(url, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
        assert dropped == (1,)
        graph.invoke(None, thread_config("t"), context=Ctx(log), durability="sync")
        assert completed(graph, "t")
    assert ran(log) == ["n1", "n2", "n3", "n3", "n4", "n5"]
