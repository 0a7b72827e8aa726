"""The report of a `sabench run` folder: usage and cost per configuration (failed runs
included) and, in HTML, a page per run with every claim's verdict, reasoning and evidence with
the code shown, and the alignment-first scaffold's claim history, opened in a real browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.matrix import load_matrix
from sabench.benchmark.report import make_report, render_markdown
from sabench.benchmark.runner import run_matrix
from sabench.scaffolds import SCAFFOLDS
from tests.benchmark.report_fixtures import TWO_CONFIGS, TWO_RUNS, write_scores_dir
from tests.benchmark.test_report_browser import Opened, browser  # noqa: F401 - fixture
from tests.benchmark.test_runner import DEMO, demo_spec, read, sabench
from tests.sandbox.conftest import require_backend

PAPER = load_paper(DEMO / "papers" / "smoothlr")
SELF_CHECKING = "alignment-first"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder: the demo's scaffolds once each, plus a scaffold entry that raises."""
    require_backend("local")
    folder = tmp_path_factory.mktemp("runner-report")
    spec = demo_spec(folder, repeats=1)
    data = load_matrix(spec).spec
    scaffolds = [s.model_dump() for s in data.scaffolds]
    scaffolds.append({"name": "basic", "label": "raises", "options": {"max_steps": "many"}})
    spec = demo_spec(folder, repeats=1, scaffolds=scaffolds)
    summary = run_matrix(load_matrix(spec), folder / "out")
    assert summary.failed == 1 and summary.count("ok") == len(scaffolds) - 1
    return folder / "out"


def configs_of(out: Path) -> dict[str, dict[str, Any]]:
    return {p.parent.name: read(p) for p in (out / "records").glob("*/smoothlr.json")}


def test_usage_and_cost_per_configuration_come_from_the_records(out: Path) -> None:
    report = make_report(out / "scores", resamples=200)
    usage = report["usage"]
    records = configs_of(out)
    assert set(usage["configs"]) == set(records)  # the failed configuration too
    for config, record in records.items():
        row = usage["configs"][config]
        assert row["runs"] == 1 and row["status"] == {record["status"]: 1}
        assert row["stop_reasons"] == {record["stop_reason"]: 1}
        for key in ("calls", "input_tokens", "output_tokens", "cached_tokens"):
            assert row[key] == (record["usage"].get(key) or 0), (config, key)
        assert row["unpriced_calls"] == record["usage"].get("unpriced_calls", 0)
    failed = usage["configs"]["scripted_raises"]
    assert failed["status"] == {"error": 1} and "scripted_raises" not in report["configs"]
    text = render_markdown(report)
    assert "### Usage and cost per configuration" in text and "| scripted_raises |" in text
    assert "TypeError" in text  # the failed run's error, in the per-run table


def test_a_scores_dir_without_records_has_no_usage_section(tmp_path: Path) -> None:
    report = make_report(write_scores_dir(tmp_path / "scores", TWO_CONFIGS, TWO_RUNS),
                         resamples=200)
    assert "usage" not in report


@pytest.fixture(scope="module")
def html_report(out: Path) -> Iterator[Path]:
    target = out.parent / "report" / "report.html"
    done = sabench("report", str(out / "scores"), "--format", "html", "-o", str(target))
    assert done.returncode == 0, done.stderr
    yield target


