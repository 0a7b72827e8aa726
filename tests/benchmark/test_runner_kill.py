"""`sabench run` killed with SIGKILL at random moments, then run again until it finishes:
no finished run is lost or run again, and no completed model call is repeated, counted at the
loopback model server that answers every run.

Four models (one name each, so the server can tell the runs apart) × BasicAgent × the demo
paper, two at a time. Each run makes ten calls with some latency each and runs commands
that take a while, so kills land during calls, during commands and between them. A kill is
nudged to come at least `SETTLE_S` after the latest reply, so that "completed" is clear: a
reply still in flight when the runner dies was never received, and asking again is right.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agent.model_server import LoopbackModelServer, Reply, Request
from tests.sandbox.conftest import require_backend

REPO = Path(__file__).resolve().parents[2]
PAPERS = REPO / "benchmark" / "demo" / "papers"
MODELS = ("m1", "m2", "m3", "m4")
SETTLE_S = 0.2
#: How late the server may receive a request sent before a kill: far less than a runner's start
#: (its imports alone take about a second), so no request of the next runner falls inside it.
IN_FLIGHT_S = 0.5
KILLS = 5


def script() -> list[Reply]:
    """Ten calls: commands (some slow), reads, then submit."""
    steps = []
    for i in range(9):
        if i % 3 == 2:
            steps.append(Reply(tool_calls=[("read_file_chunk", {"path": "/home/paper/paper.md"})]))
        else:
            pause = "sleep 0.5; " if i % 3 == 0 else ""
            steps.append(Reply(tool_calls=[("bash", {"command": f"{pause}echo {i} > "
                                                                f"/home/submission/f{i}"})]))
    return [*steps, Reply(tool_calls=[("submit", {"summary": "done"})])]


@dataclass
class Served:
    model: str
    turn: int
    received: float
    answered: float | None = None


@dataclass
class Responder:
    """Answers by the conversation's length (stateless, like a model) after some latency,
    noting when each request came and when its reply went out."""

    served: list[Served] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Request) -> Reply:
        turn = sum(m["role"] == "assistant" for m in request.body["messages"])
        entry = Served(request.body["model"], turn, time.monotonic())
        with self.lock:
            self.served.append(entry)
        time.sleep(0.2 + 0.3 * random.Random(f"{entry.model}{turn}").random())
        entry.answered = time.monotonic()
        return script()[min(turn, len(script()) - 1)]

    def last_answer(self) -> float:
        with self.lock:
            return max((s.answered or 0.0 for s in self.served), default=0.0)


def write_spec(tmp_path: Path, url: str) -> Path:
    spec = {"name": "kill", "models": [{"spec": f"openai-compatible:{m}", "base_url": url}
                                       for m in MODELS],
            "scaffolds": ["basic"], "papers": {"dataset": str(PAPERS)},
            "sandbox": {"backend": "local"}, "judge": "offline", "jobs": 2}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def finished_records(out: Path) -> dict[str, str]:
    """config -> record text, for the runs whose record says they finished."""
    found = {}
    for path in (out / "records").glob("*/smoothlr.json"):
        text = path.read_text()
        if json.loads(text)["status"] == "ok":
            found[path.parent.name] = text
    return found


def kill_when(command: list[str], env: dict[str, str], responder: Responder,
              ready: Any, group: bool, log: Path) -> float:
    """Start the runner, SIGKILL it once `ready()` holds, return the kill time."""
    with open(log, "ab") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=sink,
                                   start_new_session=True)
        while not ready() or time.monotonic() - responder.last_answer() < SETTLE_S:
            if process.poll() is not None:
                return time.monotonic()  # it finished first: nothing to kill
            time.sleep(0.01)
        killed = time.monotonic()
        # The whole runner (process group), or only its main process: the workers must die
        # with it, else they would go on calling the model beside the next runner.
        os.killpg(process.pid, signal.SIGKILL) if group else process.kill()
        process.wait(timeout=30)
    return killed


@pytest.fixture(autouse=True)
def _local_sandbox() -> None:
    require_backend("local")


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume(model_server: LoopbackModelServer,
                                              tmp_path: Path) -> None:
    responder = Responder()
    model_server.responder = responder
    out, log = tmp_path / "out", tmp_path / "runner.log"
    command = [sys.executable, "-m", "sabench.benchmark.cli", "run",
               str(write_spec(tmp_path, model_server.openai_url)), "--out", str(out)]
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    rng = random.Random(16)
    kills: list[float] = []
    finished_at_kill: list[dict[str, str]] = []
    for k in range(KILLS + 1):
        if k < KILLS:  # at a random moment
            deadline = time.monotonic() + rng.uniform(2.5, 6.0)
            ready = lambda deadline=deadline: time.monotonic() >= deadline  # noqa: E731
        else:  # once a run has finished (and, if still to come, before the others have)
            ready = lambda: len(finished_records(out)) > 0  # noqa: E731
        kills.append(kill_when(command, env, responder, ready, group=k % 2 == 1, log=log))
        finished_at_kill.append(finished_records(out))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr + log.read_text(errors="replace")

    configs = [f"{m}_basic" for m in MODELS]
    records = {c: json.loads((out / "records" / c / "smoothlr.json").read_text())
               for c in configs}
    assert all(r["status"] == "ok" and r["stop_reason"] == "submitted" for r in records.values())
    assert {p.parent.name for p in (out / "scores").glob("*/smoothlr.json")} == set(configs)
    for model, config in zip(MODELS, configs, strict=True):
        served = [s for s in responder.served if s.model == model]
        # The run counts a request before sending it: every request the server got is
        # counted, and a kill between counting and sending can add one more per kill.
        assert len(served) <= records[config]["requests"] <= len(served) + len(kills)
        assert_no_completed_call_repeated(served, kills)
    # A run finished at a kill is kept as it was: same record, no request after the kill.
    for killed, finished in zip(kills, finished_at_kill, strict=True):
        for config, text in finished.items():
            model = config.removesuffix("_basic")
            assert records[config] == json.loads(text)
            assert all(s.received < killed for s in responder.served if s.model == model)
    assert finished_at_kill[-1], "no kill came after a finished run"
    repeated = len(responder.served) - len(MODELS) * len(script())
    assert repeated >= 0, summary(responder.served)


def assert_no_completed_call_repeated(served: list[Served], kills: list[float]) -> None:
    """A turn asked twice is fine only when the earlier reply was still unsent at a kill."""
    by_turn: dict[int, list[Served]] = {}
    for entry in served:
        by_turn.setdefault(entry.turn, []).append(entry)
    assert sorted(by_turn) == list(range(len(script()))), "the run skipped or added a call"
    for turn, entries in by_turn.items():
        for earlier, later in zip(entries, entries[1:], strict=False):
            # a request the killed runner sent just before its kill may reach the server just
            # after it (a loaded machine); the next runner cannot send one that soon
            lost = [k for k in kills if earlier.received - IN_FLIGHT_S <= k <= later.received
                    and (earlier.answered is None or earlier.answered > k - 0.01)]
            assert lost, (f"turn {turn} of {earlier.model} was asked again although its "
                          f"reply had gone out before any kill: {entries}, kills {kills}")


def summary(entries: list[Served]) -> list[Any]:
    return [(e.model, e.turn, round(e.received, 2)) for e in entries]
