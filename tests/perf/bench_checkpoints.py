"""What checkpoints cost per agent step, and what a SIGKILL loses under each durability mode.

Prints one JSON object:

* `writes`: a graph whose state is shaped like an agent's (a message list growing by two
  messages of ~2 kB per step: a reply and a tool result), run for 100 steps with
  `durability="sync"`; per step the time inside the saver's `put` and `put_writes` (what the
  step waits for), median, p95 and the last step's, and the store's size at the end.
  `sqlite` is a file on disk opened by `open_checkpointer` (WAL, synchronous=NORMAL: no
  fsync per commit, only at WAL checkpoints, which make the p95); `postgres` uses the
  server of $SABENCH_POSTGRES_URL (skipped without it; each commit waits for the server's
  WAL flush unless it runs with synchronous_commit=off). LangGraph stores a changed
  channel whole, so a step writes the entire message list: the cost grows with the run.
* `graph_overhead`: the same graph's wall time per step with no checkpointer and with an
  in-memory saver, the difference being LangGraph's own checkpointing work (serialising
  aside from any storage).
* `kill`: a five-node graph run in a child process that SIGKILLs itself when the fourth node
  starts, then resumed in another; per durability mode, in how many trials completed nodes
  ran again, and at most how many. ("sync" should be 0; "exit" loses everything.)

    python tests/perf/bench_checkpoints.py [--trials N]
    SABENCH_POSTGRES_URL=postgresql://user@host/db python tests/perf/bench_checkpoints.py
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from measure import REPO_ROOT, reference_cpu_seconds

from sabench.agent.checkpoints import open_checkpointer, redact, thread_config

STEPS = 100
MESSAGE_CHARS = 2000
WORKER = "from tests.agent.test_checkpoints import main; main()"


class AgentLike(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    step: int


def agent_step(state: AgentLike) -> AgentLike:
    """One model reply with a tool call and the tool's result, ~2 kB each."""
    step = state.get("step", 0) + 1
    call_id = f"call_{step}"
    text = (f"step {step}: " + "lorem ipsum dolor sit amet " * 80)[:MESSAGE_CHARS]
    reply = AIMessage(content=text, tool_calls=[{"name": "bash", "args": {"cmd": f"ls {step}"},
                                                 "id": call_id}])
    result = ToolMessage(content=text[::-1], tool_call_id=call_id)
    return {"messages": [reply, result], "step": step}


def agent_graph(checkpointer: Any) -> Any:
    graph = StateGraph(AgentLike)
    graph.add_node("step", agent_step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: END if s["step"] >= STEPS else "step")
    return graph.compile(checkpointer=checkpointer)


class WriteClock:
    """Sums the time a saver spends in put_writes and put, per step (closed by each put)."""

    def __init__(self, saver: Any) -> None:
        self.pending = 0.0
        self.steps: list[float] = []
        saver.put_writes = self._timed(saver.put_writes, closes_step=False)
        saver.put = self._timed(saver.put, closes_step=True)

    def _timed(self, original: Callable[..., Any], *, closes_step: bool) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.pending += time.perf_counter() - started
                if closes_step:
                    self.steps.append(self.pending)
                    self.pending = 0.0
        return timed


def ms(seconds: float) -> float:
    return round(1000 * seconds, 3)


def summary(per_step: list[float]) -> dict[str, Any]:
    ordered = sorted(per_step)
    return {"steps": len(per_step), "median_ms": ms(statistics.median(ordered)),
            "p95_ms": ms(ordered[int(0.95 * (len(ordered) - 1))]),
            "last_step_ms": ms(per_step[-1]), "total_ms": ms(sum(per_step))}


def timed_writes(target: str) -> dict[str, Any]:
    with open_checkpointer(target) as saver:
        clock = WriteClock(saver)
        graph = agent_graph(saver)
        config = thread_config(f"bench-{uuid.uuid4().hex}", recursion_limit=STEPS + 10)
        final = graph.invoke({}, config, durability="sync")
    assert len(final["messages"]) == 2 * STEPS
    return summary(clock.steps[-STEPS:])  # the first puts are the input's and START's


def sqlite_writes(folder: Path) -> dict[str, Any]:
    path = folder / "checkpoints.sqlite"
    result = timed_writes(str(path))
    result["file_mb"] = round(sum(p.stat().st_size for p in folder.iterdir()) / 2**20, 2)
    return result


def postgres_writes() -> dict[str, Any]:
    url = os.environ.get("SABENCH_POSTGRES_URL")
    if not url:
        return {"skipped": "set SABENCH_POSTGRES_URL to a database to measure"}
    return {"url": redact(url), **timed_writes(url)}


def per_step_wall(checkpointer: Any, repeats: int = 3) -> float:
    """Best of `repeats` runs: wall seconds per step."""
    best = float("inf")
    for _ in range(repeats):
        graph = agent_graph(checkpointer)
        started = time.perf_counter()
        # LangGraph 1.2 fails on durability="sync" without a checkpointer (AttributeError).
        durability = {"durability": "sync"} if checkpointer else {}
        graph.invoke({}, thread_config(uuid.uuid4().hex, recursion_limit=STEPS + 10),
                     **durability)
        best = min(best, (time.perf_counter() - started) / STEPS)
    return best


def graph_overhead() -> dict[str, Any]:
    bare, memory = per_step_wall(None), per_step_wall(InMemorySaver())
    return {"no_checkpointer_ms_per_step": ms(bare), "in_memory_ms_per_step": ms(memory),
            "checkpointing_ms_per_step": ms(memory - bare)}


def kill_trial(folder: Path, durability: str) -> int:
    """Completed nodes that ran again after a SIGKILL at the start of n4 and a resume."""
    job = {"store": str(folder / "cp.sqlite"), "graph": "chain", "log": str(folder / "ran"),
           "thread": "t", "durability": durability}
    for extra in ({"kill_at": "n4"}, {"resume": True}):
        done = subprocess.run([sys.executable, "-c", WORKER, json.dumps({**job, **extra})],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                              check=False)
        if "resume" in extra and done.returncode != 0:
            return 3  # nothing to resume from: the whole run starts again
        if "kill_at" in extra and done.returncode != -signal.SIGKILL:
            raise SystemExit(f"the worker was not killed: {done.stderr[-500:]}")
    ran = (folder / "ran").read_text().split()
    return sum(ran.count(name) - 1 for name in ("n1", "n2", "n3"))


def kill_losses(trials: int) -> dict[str, Any]:
    result = {}
    for durability, count in (("async", trials), ("sync", trials), ("exit", 1)):
        reruns = []
        for _ in range(count):
            with tempfile.TemporaryDirectory() as tmp:
                reruns.append(kill_trial(Path(tmp), durability))
        result[durability] = {"trials": count,
                              "trials_with_completed_nodes_run_again": sum(map(bool, reruns)),
                              "most_completed_nodes_run_again": max(reruns)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10, help="kill trials per mode")
    args = parser.parse_args()
    figures: dict[str, Any] = {"reference_cpu_s": reference_cpu_seconds(),
                               "steps": STEPS, "message_chars": MESSAGE_CHARS}
    with tempfile.TemporaryDirectory() as tmp:
        figures["writes"] = {"sqlite": sqlite_writes(Path(tmp)), "postgres": postgres_writes()}
    figures["graph_overhead"] = graph_overhead()
    figures["kill"] = kill_losses(args.trials)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
