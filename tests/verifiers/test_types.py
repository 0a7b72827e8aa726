"""The result format: official files round-trip unchanged; failed judgements stay errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import (
    ClaimVerdict,
    Evidence,
    FailureCategory,
    PaperScore,
    ResultFileError,
)

FULL_RELEASE_FILE = {
    "paper_id": "toy",
    "repo_path": "experiments/runs/x/toy/repo",
    "scored_at": "2026-05-11T17:58:21Z",
    "model": "gpt-5.5",
    "dimensions": {
        "D1": {"score": 0.625, "total_claims": 2, "claims": [
            {"id": "toy-D1-001", "claim": "lr 3e-4", "score": 1.0, "judge_reasoning": "found",
             "evidence_refs": ["train.py:3-4"], "evidence": [{"file": "train.py", "lines": "3-4"}]},
            {"id": "toy-D1-002", "claim": "batch 256", "score": 0.25, "judge_reasoning": "64",
             "evidence_refs": []},
        ]},
    },
    "overall_score": 0.625,
}


@pytest.mark.dataset
def test_every_official_file_round_trips_unchanged(official_scores_dir: Path) -> None:
    files = sorted(official_scores_dir.glob("*/*.json"))
    assert len(files) == 360
    for path in files:
        score = PaperScore.load(path)
        assert score.judge_name in {"deepseek-v4-pro", "gpt-5.5"}
        assert json.loads(score.model_dump_json(exclude_none=True)) == json.loads(path.read_text())


def test_full_release_layout_keeps_unknown_fields(tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(FULL_RELEASE_FILE))
    score = PaperScore.load(source)
    assert score.judge_name == "gpt-5.5" and score.repo_path.endswith("repo")
    target = tmp_path / "out" / "toy.json"
    score.dump(target)
    assert json.loads(target.read_text()) == FULL_RELEASE_FILE


def test_aggregation_means_and_errors_are_not_zeros() -> None:
    verdicts = {
        Dimension.D1: [ClaimVerdict(id="a", score=1.0), ClaimVerdict(id="b", score=0.5)],
        Dimension.D2: [ClaimVerdict(id="c", score=0.0),
                       ClaimVerdict.failed("d", "judge reply was not valid JSON", judge="llm:x")],
    }
    score = PaperScore.of("toy", verdicts, judge_model="offline")
    assert score.dimensions[Dimension.D1].score == 0.75
    # the failed claim is left out of the mean, not counted as 0, and counted as an error
    assert score.dimensions[Dimension.D2].score == 0.0
    assert score.dimensions[Dimension.D2].total_claims == 2
    assert score.errors == 1
    assert score.overall_score == pytest.approx(0.375)
    failed = score.dimensions[Dimension.D2].claims[1]
    assert failed.is_error and failed.score is None and "JSON" in failed.error


def test_dimension_with_only_errors_has_no_score() -> None:
    verdicts = {Dimension.D1: [ClaimVerdict(id="a", score=0.5)],
                Dimension.D3: [ClaimVerdict.failed("b", "timeout")]}
    score = PaperScore.of("toy", verdicts)
    assert score.dimensions[Dimension.D3].score is None
    assert score.overall_score == 0.5


def test_verdict_validation() -> None:
    with pytest.raises(ValidationError, match="not one of"):
        ClaimVerdict(id="a", score=0.3)
    with pytest.raises(ValidationError, match="must say why"):
        ClaimVerdict(id="a", score=None)
    verdict = ClaimVerdict(id="a", score=0.0, failure_category="stub_or_placeholder",
                           confidence=0.9, judge="offline")
    assert verdict.failure_category is FailureCategory.STUB


def test_evidence_reference_format() -> None:
    assert Evidence(file="a/b.py", start_line=3, end_line=9).ref == "a/b.py:3-9"
    assert Evidence(file="c.yaml", start_line=4, end_line=4).ref == "c.yaml:4"


@pytest.mark.parametrize(("content", "expected"), [
    ("{", "cannot read result JSON"),
    ('{"paper_id": "x", "dimensions": {}}', "invalid result at overall_score"),
    ('{"paper_id": "x", "overall_score": 0.1, "dimensions": {"D1": {"score": 0.1, '
     '"total_claims": 1, "claims": [{"id": "x-1", "score": 0.3}]}}}',
     "invalid result at dimensions.D1.claims.0.score"),
])
def test_bad_result_files_name_the_file_and_entry(tmp_path: Path, content: str,
                                                  expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ResultFileError) as caught:
        PaperScore.load(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)
