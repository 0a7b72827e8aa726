"""The wording rules: a divisor one apart from the claim's, and weight decay the claim keeps
out of the gradient that the code adds to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_alignment_check import toy_check, toy_claim

SMOOTHING = toy_claim("toy-D2-001", "Smoothed targets: q = (1 - epsilon) * onehot(y) + "
                                    "epsilon / C, so every class receives epsilon / C.")
VARIANCE = toy_claim("toy-D2-001", "Unbiased variance: s2 = total / (n - 1), where total "
                                   "sums the squared deviations from the mean.")


def smoothing(split: str) -> str:
    return ("import numpy as np\n\n\n"
            "def smoothed_targets(labels, n_classes, epsilon):\n"
            f"    targets = np.full((len(labels), n_classes), epsilon / {split})\n"
            "    targets[np.arange(len(labels)), labels] += 1.0 - epsilon\n"
            "    return targets\n")


def variance(divisor: str) -> str:
    return ("def unbiased_variance(values):\n"
            "    n = len(values)\n"
            "    mean = sum(values) / n\n"
            "    total = sum((v - mean) ** 2 for v in values)\n"
            f"    return total / {divisor}\n")


@pytest.mark.parametrize(("claim", "write", "faithful", "drifted"), [
    (SMOOTHING, smoothing, "n_classes", "(n_classes - 1)"),
    (VARIANCE, variance, "(n - 1)", "n"),
])
def test_a_divisor_one_apart_from_the_claims_fails(tmp_path: Path, claim, write, faithful: str,
                                                   drifted: str) -> None:
    for divisor, fails in ((faithful, False), (drifted, True)):
        repo = tmp_path / ("drifted" if fails else "faithful")
        result = toy_check(repo, {"stats.py": write(divisor)}, claim)[claim.id]
        assert ("operations" in result.findings) is fails, result
        if fails:
            assert any("one apart" in r for r in result.reasons), result


def test_code_that_also_divides_as_the_claim_does_is_not_one_apart(tmp_path: Path) -> None:
    """The quantity divided both ways (a biased and an unbiased estimate side by side) holds
    the claim's form: nothing to fail."""
    code = variance("(n - 1)") + "\n\ndef biased(total, n):\n    return total / n\n"
    result = toy_check(tmp_path / "repo", {"stats.py": code}, VARIANCE)[VARIANCE.id]
    assert "operations" not in result.findings, result


DECOUPLED = toy_claim("toy-D2-001", "Decoupled weight decay: after the momentum step, W <- W "
                                    "- eta * lambda * W; the decay never enters the gradient.")


def update(gradient: str, step: str) -> str:
    return ("import numpy as np\n\n\n"
            "def loss_gradients(features, delta, w, l2):\n"
            f"    return {gradient}\n\n\n"
            "def momentum_step(w, velocity, grad_w, lr, momentum, weight_decay):\n"
            "    velocity = momentum * velocity + grad_w\n"
            f"    {step}\n"
            "    return w, velocity\n\n\n"
            "def train_step(features, delta, w, velocity, lr, momentum, weight_decay):\n"
            "    grad_w = loss_gradients(features, delta, w, 0.0)\n"
            "    return momentum_step(w, velocity, grad_w, lr, momentum, weight_decay)\n")


@pytest.mark.parametrize(("gradient", "step", "fails"), [
    ("delta.T @ features", "w = w - lr * velocity - lr * weight_decay * w", False),
    # the decay is an L2 term of the gradient instead
    ("delta.T @ features + l2 * w", "w = w - lr * velocity", True),
    ("delta.T @ features", "grad_w += weight_decay * w", True),
])
def test_weight_decay_kept_out_of_the_gradient_fails_when_added_to_it(
        tmp_path: Path, gradient: str, step: str, fails: bool) -> None:
    files = {"sgd.py": update(gradient, step)}
    result = toy_check(tmp_path / "repo", files, DECOUPLED)[DECOUPLED.id]
    assert ("operations" in result.findings) is fails, result
    if fails:
        assert any("decay term to a gradient" in r for r in result.reasons), result


@pytest.mark.parametrize(("optimizer", "fails"), [
    ("torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)", False),
    ("torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)", True),
])
def test_decoupled_decay_handed_to_a_coupling_optimizer_fails(tmp_path: Path, optimizer: str,
                                                              fails: bool) -> None:
    claim = toy_claim("toy-D2-001", "Decoupled weight decay: the decay is applied to the "
                                    "weights directly, W <- W - eta * lambda * W.")
    code = ("import torch\n\n\n"
            "def make_optimizer(model, lr, weight_decay):\n"
            "    # decoupled weight decay: W <- W - eta * lambda * W\n"
            f"    return {optimizer}\n")
    result = toy_check(tmp_path / "repo", {"optim.py": code}, claim)[claim.id]
    assert ("operations" in result.findings) is fails, result
