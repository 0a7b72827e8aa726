"""Time and peak memory of `sabench report` on the 360 release score files. Prints JSON.

Targets (issue 2): under 5 s and under 500 MB on a 2-core machine. Each format runs as a fresh
`sabench report` process, as a user runs it (interpreter start and imports included); the peak
resident memory is the child's ru_maxrss. An in-process breakdown says where the time goes.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from measure import DATA_DIR, run_cli

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET_S, TARGET_MB = 5.0, 500.0
REPEATS = 3


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
    scores = DATA_DIR / "official_scores"
    if not scores.is_dir():
        print(json.dumps({"bench": "report", "skipped": f"no scores at {scores}"}))
        return
    files = sum(1 for _ in scores.glob("*/*.json"))
    figures: dict[str, object] = {"bench": "report", "score_files": files,
                                  "target_s": TARGET_S, "target_mb": TARGET_MB}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("md", "json", "html"):
            out = Path(tmp) / f"report.{fmt}"
            runs = [run_cli("report", str(scores), "--format", fmt, "-o", str(out))
                    for _ in range(REPEATS)]
            times, cpu = [r.wall_s for r in runs], [r.cpu_s for r in runs]
            peaks = [r.peak_mb for r in runs]
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
