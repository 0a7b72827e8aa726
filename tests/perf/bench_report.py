"""Time and peak memory of `sabench report` on the 360 release score files. Prints JSON.

Targets (issue 2): under 5 s and under 500 MB on a 2-core machine. Each format runs as a fresh
`sabench report` process, as a user runs it (interpreter start and imports included); the peak
resident memory is the child's ru_maxrss. An in-process breakdown says where the time goes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET_S, TARGET_MB = 5.0, 500.0
REPEATS = 3


def _one_run(scores: Path, fmt: str, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one `sabench report` process.

    CPU time is reported beside wall time because the machine is shared: when other work
    competes for the two cores, wall time grows but CPU time stays what the report costs.
    """
    code = "from sabench.benchmark.cli import main; main()"
    command = [sys.executable, "-c", code, "report", str(scores), "--format", fmt, "-o", str(out)]
    start = time.perf_counter()
    pid = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).pid
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"sabench report --format {fmt} failed (status {status})")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def _breakdown(scores: Path) -> dict[str, float]:
    """Seconds per phase, in this process (imports already warm for the report module)."""
    start = time.perf_counter()
    from sabench.benchmark.report import build_report, load_scores, render_markdown
    from sabench.benchmark.report_html import render_html

    imported = time.perf_counter()
    loaded = load_scores(scores)
    read = time.perf_counter()
    report = build_report(loaded)
    built = time.perf_counter()
    render_markdown(report)
    md = time.perf_counter()
    render_html(report)
    html = time.perf_counter()
    return {"import_s": imported - start, "load_s": read - imported, "build_s": built - read,
            "markdown_s": md - built, "html_s": html - md}


def main() -> None:
    data = Path(os.environ.get("SABENCH_DATA_DIR", REPO_ROOT.parent / "shared" / "sabench"))
    scores = data / "official_scores"
    if not scores.is_dir():
        print(json.dumps({"bench": "report", "skipped": f"no scores at {scores}"}))
        return
    files = sum(1 for _ in scores.glob("*/*.json"))
    figures: dict[str, object] = {"bench": "report", "score_files": files,
                                  "target_s": TARGET_S, "target_mb": TARGET_MB}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("md", "json", "html"):
            runs = [_one_run(scores, fmt, Path(tmp) / f"report.{fmt}") for _ in range(REPEATS)]
            times, cpu, peaks = ([run[i] for run in runs] for i in range(3))
            figures[fmt] = {"median_s": round(statistics.median(times), 3),
                            "max_s": round(max(times), 3),
                            "median_cpu_s": round(statistics.median(cpu), 3),
                            "peak_rss_mb": round(max(peaks), 1),
                            "output_kb": round((Path(tmp) / f"report.{fmt}").stat().st_size
                                               / 1024, 1)}
    figures["in_process"] = {k: round(v, 3) for k, v in _breakdown(scores).items()}
    worst_s = max(figures[f]["max_s"] for f in ("md", "json", "html"))  # type: ignore[index]
    worst_mb = max(figures[f]["peak_rss_mb"] for f in ("md", "json", "html"))  # type: ignore[index]
    figures["within_targets"] = worst_s < TARGET_S and worst_mb < TARGET_MB
    figures["load_average_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    sys.exit(main())
