"""KeywordJudge: numbers and terms of claims looked up in real repositories written to disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sabench.verifiers.judge import Judge, RepositoryError
from sabench.verifiers.keyword import (
    KeywordJudge,
    claim_numbers,
    claim_terms,
    code_terms,
    extract_numbers,
    level,
    round_value,
    term_key,
)
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import SCORE_LEVELS, FailureCategory


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def spec_of(*claims: tuple[Dimension, str]) -> PaperSpec:
    return PaperSpec(paper_id="toy", claims=tuple(
        Claim(id=f"toy-{dim.value}-{i:03d}", dimension=dim, text=text)
        for i, (dim, text) in enumerate(claims, 1)))


def one_score(repo: Path, dim: Dimension, text: str) -> float:
    score = KeywordJudge().score(spec_of((dim, text)), repo)
    verdict = score.dimensions[dim].claims[0]
    assert verdict.score is not None
    return verdict.score


def test_numbers_normalise_across_notations() -> None:
    assert extract_numbers("wd = 5e-4") == extract_numbers("lambda = 0.0005") == {0.0005}
    assert 0.0005 in extract_numbers(r"$5 \times 10^{-4}$")
    assert 0.001 in extract_numbers(r"$\eta_{\min} = 10^{-3}$")
    assert extract_numbers("rate 0.1.") == {0.1}  # a sentence-final period is not a decimal
    assert 0.5 in extract_numbers(r"$\frac{1}{2}(\eta_0 - \eta_{\min})$")


def test_percentages_accept_either_form_and_references_are_skipped() -> None:
    groups = claim_numbers("60% training split (Eq. 3, Section 4), lr 0.1")
    assert frozenset({60.0, 0.6}) in groups
    assert frozenset({0.1}) in groups
    assert not any(3.0 in group or 4.0 in group for group in groups)


def test_terms_fold_inflections_and_code_abbreviations() -> None:
    assert term_key("standardiser") == term_key("standardise")
    assert term_key("clipping") == term_key("clip")
    assert term_key("seeds") == term_key("seed")
    assert claim_terms("the learning rate of the validation split") <= code_terms(
        "lr = schedule(val_split)") | {term_key("split")}
    assert "epsil" not in claim_terms("epsilon = 0.1")  # notation is not vocabulary


def test_levels_cover_the_scale() -> None:
    assert [level(c) for c in (1.0, 0.7, 0.5, 0.3, 0.0)] == [1.0, 0.75, 0.5, 0.25, 0.0]


def test_a_number_beside_its_name_beats_one_elsewhere_and_one_missing(tmp_path: Path) -> None:
    claim = "Label smoothing coefficient 0.15."
    beside = make_repo(tmp_path / "a", {"cfg.py": "label_smoothing = 0.15\n"})
    elsewhere = make_repo(tmp_path / "b", {"cfg.py": "label_smoothing = 0.3\ndropout = 0.15\n"})
    missing = make_repo(tmp_path / "c", {"cfg.py": "label_smoothing = 0.3\n"})
    scores = [one_score(repo, Dimension.D1, claim) for repo in (beside, elsewhere, missing)]
    assert scores[0] > scores[1] > scores[2]


def test_comments_docstrings_docs_and_tests_are_not_evidence(tmp_path: Path) -> None:
    claim = "Warmup of 1234 steps."
    code = make_repo(tmp_path / "code", {"train.py": "warmup_steps = 1234\n"})
    prose = make_repo(tmp_path / "prose", {
        "train.py": '"""Warmup of 1234 steps."""\nwarmup_steps = 10  # paper: 1234 steps\n',
        "README.md": "warmup_steps = 1234\n",
        "tests/test_train.py": "warmup_steps = 1234\n",
    })
    assert one_score(code, Dimension.D1, claim) == 1.0
    assert one_score(prose, Dimension.D1, claim) < 0.75


def test_ordering_claims_check_the_order_of_the_steps(tmp_path: Path) -> None:
    claim = ("Pipeline: split the dataset -> inject label noise -> fit the standardiser "
             "-> train the classifier")
    steps = ["parts = split_dataset(data)", "labels = inject_label_noise(parts)",
             "stats = fit_standardiser(parts)", "model = train_classifier(parts, stats)"]
    in_order = make_repo(tmp_path / "a", {"main.py": "\n".join(steps) + "\n"})
    reversed_ = make_repo(tmp_path / "b", {"main.py": "\n".join(reversed(steps)) + "\n"})
    assert one_score(in_order, Dimension.D4, claim) == 1.0
    assert one_score(reversed_, Dimension.D4, claim) == 0.0


def test_the_judge_follows_the_protocol_and_the_result_format(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": "batch_size = 256\nepochs = 90\n",
                                         "config.yaml": "optimizer: adamw\n"})
    spec = spec_of((Dimension.D1, "Batch size 256 for 90 epochs."),
                   (Dimension.D2, "AdamW optimizer."),
                   (Dimension.D3, "Evaluated on ImageNet top-5 accuracy."))
    judge = KeywordJudge()
    assert isinstance(judge, Judge)
    score = judge.score(spec, repo)
    assert score.paper_id == "toy" and score.model == judge.name == "keyword"
    assert set(score.dimensions) == {Dimension.D1, Dimension.D2, Dimension.D3}
    verdicts = [v for _, v in score.verdicts()]
    assert all(v.score in SCORE_LEVELS and v.judge == "keyword" and v.judge_reasoning
               for v in verdicts)
    assert verdicts[0].score == 1.0
    assert set(verdicts[0].evidence_refs) == {"train.py:1", "train.py:2"}
    assert verdicts[2].score == 0.0 and verdicts[2].failure_category == FailureCategory.MISSING
    again = judge.score(spec, repo)
    assert again.model_dump(exclude={"scored_at"}) == score.model_dump(exclude={"scored_at"})


def test_an_empty_repository_scores_zero_not_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    score = KeywordJudge().score(spec_of((Dimension.D1, "Batch size 256.")), tmp_path / "empty")
    assert score.errors == 0 and score.overall_score == 0.0


def test_symlinks_out_of_the_repository_are_not_followed(tmp_path: Path) -> None:
    outside = make_repo(tmp_path / "outside", {"secret.py": "batch_size = 256\n"})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "linked.py").symlink_to(outside / "secret.py")
    (repo / "linked_dir").symlink_to(outside, target_is_directory=True)
    assert one_score(repo, Dimension.D1, "Batch size 256.") == 0.0


def test_undecodable_files_are_tolerated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"ok.py": "batch_size = 256\n"})
    (repo / "bad.py").write_bytes(b"\xff\xfe batch = (\n")
    assert one_score(repo, Dimension.D1, "Batch size 256.") == 1.0


@pytest.mark.parametrize("make", [lambda p: p / "nope",
                                  lambda p: make_repo(p, {"f.py": ""}) / "f.py"])
def test_a_missing_repository_is_a_one_line_error(tmp_path: Path, make) -> None:
    with pytest.raises(RepositoryError) as info:
        KeywordJudge().score(spec_of((Dimension.D1, "Batch size 256.")), make(tmp_path))
    assert "\n" not in str(info.value)


@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False))
def test_any_value_reads_back_from_scientific_and_plain_notation(value: float) -> None:
    written = float(f"{value:.3e}")
    assert round_value(written) in extract_numbers(f"x = {value:.3e}")
    assert round_value(written) in extract_numbers(f"x = {written:.10f}".rstrip("0"))
