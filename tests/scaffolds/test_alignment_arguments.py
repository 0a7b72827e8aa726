"""The argument rule: a call named by a numerical claim takes the claim's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.scaffolds.alignment_arguments import argument_findings
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import Evidence

from .test_alignment_check import toy_check, toy_claim

UNIFORM = toy_claim("toy-D1-001", "Covariance diagonal: the first k entries are drawn "
                                  "uniformly from [0, 10], the others are zero.")
CODE = ("import numpy as np\n\n\ndef covariance(d, k, seed=0):\n"
        "    rng = np.random.default_rng(seed)\n    diag = np.zeros(d)\n"
        "    diag[:k] = rng.uniform(0.0, {}, size=k)\n    return np.diag(diag)\n")


@pytest.mark.parametrize(("high", "fails"), [("10.0", False), ("100.0", True)])
def test_a_call_named_by_the_claim_takes_its_numbers(tmp_path: Path, high: str,
                                                     fails: bool) -> None:
    result = toy_check(tmp_path / "repo", {"data.py": CODE.format(high)}, UNIFORM)[UNIFORM.id]
    assert ("value_conflict" in result.findings) is fails, result
    if fails:
        assert any("uniform(...) at data.py:7 takes 100" in r for r in result.reasons), result


@pytest.mark.parametrize(("high", "fails"), [("10.0", False), ("100.0", True), ("1.0", False)])
def test_a_range_is_compared_as_a_range(tmp_path: Path, high: str, fails: bool) -> None:
    # 100 is a number the claim mentions (d=100), but not the end of its range; a draw from
    # [0, 1] is noise more often than the claim's range moved
    claim = toy_claim("toy-D1-001", "Configurations d=10 and d=100: the first k diagonal "
                                    "entries are drawn uniformly from [0, 10].")
    result = toy_check(tmp_path / "repo", {"data.py": CODE.format(high)}, claim)[claim.id]
    assert ("value_conflict" in result.findings) is fails, result
    if fails:
        assert any("draws from [0, 100], but the claim states [0, 10]" in r
                   for r in result.reasons), result


@pytest.mark.parametrize(("high", "fails"), [("10.0", False), ("100.0", True)])
def test_a_range_is_compared_in_the_whole_function_a_window_shows(
        tmp_path: Path, high: str, fails: bool) -> None:
    # the best window shows the function's head; the draw lies further down in it
    claim = toy_claim("toy-D1-001", "Configurations d=10 and d=100: the first k diagonal "
                                    "entries are drawn uniformly from [0, 10].")
    steps = "".join(f"    # step {i}: more set-up\n" for i in range(14))
    code = CODE.replace("    diag[:k]", steps + "    diag[:k]")
    (tmp_path / "data.py").write_text(code.format(high))
    check = ClaimCheck(claim_id=claim.id, dimension=Dimension.D1,
                       evidence=[Evidence(file="data.py", start_line=1, end_line=8)])
    found = argument_findings(RepoIndex.build(tmp_path), claim, check)
    assert [f.where for f in found] == (["data.py:21"] if fails else [])


def test_a_layers_sizes_are_not_values_it_takes_from_the_claim(tmp_path: Path) -> None:
    # 256 and 512 are channel counts here, however the claim's image sizes read
    claim = toy_claim("toy-D1-001", "Encoder downsampling: one shared encoder for 128x128 "
                                    "and 256x256 inputs, 16x downsampling.")
    code = ("import torch.nn as nn\n\n\nclass DownsampleBlock(nn.Module):\n"
            "    def __init__(self, c_in, c_out):\n        super().__init__()\n"
            "        self.conv = nn.Conv2d(c_in, c_out, 3, stride=2, padding=1)\n\n\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.down1 = DownsampleBlock(128, 256)  # downsampling 256x256 inputs\n"
            "        self.down2 = DownsampleBlock(256, 512)\n")
    result = toy_check(tmp_path / "repo", {"encoder.py": code}, claim)[claim.id]
    assert "value_conflict" not in result.findings, result