def test_json_and_markdown_reports_stay_single_outputs(out: Path, tmp_path: Path) -> None:
    done = sabench("report", str(out / "scores"), "--format", "json", "-o",
                   str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert "usage" in json.loads((tmp_path / "r.json").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.browser
def test_every_run_has_a_page_reached_from_the_report(
        browser: Any, html_report: Path, out: Path) -> None:  # noqa: F811 - fixture
    report = Opened(browser, html_report)
    assert report.problems == []
    usage = {row[0]: row for row in report.table("usage")}
    assert set(usage) == set(configs_of(out)) and usage["scripted_raises"][2] == "error 1"
    report.page.click("#run-pages")
    report.page.wait_for_load_state()
    assert report.page.url.endswith("report-runs/index.html")
    rows = report.table("runs")
    assert {(r[0], r[2]) for r in rows} == {(c, r["status"])
                                            for c, r in configs_of(out).items()}
    links = report.page.eval_on_selector_all("a.run-link", "as => as.map(a => a.href)")
    assert len(links) == len(rows)
    report.page.close()


@pytest.mark.browser
def test_a_run_page_shows_every_claim_with_its_evidence_and_code(
        browser: Any, html_report: Path, out: Path) -> None:  # noqa: F811 - fixture
    page_path = html_report.parent / "report-runs" / "scripted_basic" / "smoothlr.html"
    opened = Opened(browser, page_path)
    page = opened.page
    assert opened.problems == []
    claims = page.eval_on_selector_all(".claim", "cs => cs.map(c => c.id)")
    assert claims == [f"claim-{c.id}" for c in PAPER.claims]
    score = read(out / "scores" / "scripted_basic" / "smoothlr.json")
    first = score["dimensions"]["D1"]["claims"][0]
    box = page.locator(f"#claim-{first['id']}")
    assert PAPER.claims[0].text in box.inner_text()
    assert first["judge_reasoning"] in box.inner_text()
    # The first piece of evidence, with the cited lines of the run's own repository.
    ref = first["evidence_refs"][0]
    file, start, end = re.match(r"(.+):(\d+)-(\d+)", ref).groups()
    cited = box.locator(".evidence").first.locator(".cited").all_inner_texts()
    lines = (out / "runs" / "scripted_basic" / "smoothlr" / "repo" / file).read_text() \
        .splitlines()[int(start) - 1:int(end)]
    assert [re.sub(r"^\s*\d+\s\s", "", c) for c in cited] == lines
    assert page.inner_text("#overall") == f"{score['overall_score']:.3f}"
    page.click("#back")
    page.wait_for_load_state()
    assert page.url.endswith("report/report.html")
    page.close()


@pytest.mark.browser
def test_a_failed_run_page_says_it_was_not_scored(
        browser: Any, html_report: Path) -> None:  # noqa: F811 - fixture
    page_path = html_report.parent / "report-runs" / "scripted_raises" / "smoothlr.html"
    opened = Opened(browser, page_path)
    assert opened.problems == []
    assert "TypeError" in opened.page.inner_text("#run-error")
    assert "never counted as 0" in opened.page.inner_text("#no-score")
    assert opened.page.inner_text("#status") == "error"
    opened.page.close()


@pytest.mark.browser
def test_the_alignment_first_page_shows_each_claims_history(
        browser: Any, html_report: Path, out: Path) -> None:  # noqa: F811 - fixture
    if SELF_CHECKING not in SCAFFOLDS:
        pytest.skip("the alignment-first scaffold is not registered")
    config = f"scripted_{SELF_CHECKING}"
    alignment = read(out / "runs" / config / "smoothlr" / "repo" / "alignment_report.json")
    opened = Opened(browser, html_report.parent / "report-runs" / config / "smoothlr.html")
    assert opened.problems == []
    rows = {row[0]: row[2:] for row in opened.table("alignment-history")}
    assert set(rows) == {c["id"] for c in alignment["claims"]}
    for claim in alignment["claims"]:
        checks = len(claim["passed_per_round"])
        shown = [cell.split("\n")[0][:4] for cell in rows[claim["id"]][:checks]]
        assert shown == ["pass" if p else "fail" for p in claim["passed_per_round"]]
        assert rows[claim["id"]][checks] == claim["location"]
    # The demo's drifted weight decay: flagged at the first check, with the reason, repaired after.
    first, second = rows["smoothlr-D1-002"][:2]
    assert first.startswith("fail") and "5e-4" in first and second == "pass"
    opened.page.close()
