"""Evidence retrieval: the right windows come first, by dimension, with kind and reason."""

from __future__ import annotations

from pathlib import Path

from sabench.verifiers.evidence import retrieve
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.types import EvidenceKind

MODEL = '''import torch


def unrelated(x):
    return x + 1


def kl_regularised_loss(logits, ref_logits, beta):
    """Compute the KL-regularised reward loss."""
    logp = torch.log_softmax(logits, -1)
    ref = torch.log_softmax(ref_logits, -1)
    kl = (logp.exp() * (logp - ref)).sum(-1)
    return -reward + beta * kl


def placeholder_loss(logits):
    """KL-regularised reward loss with beta: see the paper."""
    return 0.0
'''


def build(tmp_path: Path) -> RepoIndex:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "model.py").write_text(MODEL)
    (root / "config.yaml").write_text("optimizer:\n  learning_rate: 3.0e-4\n  warmup: 2000\n")
    (root / "README.md").write_text("We train with learning rate 3e-4 and 2000 warmup steps.\n")
    (root / "train.py").write_text("lr = 0.0003\nsteps = 10\n")
    return RepoIndex.build(root)


def test_d1_value_in_config_ranks_first(tmp_path: Path) -> None:
    index = build(tmp_path)
    claim = Claim(id="p-D1-001", dimension=Dimension.D1,
                  text="Learning rate 3 × 10^-4 with 2,000 warmup steps")
    evidence = retrieve(index, claim, k=4)
    assert evidence[0].file == "config.yaml" and evidence[0].kind == EvidenceKind.CONFIG
    assert "numbers 0.0003, 2000" in evidence[0].why
    assert evidence[0].start_line == 1 and "learning_rate" in evidence[0].snippet
    kinds = {e.file: e.kind for e in evidence}
    assert kinds.get("README.md") == EvidenceKind.DOCS
    assert [e.relevance for e in evidence] == sorted((e.relevance for e in evidence),
                                                     reverse=True)


def test_d2_prefers_the_real_function_over_a_stub(tmp_path: Path) -> None:
    index = build(tmp_path)
    claim = Claim(id="p-D2-001", dimension=Dimension.D2,
                  text="KL-regularised loss = -r(x) + β · KL(π || π_ref) via log-softmax")
    evidence = retrieve(index, claim, k=3)
    assert evidence[0].file == "model.py"
    assert evidence[0].start_line <= 11 <= evidence[0].end_line  # inside kl_regularised_loss
    assert evidence[0].end_line - evidence[0].start_line == 7


def test_nothing_matches_gives_no_evidence(tmp_path: Path) -> None:
    index = build(tmp_path)
    claim = Claim(id="p-D3-001", dimension=Dimension.D3, text="Evaluate on Kinetics-600 with FVD")
    assert retrieve(index, claim) == []


def test_windows_do_not_overlap_and_respect_k(tmp_path: Path) -> None:
    index = build(tmp_path)
    claim = Claim(id="p-D2-002", dimension=Dimension.D2, text="log softmax KL loss reward beta")
    evidence = retrieve(index, claim, k=2)
    assert len(evidence) <= 2
    spans = [(e.file, e.start_line, e.end_line) for e in evidence]
    for i, (f1, s1, e1) in enumerate(spans):
        for f2, s2, e2 in spans[i + 1:]:
            assert f1 != f2 or e1 < s2 or e2 < s1
