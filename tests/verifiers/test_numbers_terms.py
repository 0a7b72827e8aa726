"""Number normalisation and term extraction: the spellings papers and code use compare equal."""

from __future__ import annotations

import pytest

from sabench.verifiers.numbers import distinctive_numbers, extract_numbers, normalise
from sabench.verifiers.terms import named_entities, split_identifier, term_set


def keys(text: str) -> set[str]:
    return {num.key for num in extract_numbers(text)}


@pytest.mark.parametrize("spelling", ["3e-4", "0.0003", "3 × 10^-4", "3\\times10^{-4}",
                                      "3x10^{-4}", "3E-04", "lr=3e-4,"])
def test_scientific_spellings_share_one_key(spelling: str) -> None:
    assert normalise(0.0003) in keys(spelling)


@pytest.mark.parametrize(("text", "expected"), [
    ("512×512", {"512"}),
    ("1k steps", {"1000"}),
    ("50K samples", {"50000"}),
    ("7B parameters", {"7e+9"}),
    ("1,000,000 tokens", {"1e+6"}),
    ("10^{-4}", {"0.0001"}),
])
def test_sizes_and_magnitudes(text: str, expected: set[str]) -> None:
    assert expected <= keys(text)


def test_percentages_yield_value_and_fraction() -> None:
    assert {"15", "0.15"} <= keys("masking ratio of 15%")


def test_fractions_yield_the_quotient() -> None:
    assert "0.025" in keys("step size h=1/40")


def test_ranges_and_lists_yield_every_point() -> None:
    assert {"0.2", "0.7"} <= keys("sweep 0.2-0.7")
    assert {"8", "16", "32"} <= keys("[8, 16, 32]")
    assert {"128", "256", "512"} <= keys("[128,256,512]")


def test_distinctive_numbers_drop_trivial_values_and_labels() -> None:
    found = {n.key for n in distinctive_numbers(
        "Eq. 236 in Section 4 (2024): K=40 steps, batch 1, dropout 0.1, lr 2e-5")}
    assert found == {"40", "2e-5"}


def test_identifiers_split_on_case_and_underscores() -> None:
    assert split_identifier("learningRate") == ("learning", "rate")
    assert split_identifier("LEARNING_RATE") == ("learning", "rate")
    assert split_identifier("HTTPServer") == ("http", "server")


def test_code_and_prose_share_terms() -> None:
    prose = term_set("the learning rates")
    for code in ("learningRate", "learning_rate", "lr"):
        assert term_set(code) & prose


@pytest.mark.parametrize("spelling", ["λ", "\\lambda", "lam", "lmbda"])
def test_greek_and_latex_names_meet_code_names(spelling: str) -> None:
    assert term_set(spelling) & term_set("lambda_reg")


def test_named_entities() -> None:
    found = named_entities("Compare against DRaFT-1, DPO and ReFL on ImageNet, CIFAR-10 (FID)")
    assert {"DRaFT-1", "DPO", "ReFL", "ImageNet", "CIFAR-10", "FID"} <= set(found)
