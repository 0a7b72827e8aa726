"""Per-claim checks on small real repositories: values, functions, stubs, docs-only, phases."""

from __future__ import annotations

from pathlib import Path

import pytest

from sabench.verifiers.checks import (
    check_claim,
    claim_steps,
    static_call_order,
)
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim, Dimension

TRAIN = '''import torch


def sample_trajectories(model, n):
    xs = [torch.randn(4) for _ in range(n)]
    return torch.stack(xs)


def solve_adjoint(trajectories, reward):
    grad = torch.autograd.grad(reward(trajectories).sum(), trajectories)[0]
    return grad.flip(0).cumsum(0)


def matching_loss(model, adjoint, sigma):
    residual = model.velocity * 2 / sigma + sigma * adjoint
    return residual.pow(2).sum()


def project_out(heads, attn_w_o, s_z):
    return heads @ attn_w_o * s_z


def evaluate_fid(samples):
    """Frechet inception distance: compare feature statistics (FID)."""
    raise NotImplementedError


def train(model, reward, steps):
    for _ in range(steps):
        x = sample_trajectories(model, 8)
        a = solve_adjoint(x, reward)
        loss = matching_loss(model, a, 0.5)
        loss.backward()


def main():
    optimizer_config = {"lr": 2e-5, "beta1": 0.95}
    train(None, None, steps=1000)


if __name__ == "__main__":
    main()
'''

DOCS = """# Notes
Weight decay 0.0125 is used with gradient clipping at 7.5 (from the paper).
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> RepoIndex:
    root = tmp_path_factory.mktemp("repo")
    (root / "train.py").write_text(TRAIN)
    (root / "NOTES.md").write_text(DOCS)
    (root / "config.yaml").write_text("optim:\n  learning_rate: 3.0e-4\n")
    return RepoIndex.build(root)


def claim(dim: Dimension, text: str) -> Claim:
    return Claim(id=f"p-{dim}-001", dimension=dim, text=text)


def test_d1_values_in_code_and_bound_to_related_names(index: RepoIndex) -> None:
    check = check_claim(index, claim(Dimension.D1, "Adam with lr=2e-5 and β₁=0.95"))
    assert set(check.numbers) == {"2e-5", "0.95"}
    assert set(check.numbers_in_code) == {"2e-5", "0.95"}
    assert "2e-5" in check.numbers_bound
    assert check.value_found and not check.docs_tests_only


def test_evidence_is_what_the_official_search_keeps(index: RepoIndex) -> None:
    from sabench.verifiers.official_search import OfficialSearch

    c = claim(Dimension.D2, "The matching loss adds sigma times the adjoint to the velocity")
    check = check_claim(index, c)
    kept = OfficialSearch(index).collect(c).items
    lines = len(index.files["train.py"].lines)
    assert kept and [e.file for e in check.evidence] == [i.file for i in kept]
    assert [(e.start_line, e.end_line) for e in check.evidence] == [
        (i.start, min(i.end, lines)) for i in kept]  # cut at the file's end
    assert all(e.why.startswith(f"official search, {i.relevance} query")
               for e, i in zip(check.evidence, kept, strict=True))


def test_d1_value_only_in_docs(index: RepoIndex) -> None:
    check = check_claim(index, claim(Dimension.D1, "Weight decay 0.0125, clipping at 7.5"))
    assert set(check.numbers_docs_only) == {"0.0125", "7.5"}
    assert check.numbers_in_code == []
    assert check.docs_tests_only
    assert check.evidence and check.evidence[0].file == "NOTES.md"


def test_d1_related_name_with_another_value_is_a_mismatch(index: RepoIndex) -> None:
    check = check_claim(index, claim(Dimension.D1, "Learning rate 1e-3"))
    assert check.numbers_in_code == []
    assert any(m.name.endswith("learning_rate") and m.found == "3.0e-4"
               for m in check.value_mismatches)


def test_d1_absent_value(index: RepoIndex) -> None:
    check = check_claim(index, claim(Dimension.D1, "Image resolution 512×512 for the VAE"))
    assert check.numbers == ["512"] and check.numbers_in_code == []
    assert check.numbers_docs_only == [] and not check.value_found


def test_d2_best_function_and_stub(index: RepoIndex) -> None:
    real = check_claim(index, claim(
        Dimension.D2, "Adjoint matching loss: ||2 (velocity) / σ + σ · adjoint||² summed"))
    assert real.function == "matching_loss" and real.function_stub is None
    assert real.function_coverage > 0.5
    stub = check_claim(index, claim(Dimension.D2, "Evaluate FID (Frechet inception distance)"))
    assert stub.function == "evaluate_fid"
    assert stub.function_stub == "raises NotImplementedError" and stub.stub_detected


def test_d3_entities_in_code(index: RepoIndex) -> None:
    check = check_claim(index, claim(Dimension.D3, "Evaluate with FID and CLIPScore on COCO"))
    assert set(check.entities) >= {"FID", "CLIPScore", "COCO"}
    assert "FID" in check.entities_in_code and "COCO" not in check.entities_in_code


def test_d4_phases_and_their_order(index: RepoIndex) -> None:
    text = ("Step 1 — sample trajectories from the model. Step 2 — solve the adjoint backwards "
            "with the reward gradient. Step 3 — compute the matching loss and step the optimizer.")
    check = check_claim(index, claim(Dimension.D4, text))
    assert check.phases == 3
    assert check.phases_found == ["sample_trajectories", "solve_adjoint", "matching_loss"]
    assert check.phase_order == 1.0
    reversed_text = ("Step 1 — compute the matching loss. Step 2 — solve the adjoint backwards "
                     "with the reward gradient. Step 3 — sample trajectories from the model.")
    assert check_claim(index, claim(Dimension.D4, reversed_text)).phase_order == 0.0


def test_static_call_order_follows_entry_points(index: RepoIndex) -> None:
    order = static_call_order(index)
    assert order["main"] < order["train"] < order["sample_trajectories"] \
        < order["solve_adjoint"] < order["matching_loss"]
    assert "evaluate_fid" not in order


def test_claim_steps_split_stated_order() -> None:
    assert len(claim_steps("Pretrain the encoder → finetune the decoder → distill the student")) \
        == 3


def test_external_dependencies_flagged(index: RepoIndex) -> None:
    assert check_claim(index, claim(Dimension.D3, "Initialise from pretrained LLaMA weights"
                                    )).external


def test_empty_repository_checks(tmp_path: Path) -> None:
    empty = RepoIndex.build(tmp_path)
    check = check_claim(empty, claim(Dimension.D1, "lr 3e-4"))
    assert check.evidence == [] and check.term_coverage == 0 and check.numbers_in_code == []
