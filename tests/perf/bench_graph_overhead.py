"""The agent graph's own cost per step, and the SQLite checkpoint writes within it.

Replays a few development BasicAgent runs (recorded replies, tools run for real in the local
sandbox) two ways: with an in-memory checkpoint store and with the SQLite file a
real run uses. For each it prints, per model step (one model call and the tool calls it asked
for), the wall time spent outside model and tool calls, and for SQLite the time inside the
saver's `put` and `put_writes` (what durability="sync" waits for).

    python tests/perf/bench_graph_overhead.py
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from measure import DATA_DIR

import sabench.benchmark.reproduce as reproduce_module
from sabench.benchmark.replay import replay_run

RUNS = ("deepseek_basic/adjoint-matching", "deepseek_basic/ca2-vdm", "gemini-flash_basic/hi-mar",
        "gpt4o_basic/luno")
SAVER_CALLS = ("put", "put_writes")


class SaverClock:
    """Wraps SqliteSaver's writes to sum the time spent in them."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        originals = {name: getattr(SqliteSaver, name) for name in SAVER_CALLS}
        for name, original in originals.items():
            setattr(SqliteSaver, name, self._timed(original))
        try:
            yield
        finally:
            for name, original in originals.items():
                setattr(SqliteSaver, name, original)

    def _timed(self, original: Any) -> Any:
        def timed(saver: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(saver, *args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
        return timed


@contextlib.contextmanager
def in_memory(target: Any, default: Path) -> Iterator[InMemorySaver]:
    yield InMemorySaver()


def outside_per_step(out: Path) -> tuple[float, int]:
    record = json.loads((out / "record.json").read_text())
    timings = record["timings"]
    inside = sum(timings.get(k, 0.0) for k in ("scaffold_s", "prepare_s", "collect_s",
                                                "score_s"))
    steps = sum(1 for entry in record["trace"] if entry["kind"] == "model")
    return (timings["wall_s"] - inside) / max(1, steps), steps


def replay_all(tmp: Path, mode: str, clock: SaverClock) -> dict[str, Any]:
    per_step, writes, steps_total = [], [], 0
    for run in RUNS:
        out = tmp / mode / run.replace("/", "_")
        before = clock.seconds
        replay_run(DATA_DIR / "transcripts" / run, DATA_DIR / "papers", out, backend="local")
        outside, steps = outside_per_step(out)
        per_step.append(outside)
        writes.append((clock.seconds - before) / max(1, steps))
        steps_total += steps
    result = {"steps": steps_total,
              "outside_ms_per_step_median": round(1000 * statistics.median(per_step), 2)}
    if mode == "sqlite":
        result["checkpoint_write_ms_per_step_median"] = round(
            1000 * statistics.median(writes), 2)
    return result


def main() -> None:
    clock = SaverClock()
    figures: dict[str, Any] = {"runs": list(RUNS)}
    original = reproduce_module.open_checkpoints
    with tempfile.TemporaryDirectory() as tmp, clock.installed():
        reproduce_module.open_checkpoints = in_memory
        figures["memory"] = replay_all(Path(tmp), "memory", clock)
        reproduce_module.open_checkpoints = original
        figures["sqlite"] = replay_all(Path(tmp), "sqlite", clock)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
