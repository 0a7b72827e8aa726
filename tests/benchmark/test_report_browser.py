"""The HTML report in a real headless Chromium (Debian's, driven by Playwright).

Playwright's own browser download is not available here, so the system chromium is launched
through `executable_path` ($SABENCH_CHROMIUM overrides the path). Without chromium the test
skips, except in CI (CI=true) or with SABENCH_REQUIRE_BROWSER=1, where it must run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.cli_report import ReportFormat, render
from sabench.benchmark.report import METRICS, fmt, make_report
from tests.benchmark.report_fixtures import TWO_CONFIGS, TWO_RUNS, write_scores_dir

pytestmark = pytest.mark.browser


def _chromium() -> str | None:
    return os.environ.get("SABENCH_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")


def _require(available: bool, why: str) -> None:
    if available:
        return
    if os.environ.get("CI", "").lower() in ("true", "1") or \
            os.environ.get("SABENCH_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{why} (CI / SABENCH_REQUIRE_BROWSER=1 requires the browser test)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    _require(executable is not None, "no chromium on PATH")
    _require(importlib.util.find_spec("playwright") is not None, "playwright is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=["--no-sandbox"])
        yield launched
        launched.close()


class Opened:
    """A page with everything the browser complained about while loading it."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.problems: list[str] = []
        self.page = browser.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on("requestfailed", lambda req: self.problems.append(f"failed: {req.url}"))
        self.page.goto(path.as_uri(), wait_until="load")

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def table(self, table_id: str) -> list[list[str]]:
        return self.page.eval_on_selector_all(
            f"#{table_id} tbody tr",
            "rows => rows.map(r => Array.from(r.cells, c => c.textContent.trim()))")


def _write_html(report: dict, path: Path) -> Path:
    path.write_text(render(report, ReportFormat.HTML), encoding="utf-8")
    return path


def test_report_renders_without_errors(browser: Any, tmp_path: Path) -> None:
    report = make_report(write_scores_dir(tmp_path / "scores", TWO_CONFIGS, TWO_RUNS),
                         resamples=300)
    opened = Opened(browser, _write_html(report, tmp_path / "report.html"))
    page = opened.page
    assert opened.problems == []
    assert page.title() == "SA-Bench report"
    images = page.eval_on_selector_all(
        "img", "imgs => imgs.map(i => [i.id, i.complete, i.naturalWidth, i.naturalHeight])")
    # three plots always, a fourth for the failure categories that a_m's verdicts carry
    assert [i[0] for i in images] == ["plot-dimensions", "plot-levels", "plot-runs",
                                      "plot-failure-categories"]
    for image_id, complete, width, height in images:
        assert complete and width > 0 and height > 0, image_id
    rows = {row[0]: row for row in opened.table("configs")}
    for name, values in report["configs"].items():
        assert rows[name][3:3 + len(METRICS)] == [fmt(values[m]) for m in METRICS]
    assert rows["b_m"][-1] == "1"  # the failed judgement, shown as an error count
    assert page.is_visible("#error-banner")
    errors = opened.table("errors")
    assert [row[:3] for row in errors] == [["b_m", "p2", "1"]]
    categories = opened.table("failure-categories")
    assert ["a_m", "D1", "1", "1", "0"] in categories
    page.close()


@pytest.mark.dataset
def test_release_report_renders(browser: Any, official_scores_dir: Path, tmp_path: Path) -> None:
    report = make_report(official_scores_dir, resamples=500)
    opened = Opened(browser, _write_html(report, tmp_path / "release.html"))
    assert opened.problems == []
    widths = opened.page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
    assert len(widths) == 3 and all(w > 0 for w in widths)
    head = dict(opened.table("headline"))
    assert head["zero-scored claims"] == str(report["headline"]["zero_scored_claims"])
    assert head["best configuration"] == report["headline"]["best_config"]
    matrix = opened.table("matrix")
    assert len(matrix) == len(report["marginals"]["model"]) + 1
    assert not opened.page.is_visible("#error-banner")
    opened.page.close()
