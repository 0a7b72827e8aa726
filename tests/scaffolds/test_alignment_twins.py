"""The twin rule: a copy of an expression that the repository's other copies outvote by one
operator has drifted from them."""

from __future__ import annotations

from pathlib import Path

from .test_alignment_check import toy_check, toy_claim

CLAIM = toy_claim("toy-D2-001", "Euler-Maruyama sampling: each step moves the state X_t by "
                                "h times the drift plus sqrt(h) sigma_t times Gaussian noise.")


def samplers(signs: list[str]) -> str:
    """One Euler-Maruyama sampler per sign, each updating X_t with that sign before the
    drift; the first is the claim's."""
    names = ["euler_maruyama_sample", "sample_baseline", "sample_finetuned", "sample_eval"]
    return "import torch\n\n\n" + "\n\n".join(
        f"def {name}(X_t, drift_fn, sigma_t, h, steps):\n"
        f"    for _ in range(steps):\n"
        f"        drift = drift_fn(X_t)\n"
        f"        noise = torch.randn_like(X_t)\n"
        f"        X_t = X_t {sign} h * drift + torch.sqrt(h) * sigma_t * noise\n"
        f"    return X_t\n" for name, sign in zip(names, signs, strict=False))


def test_a_copy_outvoted_by_the_others_fails_its_claim(tmp_path: Path) -> None:
    faithful = toy_check(tmp_path / "faithful", {"sde.py": samplers(["+", "+", "+"])}, CLAIM)
    assert "operations" not in faithful[CLAIM.id].findings, faithful[CLAIM.id]
    drifted = toy_check(tmp_path / "drifted", {"sde.py": samplers(["-", "+", "+"])}, CLAIM)
    result = drifted[CLAIM.id]
    assert not result.passed and "operations" in result.findings, result
    assert any("differs by one operator" in r and "in 2 places" in r for r in result.reasons)


def test_two_copies_that_disagree_one_to_one_fail_nothing(tmp_path: Path) -> None:
    """An integration forward and one backward, an encoder's scale and its decoder's: which
    copy is right no vote can tell."""
    checked = toy_check(tmp_path / "repo", {"sde.py": samplers(["-", "+"])}, CLAIM)
    assert "operations" not in checked[CLAIM.id].findings, checked[CLAIM.id]


def test_short_expressions_are_copies_only_under_one_name(tmp_path: Path) -> None:
    """`a * b` is in every repository under many names; `scale * alpha` three times under
    `module.scale` is one quantity."""
    claim = toy_claim("toy-D2-001", "WiSE for adapters: the adapter's scale s is multiplied "
                                    "by alpha to blend the adapted features.")
    def code(first: str, name: str) -> str:
        return ("def wise_scale_adapter(module, alpha):\n"
                f"    module.scale = module.scale {first} alpha\n\n\n"
                "def wise_lora(module, alpha):\n    module.scale = module.scale * alpha\n\n\n"
                "def wise_prompt(module, alpha):\n    module.scale = module.scale * alpha\n\n\n"
                f"def other(module, alpha):\n    {name} = module.scale * alpha\n")
    same = toy_check(tmp_path / "same", {"wise.py": code("/", "module.scale")}, claim)
    assert "operations" in same[claim.id].findings, same[claim.id]
    named = toy_check(tmp_path / "named", {"wise.py": code("/", "blended")}, claim)
    assert "operations" in named[claim.id].findings  # still outvoted two to one
    lone = ("def wise_scale_adapter(module, alpha):\n    module.scale = module.scale / alpha\n\n"
            "\ndef rescale(module, alpha):\n    weight = module.scale * alpha\n\n\n"
            "def rescale_again(module, alpha):\n    bias = module.scale * alpha\n")
    other_names = toy_check(tmp_path / "lone", {"wise.py": lone}, claim)
    assert "operations" not in other_names[claim.id].findings, other_names[claim.id]
