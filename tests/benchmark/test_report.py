"""The report on small score files written here: definitions, failed judgements, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from statistics import fmean, median

import pytest

from sabench.benchmark import stats
from sabench.benchmark.cli_report import ReportFormat, render
from sabench.benchmark.report import (
    SECTIONS,
    ScoresDirError,
    build_report,
    fmt,
    load_scores,
    make_report,
    round_half_up,
)
from sabench.verifiers.types import ResultFileError
from tests.benchmark.report_fixtures import TWO_CONFIGS, TWO_RUNS, write_scores_dir

# Run-level scores of TWO_RUNS, worked out by hand (the failed b_m/p2 D1 claim is left out).
A_RUNS = {"p1": (0.75, 0.25, 0.0, 0.75), "p2": (0.5, 0.5, 1.0, 0.25), "p3": (0.25, 0.0, 0.5, 0.0)}
B_RUNS = {"p1": (0.5, 0.0, 0.0, 0.25), "p2": (1.0, 0.25, 0.5, 0.0), "p3": (0.0, 0.25, 0.25, 0.5)}


@pytest.fixture()
def two_dir(tmp_path: Path) -> Path:
    return write_scores_dir(tmp_path / "scores", TWO_CONFIGS, TWO_RUNS)


@pytest.fixture()
def two_report(two_dir: Path) -> dict:
    return make_report(two_dir, resamples=500)


def _config_mean(runs: dict[str, tuple[float, ...]], dim: int | None) -> float:
    if dim is None:
        return fmean(fmean(dims) for dims in runs.values())
    return fmean(dims[dim] for dims in runs.values())


def test_config_scores_follow_the_definitions(two_report: dict) -> None:
    for name, runs in (("a_m", A_RUNS), ("b_m", B_RUNS)):
        row = two_report["configs"][name]
        assert row["overall"] == pytest.approx(_config_mean(runs, None))
        for i, dim in enumerate(("D1", "D2", "D3", "D4")):
            assert row[dim] == pytest.approx(_config_mean(runs, i)), (name, dim)
        assert row["n_papers"] == 3
    assert two_report["configs"]["a_m"]["scaffold"] == "ScaffoldA"


def test_marginals_mean_row_and_headline(two_report: dict) -> None:
    a, b = two_report["configs"]["a_m"], two_report["configs"]["b_m"]
    model = two_report["marginals"]["model"]["ModelM"]
    assert model["overall"] == pytest.approx((a["overall"] + b["overall"]) / 2)
    assert two_report["marginals"]["scaffold"]["ScaffoldB"]["D3"] == pytest.approx(b["D3"])
    assert two_report["mean_row"]["D4"] == pytest.approx((a["D4"] + b["D4"]) / 2)
    head = two_report["headline"]
    overall_runs = [fmean(d) for d in (*A_RUNS.values(), *B_RUNS.values())]
    assert head["overall_mean"] == pytest.approx(fmean(overall_runs))
    assert head["overall_median"] == pytest.approx(median(overall_runs))
    assert head["best_config"] == "a_m"
    assert head["best_score"] == pytest.approx(a["overall"])


def _judged_claims(dim: str | None = None) -> list[float]:
    cells = [cell for papers in TWO_RUNS.values() for claims in papers.values()
             for d, row in claims.items() if dim in (None, d) for cell in row]
    return [c[0] if isinstance(c, tuple) else c for c in cells if c is not None]


def test_claim_rates_exclude_failed_judgements(two_report: dict) -> None:
    claims = _judged_claims()
    head = two_report["headline"]
    assert head["scored_claims"] == len(claims)
    assert head["zero_scored_claims"] == claims.count(0.0)
    assert head["share_claims_le_0.25"] == pytest.approx(
        sum(c <= 0.25 for c in claims) / len(claims))
    d1 = _judged_claims("D1")
    stats_d1 = two_report["dimension_statistics"]["D1"]
    assert stats_d1["n_claims"] == len(d1)
    assert stats_d1["zero_rate"] == pytest.approx(d1.count(0.0) / len(d1))
    assert stats_d1["full_mark_rate"] == pytest.approx(d1.count(1.0) / len(d1))
    assert stats_d1["share_ge_0.5"] == pytest.approx(sum(c >= 0.5 for c in d1) / len(d1))
    runs_d1 = [d[0] for d in (*A_RUNS.values(), *B_RUNS.values())]
    assert stats_d1["median"] == pytest.approx(median(runs_d1))


def test_failed_judgement_is_an_error_in_json(two_report: dict) -> None:
    # Counted as 0, b_m's D1 would be mean(0.5, 0.5, 0.0); left out, p2's D1 is 1.0.
    assert two_report["configs"]["b_m"]["D1"] == pytest.approx(fmean([0.5, 1.0, 0.0]))
    errors = two_report["errors"]
    assert errors["claims"] == 1
    assert errors["by_config"]["b_m"]["D1"] == 1
    assert errors["by_config"]["a_m"] == {"D1": 0, "D2": 0, "D3": 0, "D4": 0}
    assert [(r["config"], r["paper_id"], r["errors"]) for r in errors["runs"]] == [("b_m", "p2", 1)]
    assert "invalid JSON" in errors["runs"][0]["first_error"]
    assert two_report["score_distribution"]["b_m"]["D1"]["error"] == 1
    assert two_report["score_distribution"]["b_m"]["D1"]["0"] == 2
    assert two_report["dimension_statistics"]["D1"]["errors"] == 1
    assert two_report["headline"]["claim_errors"] == 1
    assert two_report["runs"]["b_m"]["p2"]["errors"] == 1


def test_failed_judgement_is_an_error_in_markdown_and_html(two_report: dict) -> None:
    md = render(two_report, ReportFormat.MD)
    matrix = [line for line in md.splitlines() if line.startswith("| b_m |")][0]
    assert matrix.rstrip(" |").endswith("| 3 | 1")  # papers, claim errors
    assert "| b_m | p2 | 1 | no | judge returned invalid JSON twice |" in md
    assert "1 claim judgements failed in 1 runs" in md
    html = render(two_report, ReportFormat.HTML)
    assert 'id="error-banner"' in html
    assert '<td class="error">1</td>' in html
    assert "judge returned invalid JSON twice" in html


def test_unscored_run_is_left_out_and_flagged(tmp_path: Path) -> None:
    runs = {"c": {"p1": {"D1": [1.0], "D2": [0.5]}, "p2": {"D1": [None], "D2": [None]}}}
    report = make_report(write_scores_dir(tmp_path, {"c": ("S", "M")}, runs), resamples=200)
    assert report["configs"]["c"]["overall"] == pytest.approx(0.75)
    assert report["configs"]["c"]["n_papers"] == 2
    assert report["confidence_intervals"]["configs"]["c"]["overall"]["n"] == 1
    flagged = report["errors"]["runs"]
    assert [(r["paper_id"], r["errors"], r["unscored"]) for r in flagged] == [("p2", 2, True)]
    assert report["configs"]["c"]["D3"] is None
    md = render(report, ReportFormat.MD)
    assert "| c | S | M | 0.750 | 1.000 | 0.500 | – | – | 2 | 2 |" in md


def test_json_format_has_the_published_keys(two_report: dict) -> None:
    data = json.loads(render(two_report, ReportFormat.JSON))
    assert set(data["configs"]["a_m"]) >= {"overall", "D1", "D2", "D3", "D4"}
    assert set(data["marginals"]) == {"model", "scaffold"}
    assert set(data["mean_row"]) == {"overall", "D1", "D2", "D3", "D4"}
    assert set(data["dimension_statistics"]["D2"]) >= {
        "mean", "median", "share_ge_0.5", "full_mark_rate", "zero_rate"}
    assert set(data["headline"]) >= {"overall_mean", "overall_median", "share_claims_le_0.25",
                                     "zero_scored_claims", "best_config", "best_score"}
    assert data["configs"]["a_m"]["overall"] == two_report["configs"]["a_m"]["overall"]


def test_paired_comparison_is_per_paper(two_report: dict) -> None:
    (entry,) = two_report["paired_comparisons"]
    assert (entry["model"], entry["scaffold_a"], entry["scaffold_b"]) == (
        "ModelM", "ScaffoldA", "ScaffoldB")
    diffs = [fmean(A_RUNS[p]) - fmean(B_RUNS[p]) for p in A_RUNS]
    overall = entry["metrics"]["overall"]
    assert overall["mean_diff"] == pytest.approx(fmean(diffs))
    assert (overall["wins"], overall["losses"], overall["ties"]) == (
        sum(d > 0 for d in diffs), sum(d < 0 for d in diffs), 0)
    assert min(diffs) <= overall["low"] <= overall["mean_diff"] <= overall["high"] <= max(diffs)
    assert entry["n_pairs"] == 3


def test_paired_comparison_uses_common_papers_only(tmp_path: Path) -> None:
    runs = {"a": {p: {"D1": [1.0]} for p in ("p1", "p2", "p3")},
            "b": {p: {"D1": [0.5]} for p in ("p2", "p3", "p4")}}
    report = make_report(write_scores_dir(tmp_path, {"a": ("SA", "M"), "b": ("SB", "M")}, runs),
                         resamples=200)
    (entry,) = report["paired_comparisons"]
    assert entry["n_pairs"] == 2
    assert entry["metrics"]["D1"]["mean_diff"] == pytest.approx(0.5)
    assert entry["metrics"]["D2"] is None


def test_configs_sharing_model_and_scaffold_are_averaged_in_the_matrix(tmp_path: Path) -> None:
    runs = {"s1": {"p": {"D1": [1.0]}}, "s2": {"p": {"D1": [0.5]}}, "o": {"p": {"D1": [0.0]}}}
    configs = {"s1": ("S", "M"), "s2": ("S", "M"), "o": ("O", "M")}
    report = make_report(write_scores_dir(tmp_path, configs, runs), resamples=100)
    assert "| M | 0.750 | 0.000 | 0.500 |" in render(report, ReportFormat.MD)
    assert report["marginals"]["scaffold"]["S"]["overall"] == pytest.approx(0.75)
    assert report["marginals"]["model"]["M"]["overall"] == pytest.approx(0.5)


def test_paired_comparisons_keep_one_orientation_across_models(tmp_path: Path) -> None:
    runs = {"m1_a": {"p": {"D1": [1.0]}}, "m1_b": {"p": {"D1": [0.5]}},
            "m2_b": {"p": {"D1": [0.25]}}, "m2_a": {"p": {"D1": [0.75]}}}
    configs = {"m1_a": ("A", "M1"), "m1_b": ("B", "M1"), "m2_b": ("B", "M2"),
               "m2_a": ("A", "M2")}
    report = make_report(write_scores_dir(tmp_path, configs, runs), resamples=100)
    entries = {e["model"]: e for e in report["paired_comparisons"]}
    assert {(e["scaffold_a"], e["scaffold_b"]) for e in entries.values()} == {("A", "B")}
    assert entries["M2"]["metrics"]["overall"]["mean_diff"] == pytest.approx(0.5)
    pooled = entries["all models"]
    assert pooled["n_pairs"] == 2
    assert pooled["metrics"]["overall"]["mean_diff"] == pytest.approx(0.5)


def test_report_is_deterministic_and_seeded(two_dir: Path) -> None:
    scores = load_scores(two_dir)
    first = build_report(scores, seed=3, resamples=300)
    assert build_report(scores, seed=3, resamples=300) == first
    other = build_report(scores, seed=4, resamples=300)
    assert other["confidence_intervals"] != first["confidence_intervals"]
    assert other["configs"] == first["configs"]


def test_one_config_one_paper_renders_in_every_format(tmp_path: Path) -> None:
    runs = {"demo": {"paper": {"D1": [1.0, 0.5], "D2": [0.75], "D3": [0.0], "D4": [None]}}}
    report = make_report(write_scores_dir(tmp_path, {"demo": ("alignment", "m")}, runs))
    assert report["configs"]["demo"]["overall"] == pytest.approx(fmean([0.75, 0.75, 0.0]))
    assert report["paired_comparisons"] == []
    ci = report["confidence_intervals"]["configs"]["demo"]["D1"]
    assert ci["low"] == ci["high"] == pytest.approx(0.75)
    assert "No model ran under two scaffolds" in render(report, ReportFormat.MD)
    assert json.loads(render(report, ReportFormat.JSON))["errors"]["claims"] == 1
    assert render(report, ReportFormat.HTML).count("data:image/png;base64,") == 3


def test_failure_categories_section_when_verdicts_carry_them(two_report: dict,
                                                              tmp_path: Path) -> None:
    section = two_report["failure_categories"]
    assert section == {"a_m": {"D1": {"correct": 1, "missing": 1}, "D2": {"partial": 1}}}
    md = render(two_report, ReportFormat.MD)
    assert "| a_m | D1 | 1 | 1 | 0 |" in md
    html = render(two_report, ReportFormat.HTML)
    assert 'id="failure-categories"' in html and 'id="plot-failure-categories"' in html
    plain = make_report(write_scores_dir(tmp_path / "plain", {"c": ("S", "M")},
                                         {"c": {"p": {"D1": [1.0]}}}), resamples=100)
    assert "failure_categories" not in plain
    assert "Failure categories" not in render(plain, ReportFormat.MD)
    assert "failure_categories" in SECTIONS


def test_round_half_up_ignores_float_noise() -> None:
    assert round_half_up(fmean([0.1975] * 3)) == 0.198
    assert round_half_up(0.19749999999999998) == 0.198
    assert round_half_up(0.0464554) == 0.046
    assert round_half_up(0.1865) == 0.187
    assert fmt(None) == "–" and fmt(7034) == "7034" and fmt(0.5) == "0.500"


# ---------------------------------------------------------------- bad input


def test_missing_configs_json(two_dir: Path) -> None:
    (two_dir / "configs.json").unlink()
    with pytest.raises(ScoresDirError, match="configs.json: missing"):
        load_scores(two_dir)


def test_config_missing_from_configs_json(two_dir: Path) -> None:
    (two_dir / "configs.json").write_text(json.dumps({"a_m": {"scaffold": "A", "model": "M"}}))
    with pytest.raises(ScoresDirError, match="b_m.*'b_m' is missing from .*configs.json"):
        load_scores(two_dir)


def test_configs_json_entry_without_model(two_dir: Path) -> None:
    (two_dir / "configs.json").write_text(json.dumps(
        {"a_m": {"scaffold": "A", "model": "M"}, "b_m": {"scaffold": "B"}}))
    with pytest.raises(ScoresDirError, match="configs.json: entry 'b_m': model: Field required"):
        load_scores(two_dir)


def test_listed_config_without_directory(two_dir: Path) -> None:
    data = json.loads((two_dir / "configs.json").read_text())
    data["c_m"] = {"scaffold": "C", "model": "M"}
    (two_dir / "configs.json").write_text(json.dumps(data))
    with pytest.raises(ScoresDirError, match="'c_m' has no directory"):
        load_scores(two_dir)


def test_malformed_score_file(two_dir: Path) -> None:
    bad = two_dir / "b_m" / "p2.json"
    bad.write_text('{"paper_id": "p2", "dimensions": ')
    with pytest.raises(ResultFileError, match=r"p2\.json: cannot read result JSON"):
        load_scores(two_dir)


def test_score_off_the_scale(two_dir: Path) -> None:
    path = two_dir / "a_m" / "p1.json"
    data = json.loads(path.read_text())
    data["dimensions"]["D1"]["claims"][0]["score"] = 0.3
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError, match=r"p1\.json: invalid result at dimensions\.D1"):
        load_scores(two_dir)


def test_recorded_score_that_disagrees_with_its_claims_is_listed(two_dir: Path) -> None:
    assert make_report(two_dir, resamples=100)["meta"]["recorded_score_mismatches"] == []
    path = two_dir / "a_m" / "p3.json"
    data = json.loads(path.read_text())
    data["dimensions"]["D2"]["score"] = 0.5  # its one claim scored 0
    path.write_text(json.dumps(data))
    report = make_report(two_dir, resamples=100)
    assert report["meta"]["recorded_score_mismatches"] == [
        {"config": "a_m", "paper_id": "p3", "dimension": "D2", "recorded": 0.5,
         "from_claims": 0.0}]
    assert "1 recorded dimension scores differ" in render(report, ReportFormat.MD)


def test_paper_id_must_match_file_name(two_dir: Path) -> None:
    (two_dir / "a_m" / "p1.json").rename(two_dir / "a_m" / "p9.json")
    with pytest.raises(ScoresDirError, match="p9.json: paper_id 'p1' does not match"):
        load_scores(two_dir)


def test_config_without_score_files(two_dir: Path) -> None:
    for path in (two_dir / "b_m").glob("*.json"):
        path.unlink()
    with pytest.raises(ScoresDirError, match="b_m: no <paper_id>.json score files"):
        load_scores(two_dir)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "report", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_bad_file_is_one_line_exit_2(two_dir: Path) -> None:
    (two_dir / "a_m" / "p3.json").write_text("not json")
    done = _cli(str(two_dir))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "p3.json" in lines[0] and "Traceback" not in done.stderr


def test_cli_writes_each_format(two_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "report.json"
    done = _cli(str(two_dir), "--format", "json", "-o", str(out), "--resamples", "300")
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    expected = build_report(load_scores(two_dir), resamples=300)
    assert data["configs"] == expected["configs"]
    assert data["confidence_intervals"] == json.loads(json.dumps(
        expected["confidence_intervals"]))
    md = _cli(str(two_dir))
    assert md.returncode == 0 and "### Generator × scaffold scores" in md.stdout


def test_cli_defaults_are_the_statistics_defaults() -> None:
    from sabench.benchmark import cli_report

    assert (cli_report.DEFAULT_SEED, cli_report.DEFAULT_RESAMPLES) == (
        stats.DEFAULT_SEED, stats.DEFAULT_RESAMPLES)


def test_stats_intervals() -> None:
    values = [0.1, 0.4, 0.2, 0.9, 0.3]
    ci = stats.mean_ci(values, "k", resamples=1000)
    assert ci is not None and min(values) <= ci.low <= ci.mean <= ci.high <= max(values)
    assert ci == stats.mean_ci(values, "k", resamples=1000)
    assert stats.mean_ci(values, "other", resamples=1000) != ci
    assert stats.mean_ci([], "k") is None
    same = stats.paired_difference([0.3, 0.5, 0.9], [0.2, 0.4, 0.8], "p")
    assert same is not None
    assert (same.mean_diff, same.low, same.high) == pytest.approx((0.1, 0.1, 0.1))
    assert same.significant and same.wins == 3
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_difference([0.1], [0.1, 0.2], "p")


def test_taxonomy_section_is_opt_in_and_prefers_verdict_categories(two_dir: Path) -> None:
    plain = make_report(two_dir, resamples=100)
    assert "failure_taxonomy" not in plain
    report = make_report(two_dir, resamples=100, extra=frozenset({"failure_taxonomy"}))
    section = report["failure_taxonomy"]
    # a_m/p2 D1 carries its own category (missing); the full mark is not a low claim
    a_m_d1 = section["per_config"]["a_m"]["D1"]
    assert a_m_d1.get("missing", 0) >= 1 and "correct" not in a_m_d1
    low_claims = sum(n for dims in section["per_config"].values() for cell in dims.values()
                     for n in cell.values())
    scored = [v for _, _, v in load_scores(two_dir).iter_verdicts() if v.score is not None]
    assert low_claims == sum(v.score <= 0.25 for v in scored)
    assert section["comparison"]["zero"]["n"] == sum(v.score == 0 for v in scored)
    md = render(report, ReportFormat.MD)
    assert "our reading against the published shares" in md
    assert 'id="plot-failure-taxonomy"' in render(report, ReportFormat.HTML)


def test_cli_taxonomy_flag(two_dir: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", "report",
                             str(two_dir), "--format", "json", "--taxonomy",
                             "--resamples", "100"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "failure_taxonomy" in json.loads(result.stdout)
