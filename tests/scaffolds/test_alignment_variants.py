"""The variant rule: a value per model size, set in the size's own section."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.scaffolds.alignment_variants import claim_variants, variant_findings
from sabench.verifiers.index import RepoIndex

from .test_alignment_check import toy_check, toy_claim

LAYERS = toy_claim("toy-D1-001", "Transformer layers: n_layers=24 (B) / 32 (L) / 40 (H)")
HEADS = toy_claim("toy-D1-001", "Per-size attention heads (Table 5): num_heads=4 (Tiny) / 8 "
                                "(Small) / 8 (Medium)")
SIZES = toy_claim("toy-D1-001", "Model dimensions for 0.5B/1B models (Table 2): n_layers=24/36, "
                                "d_model=1024/1280")


def test_the_claims_variants_are_read_with_their_labels() -> None:
    assert [(v.symbol, {k: set(n) for k, n in v.values.items()})
            for v in claim_variants(SIZES.text)] == [
        ("n_layers", {"0.5b": {"24"}, "1b": {"36"}}),
        ("d_model", {"0.5b": {"1024"}, "1b": {"1280"}})]
    assert [set(v.values) for v in claim_variants(HEADS.text)] == [{"tiny", "small", "medium"}]
    assert claim_variants("Batch size 16 for ODE1/2; lr=1e-3") == []


def yaml_sizes(large: int) -> str:
    return ("model:\n"
            "  base:\n    n_layers: 24\n    hidden: 768\n"
            f"  large:\n    n_layers: {large}\n    hidden: 1024\n"
            "  huge:\n    n_layers: 40\n    hidden: 1280\n"
            "diffusion_head:\n"
            "  large:\n    num_layers: 8\n")


def dict_sizes(small: int) -> str:
    return ("SIZES = {\n"
            '    "tiny": {"num_heads": 4, "dim": 512},\n'
            f'    "small": {{"num_heads": {small}, "dim": 1024}},\n'
            '    "medium": {"num_heads": 8, "dim": 1024},\n'
            "}\n")


def branch_sizes(layers: int) -> str:
    return ("class Config:\n"
            '    def __init__(self, model_size="0.5B"):\n'
            '        if model_size == "0.5B":\n'
            f"            self.n_layers = {layers}\n"
            "            self.d_model = 1024\n"
            '        elif model_size == "1.0B":\n'
            "            self.n_layers = 36\n"
            "            self.d_model = 1280\n")


def variant_reasons(repo: Path, files: dict[str, str], claim) -> list[str]:
    write_files(repo, files)
    return [f.reason for f in variant_findings(RepoIndex.build(repo), claim)]


def write_files(repo: Path, files: dict[str, str]) -> None:
    repo.mkdir(parents=True)
    for name, text in files.items():
        (repo / name).write_text(text)


@pytest.mark.parametrize(("claim", "file", "write", "faithful", "drifted"), [
    (LAYERS, "config.yaml", yaml_sizes, 32, 320),
    (HEADS, "config.py", dict_sizes, 8, 80),
    (SIZES, "config.py", branch_sizes, 24, 240),
])
def test_a_variants_setting_holding_another_variants_value_fails(
        tmp_path: Path, claim, file: str, write, faithful: int, drifted: int) -> None:
    assert variant_reasons(tmp_path / "faithful", {file: write(faithful)}, claim) == []
    reasons = variant_reasons(tmp_path / "drifted", {file: write(drifted)}, claim)
    assert len(reasons) == 1 and f"= {drifted} at {file}" in reasons[0], reasons


HEAD_LAYERS = toy_claim("toy-D1-001", "Diffusion head phase 1 layers: diff_head1_layers=6 (B) / "
                                      "8 (L) / 12 (H)")


def head_sizes(large: int) -> str:
    return "model:\n" + "".join(
        f"  diffusion_head_{head}:\n" + "".join(
            f"    {size}:\n      num_layers: {layers}\n      hidden_size: {hidden}\n"
            for size, layers, hidden in (("base", 6, 1024), ("large", large if head == 1
                                                             else 8, 1280), ("huge", 12, 1536)))
        for head in (1, 2))


def test_the_check_fails_a_variants_setting_named_by_its_sections(tmp_path: Path) -> None:
    """`diffusion_head_1.large.num_layers` is the claim's `diff_head1_layers` for L; the
    other rules cannot tell it from `diffusion_head_2`'s, which holds 8."""
    for large, fails in ((8, False), (80, True)):
        repo = tmp_path / str(large)
        result = toy_check(repo, {"config.yaml": head_sizes(large)}, HEAD_LAYERS)[HEAD_LAYERS.id]
        assert result.passed is not fails, result
        if fails:
            assert any("a setting of variant l" in r for r in result.reasons), result


def test_a_setting_of_another_quantity_under_a_variant_is_not_the_claims(tmp_path: Path) -> None:
    """`diffusion_head.large.num_layers: 8` sets the head's layers, not the transformer's."""
    assert variant_reasons(tmp_path / "repo", {"config.yaml": yaml_sizes(32)}, LAYERS) == []


def test_a_repository_without_the_claims_variants_is_left_to_the_other_rules(
        tmp_path: Path) -> None:
    """No variant's setting holds its stated value: the sections may name other variants
    (a paper's B is not always the code's base), so this rule says nothing."""
    text = yaml_sizes(32).replace("n_layers: 24", "n_layers: 12").replace(
        "n_layers: 32", "n_layers: 16").replace("n_layers: 40", "n_layers: 20")
    claim = toy_claim("toy-D1-001", "Transformer layers: n_layers=24 (B) / 32 (L)")
    assert variant_reasons(tmp_path / "repo", {"config.yaml": text}, claim) == []
