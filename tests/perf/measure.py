"""What the perf scripts share: where the SA-Bench data is, and timing one `sabench` process.

The scripts run as `python tests/perf/bench_<area>.py`, so this folder is on sys.path and they
import this module as `measure`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("SABENCH_DATA_DIR") or REPO_ROOT.parent / "shared" / "sabench")


def reference_cpu_seconds(repeats: int = 5) -> float:
    """CPU seconds of a fixed pure-Python workload (dicts, sets, strings, a regex), best of
    `repeats`: the speed of this machine right now, printed beside timings so that figures
    taken on different days can be compared (the shared machines drift by up to 1.6x)."""
    import re

    word = re.compile(r"[a-z_]+")
    text = " ".join(f"name_{i % 97} = value_{i % 89} + {i}" for i in range(4000))
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        counts: dict[str, int] = {}
        for _ in range(20):
            for token in word.findall(text):
                counts[token] = counts.get(token, 0) + 1
            seen = {line.lower() for line in text.split("+")}
            counts["_"] = len(seen) + text.find("name_96 = value_88")
        best = min(best, time.process_time() - start)
    return round(best, 4)


@contextmanager
def runs_root() -> Iterator[Path]:
    """$SABENCH_RUNS_ROOT when set (a folder made by unpack.sh), else the development runs
    unpacked into a temporary folder for the duration (the unpacking is not timed)."""
    configured = os.environ.get("SABENCH_RUNS_ROOT")
    if configured:
        yield Path(configured)
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["sh", str(DATA_DIR / "unpack.sh"), tmp], check=True, capture_output=True)
        yield Path(tmp)


@dataclass(frozen=True)
class CliRun:
    """One finished `sabench` process. CPU time is given beside wall time because the machine
    may be shared: other work stretches wall time, not what the command itself costs."""

    wall_s: float
    cpu_s: float
    peak_mb: float  # the process's largest resident set, its reaped children included
    stdout: str


def run_cli(*args: str, ok_codes: tuple[int, ...] = (0,)) -> CliRun:
    """Run `sabench ARGS...` as a fresh process and measure it; other exit codes stop the bench.

    Output goes to temporary files rather than pipes: the process is reaped with wait4 (for its
    own resource usage) before anything is read, so a pipe could fill up and block it.
    """
    code = "from sabench.benchmark.cli import main; main()"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        pid = subprocess.Popen([sys.executable, "-c", code, *args], stdout=out, stderr=err).pid
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    exit_code = os.waitstatus_to_exitcode(status)
    if exit_code not in ok_codes:
        raise SystemExit(f"sabench {' '.join(args[:2])} failed ({exit_code}): "
                         f"{stderr.strip()[-500:]}")
    return CliRun(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime,
                  peak_mb=usage.ru_maxrss / 1024,  # Linux reports KiB
                  stdout=stdout)
