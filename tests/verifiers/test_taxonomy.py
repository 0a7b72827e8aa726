"""Failure taxonomy: rule reading of reasoning texts, our verdicts, and the release comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.verifiers.spec import Dimension
from sabench.verifiers.taxonomy import (
    FAILURE_PATTERNS_LOW,
    GATES,
    PUBLISHED_ZERO,
    categorize_score,
    classify_verdict,
    kind_of_ref,
    read_reasoning,
    release_comparison,
)
from sabench.verifiers.types import (
    ClaimVerdict,
    Evidence,
    EvidenceKind,
    FailureCategory,
    PaperScore,
)

# Reasons written for these tests, in the style judges use.
EXAMPLES = [
    ("F1", "D2", "The attention module exists, but its forward method is a stub that raises "
                 "NotImplementedError, so the gating is never computed."),
    ("F2", "D3", "The evaluation loop runs, but on random tensors in place of the stated dataset; "
                 "no ImageNet loader is present."),
    ("F3", "D1", "The config sets the learning rate to 1e-3 instead of the claimed 3e-4."),
    ("F4", "D2", "The loss is computed with a different formula: it normalises columns where the "
                 "claim normalises rows."),
    ("F5", "D2", "The drift term appears only in a docstring of sampler.py; no code evaluates it."),
    ("F6", "D3", "Code shows a dataset class for CIFAR-10. However, there is no baseline or "
                 "metric for the comparison."),
    ("F7", "D1", "No evidence of the warm-up schedule; the cited code is an unrelated generic "
                 "data loader."),
    ("F8", "D4", "There is no implementation of the two-phase schedule or of the freezing step."),
    ("X", "D3", "No code evaluates with a human preference study; there are no raters, prompts "
                "or interface for it."),
]


@pytest.mark.parametrize(("mode", "dim", "text"), EXAMPLES)
def test_rules_read_each_mode(mode: str, dim: str, text: str) -> None:
    assert read_reasoning(text, dim).mode == mode


@pytest.mark.parametrize("mode", sorted(GATES))
def test_gate_texts_are_matched_by_prefix(mode: str) -> None:
    reading = read_reasoning(GATES[mode] + "; claim not passed to LLM judge.")
    assert reading.mode == mode and reading.category == FailureCategory.MISSING


def test_absence_sentence_naming_docs_is_docs_only() -> None:
    text = "No implementation: the claimed clipping appears only in comments of train.py."
    assert read_reasoning(text, "D2").category == FailureCategory.DOCS_ONLY


def test_quoted_code_is_not_read_as_the_judges_words() -> None:
    text = "There is no warm-up schedule; the code only has `# TODO placeholder stub` lines."
    assert read_reasoning(text, "D1").mode == "F8"


def test_any_contradiction_in_d1_is_a_value_difference() -> None:
    text = "The optimizer in the cited config conflicts with the claim."
    assert read_reasoning(text, "D1").mode == "F3"
    assert read_reasoning(text, "D2").mode == "F4"


def low(score: float = 0.0, reasoning: str = "", refs: tuple[str, ...] = ()) -> ClaimVerdict:
    return ClaimVerdict(id="c", score=score, judge_reasoning=reasoning, evidence_refs=list(refs))


def test_verdict_levels_outside_the_low_band() -> None:
    assert classify_verdict(low(1.0)) == FailureCategory.CORRECT
    assert classify_verdict(low(0.5)) is None and classify_verdict(low(0.75)) is None
    assert classify_verdict(ClaimVerdict.failed("c", "timeout")) is None


def test_check_outcomes_decide_first() -> None:
    docs_reason = low(0.25, "The value appears only in a docstring.")
    assert classify_verdict(docs_reason, checks={"stub": "pass body"}) == FailureCategory.STUB
    assert classify_verdict(low(0.25), checks={"coverage": 0.5}) == FailureCategory.PARTIAL
    assert classify_verdict(low(0.0), checks={"value_mismatch": True}) == FailureCategory.MISMATCH
    assert classify_verdict(low(0.0), checks={"coverage": 0.0}) == FailureCategory.MISSING


def test_evidence_kinds_tell_docs_only_from_missing() -> None:
    docs = [Evidence(file="README.md", start_line=1, end_line=8, kind=EvidenceKind.DOCS),
            Evidence(file="tests/test_lr.py", start_line=3, end_line=9, kind=EvidenceKind.TEST)]
    assert classify_verdict(low(0.25), evidence=docs) == FailureCategory.DOCS_ONLY
    assert classify_verdict(low(0.0), evidence=[]) == FailureCategory.MISSING
    by_ref = low(0.25, refs=("docs/method.md:4-11",))
    assert classify_verdict(by_ref) == FailureCategory.DOCS_ONLY
    assert kind_of_ref("tests/test_x.py:1-8") == EvidenceKind.TEST
    assert kind_of_ref("src/train.py:1-8") == EvidenceKind.CODE


def test_reasoning_decides_over_code_evidence() -> None:
    verdict = low(0.0, "The scheduler uses 100 warm-up steps instead of the claimed 500.",
                  refs=("train.py:10-17",))
    assert classify_verdict(verdict, Dimension.D1) == FailureCategory.MISMATCH


def test_categorize_score_fills_only_missing_categories() -> None:
    kept = ClaimVerdict(id="a", score=0.0, failure_category=FailureCategory.EXTERNAL)
    verdicts = {Dimension.D1: [kept, ClaimVerdict(id="b", score=1.0),
                               ClaimVerdict(id="c", score=0.25, judge_reasoning=EXAMPLES[2][2])],
                Dimension.D2: [ClaimVerdict(id="d", score=0.5),
                               ClaimVerdict.failed("e", "no reply")]}
    score = categorize_score(PaperScore.of("p", verdicts))
    got = {v.id: v.failure_category for _, v in score.verdicts()}
    assert got == {"a": FailureCategory.EXTERNAL, "b": FailureCategory.CORRECT,
                   "c": FailureCategory.MISMATCH, "d": None, "e": None}
    assert score.overall_score == PaperScore.of("p", verdicts).overall_score


@pytest.mark.dataset
def test_release_comparison(official_scores_dir: Path) -> None:
    result = release_comparison(official_scores_dir)
    zero, low_ = result["zero"], result["low"]
    assert zero["n"] == 7034  # the published count of zero-scored claims
    assert low_["n"] == 14980  # failure-patterns.md's count of low verdicts
    # gate texts are exact prefixes, so their shares must equal the note's to rounding
    for mode in GATES:
        assert low_["modes"][mode] == pytest.approx(FAILURE_PATTERNS_LOW[mode], abs=0.0006)
    assert low_["modes"].get("U", 0.0) < 0.01
    assert sum(zero["categories"].values()) == pytest.approx(1.0)
    items = {(d["against"], d["item"]) for d in result["differences"]}
    assert {("published_zero", str(c)) for c in PUBLISHED_ZERO} <= items
    assert f"{zero['n']:,}" in result["explanation"] and "40.8%" in result["explanation"]


def test_real_check_outcomes_decide_the_category(tmp_path: Path) -> None:
    from sabench.verifiers.checks import check_claim
    from sabench.verifiers.index import RepoIndex
    from sabench.verifiers.spec import Claim

    (tmp_path / "train.py").write_text(
        "def compute_kl_penalty(logits, ref_logits, beta):\n"
        "    \"\"\"KL penalty between policy and reference.\"\"\"\n"
        "    raise NotImplementedError\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "The contrastive temperature tau is 0.07 and the momentum m is 0.999.\n",
        encoding="utf-8")
    index = RepoIndex.build(tmp_path)
    cases = {
        ("D2", "The KL penalty between policy logits and reference logits is scaled by beta."):
            FailureCategory.STUB,
        ("D1", "The contrastive temperature tau is 0.07 and momentum m is 0.999."):
            FailureCategory.DOCS_ONLY,
        ("D3", "We evaluate on ImageNet with top-1 accuracy against the SimCLR baseline."):
            FailureCategory.MISSING,
    }
    for i, ((dim, text), expected) in enumerate(cases.items()):
        check = check_claim(index, Claim(id=f"c{i}", dimension=dim, text=text))
        verdict = low(0.0, "There is no implementation of the claim.")
        assert classify_verdict(verdict, dim, checks=check) == expected, text
