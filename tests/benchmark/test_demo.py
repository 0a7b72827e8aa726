"""The embedded demo: its bundled dataset, its two reproductions, and `sabench demo` end to end."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sabench.benchmark.dataset import check_dataset
from sabench.benchmark.demo_run import DEMO_ROOT, PAPER_ID, config_name, demo_paper
from sabench.verifiers.keyword import KeywordJudge, claim_numbers, extract_numbers
from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import PaperScore

REPOS = DEMO_ROOT / "repos"
ALL_DIMENSIONS = list(Dimension)


@pytest.fixture(scope="module")
def keyword_scores() -> dict[str, PaperScore]:
    spec = demo_paper()
    return {name: KeywordJudge().score(spec, REPOS / name) for name in ("faithful", "drifted")}


def sabench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sabench.benchmark.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_bundled_dataset_validates() -> None:
    report = check_dataset(DEMO_ROOT / "papers")
    assert report.errors == []
    assert list(report.papers) == [PAPER_ID]
    spec = report.papers[PAPER_ID]
    assert 18 <= len(spec.claims) <= 26
    assert all(count >= 3 for count in spec.counts().values())
    assert all(re.fullmatch(rf"{PAPER_ID}-{c.dimension.value}-\d{{3}}", c.id) for c in spec.claims)
    assert spec.title and "$$" in spec.markdown  # a real paper text with display equations


def test_every_number_of_a_claim_is_stated_in_the_paper() -> None:
    spec = demo_paper()
    paper_numbers = extract_numbers(spec.markdown)
    for claim in spec.claims:
        for group in claim_numbers(claim.text):
            assert group & paper_numbers, f"{claim.id}: {sorted(group)} is not in paper.md"


def test_drift_is_documented_for_every_dimension_beside_the_repositories() -> None:
    drift = (REPOS / "DRIFT.md").read_text(encoding="utf-8")
    ids = {claim.id for claim in demo_paper().claims}
    listed = set(re.findall(rf"{PAPER_ID}-D\d-\d{{3}}", drift))
    assert listed <= ids
    assert {claim_id.split("-")[1] for claim_id in listed} == {d.value for d in Dimension}
    assert not (REPOS / "drifted" / "DRIFT.md").exists()


def test_the_faithful_reproduction_scores_clearly_higher(keyword_scores) -> None:
    faithful, drifted = keyword_scores["faithful"], keyword_scores["drifted"]
    assert faithful.errors == drifted.errors == 0
    assert faithful.overall_score - drifted.overall_score >= 0.15
    for dim in ALL_DIMENSIONS:  # drift was injected in every dimension
        assert faithful.dimensions[dim].score > drifted.dimensions[dim].score, dim


def test_each_documented_drift_costs_points_on_its_claim(keyword_scores) -> None:
    """Most drifted claims score below their faithful counterpart, and none above it."""
    faithful = {v.id: v.score for _, v in keyword_scores["faithful"].verdicts()}
    drifted = {v.id: v.score for _, v in keyword_scores["drifted"].verdicts()}
    listed = set(re.findall(rf"{PAPER_ID}-D\d-\d{{3}}", (REPOS / "DRIFT.md").read_text()))
    lower = [claim for claim in listed if drifted[claim] < faithful[claim]]
    assert len(lower) >= 0.6 * len(listed)
    assert all(drifted[c] <= faithful[c] for c in faithful)


@pytest.mark.parametrize("repository", ["faithful", "drifted"])
def test_the_reproductions_run_and_print_a_metric(tmp_path: Path, repository: str) -> None:
    repo = shutil.copytree(REPOS / repository, tmp_path / repository)  # keep the package clean
    done = subprocess.run([sys.executable, "run.py", "--epochs", "2", "--seeds", "1"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = re.search(r"smoothlr\s+test_accuracy=(\d\.\d+)", done.stdout)
    assert found, done.stdout
    assert float(found.group(1)) > 0.3  # ten classes: chance is 0.1


def test_the_faithful_reproduction_reproduces_the_papers_table(tmp_path: Path) -> None:
    """Table 2 of the example paper states what the faithful code computes (full protocol)."""
    repo = shutil.copytree(REPOS / "faithful", tmp_path / "faithful")
    done = subprocess.run([sys.executable, "run.py"], cwd=repo, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    measured = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(
        r"^(\w+)\s+test_accuracy=(\d\.\d+)±\d\.\d+ macro_f1=(\d\.\d+)", done.stdout, re.M)}
    rows = {"knn": r"\| \$k\$-NN", "softmax": r"\| Softmax regression", "smoothlr": r"\| SmoothLR"}
    for method, start in rows.items():
        line = re.search(rf"^{start}.*$", demo_paper().markdown, re.M)
        assert line, f"no Table 2 row for {method}"
        stated = [float(v) for v in re.findall(r"(\d\.\d{3}) ±", line.group(0))]
        assert stated == pytest.approx(measured[method], abs=0.01), line.group(0)


def test_sabench_demo_writes_scores_and_report(tmp_path: Path) -> None:
    done = sabench("demo", "--out", "tmp", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "tmp"
    configs = json.loads((out / "scores" / "configs.json").read_text())
    assert configs == {config_name(r): {"scaffold": r, "model": "hand-written"}
                       for r in ("faithful", "drifted")}
    scores = {r: PaperScore.load(out / "scores" / config_name(r) / f"{PAPER_ID}.json")
              for r in ("faithful", "drifted")}
    assert scores["faithful"].overall_score > scores["drifted"].overall_score
    judge = scores["faithful"].judge_name
    assert judge and f"judge: {judge}" in done.stdout.replace("\n", " ")
    assert "Overall" in done.stdout and "D4" in done.stdout
    html = out / "report.html"  # the HTML report is part of every installation
    assert html.is_file() and "demo-faithful" in html.read_text(encoding="utf-8")


def test_sabench_demo_json_with_the_keyword_judge(tmp_path: Path) -> None:
    done = sabench("demo", "--out", str(tmp_path / "o"), "--judge", "keyword", "--json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["judge"] == "keyword"
    faithful, drifted = summary["scores"]["faithful"], summary["scores"]["drifted"]
    assert all(faithful[key] > drifted[key] for key in ("overall", "D1", "D2", "D3", "D4"))


def test_an_unknown_judge_is_a_one_line_error(tmp_path: Path) -> None:
    done = sabench("demo", "--out", str(tmp_path / "o"), "--judge", "oracle", cwd=tmp_path)
    assert done.returncode == 2
    assert "oracle" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_offline_judge_is_the_one_used(tmp_path: Path) -> None:
    done = sabench("demo", "--out", str(tmp_path / "o"), "--judge", "offline", "--json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["judge"].startswith("offline")
