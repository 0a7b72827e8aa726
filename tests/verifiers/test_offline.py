"""The offline judge end to end on real files: verdict shape, ordering, emulation, bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sabench.verifiers.judge import Judge, RepositoryError
from sabench.verifiers.offline import (
    CALIBRATION_FILE,
    Calibration,
    CalibrationError,
    OfflineJudge,
    apportion,
    default_calibration,
)
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import SCORE_LEVELS

SPEC = PaperSpec(paper_id="toy", claims=(
    Claim(id="toy-D1-001", dimension=Dimension.D1, text="Learning rate 3e-4 with AdamW"),
    Claim(id="toy-D1-002", dimension=Dimension.D1, text="Batch size 256 and 40 sampling steps"),
    Claim(id="toy-D1-003", dimension=Dimension.D1, text="Weight decay 0.05, warmup 2000 steps"),
    Claim(id="toy-D2-001", dimension=Dimension.D2,
          text="Contrastive loss: cross entropy of cosine similarity / temperature τ"),
    Claim(id="toy-D3-001", dimension=Dimension.D3,
          text="Evaluate top-1 accuracy on ImageNet and CIFAR-100 against SimCLR"),
    Claim(id="toy-D4-001", dimension=Dimension.D4,
          text="Step 1 — pretrain the encoder. Step 2 — finetune the classifier head. "
               "Step 3 — evaluate accuracy."),
))

GOOD = '''import torch
import torch.nn.functional as F

LEARNING_RATE = 3e-4
BATCH_SIZE = 256
SAMPLING_STEPS = 40
WEIGHT_DECAY = 0.05
WARMUP_STEPS = 2000


def contrastive_loss(z1, z2, temperature=0.1):
    sim = F.cosine_similarity(z1[:, None], z2[None], dim=-1) / temperature
    labels = torch.arange(len(z1))
    return F.cross_entropy(sim, labels)


def pretrain_encoder(encoder, data):
    opt = torch.optim.AdamW(encoder.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    for x1, x2 in data:
        loss = contrastive_loss(encoder(x1), encoder(x2))
        loss.backward()
        opt.step()


def finetune_classifier_head(head, features, labels):
    return torch.optim.AdamW(head.parameters(), lr=LEARNING_RATE)


def evaluate_accuracy(model, dataset_name):
    assert dataset_name in ("ImageNet", "CIFAR-100")
    baseline = "SimCLR"
    correct = (model.predict() == model.labels).float().mean()
    return {"top1_accuracy": correct, "baseline": baseline}


def main():
    pretrain_encoder(None, [])
    finetune_classifier_head(None, None, None)
    evaluate_accuracy(None, "ImageNet")


if __name__ == "__main__":
    main()
'''

STUB = '''def contrastive_loss(z1, z2):
    """Contrastive loss with cosine similarity and temperature (see paper)."""
    pass


def evaluate_accuracy(model):
    # TODO: implement top-1 accuracy on ImageNet
    raise NotImplementedError
'''


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).write_text(text)
    return root


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "good", {"train.py": GOOD})


@pytest.fixture
def stub(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "stub", {"model.py": STUB,
                                         "README.md": "Learning rate 3e-4, batch size 256.\n"})


def test_it_is_a_judge_and_verdicts_are_complete(good: Path) -> None:
    judge = OfflineJudge()
    assert isinstance(judge, Judge)
    score = judge.score(SPEC, good)
    verdicts = score.verdicts()
    assert len(verdicts) == len(SPEC.claims)
    for dim, v in verdicts:
        assert v.score in SCORE_LEVELS
        assert v.judge == judge.name == score.model
        assert 0.0 <= v.confidence <= 1.0
        assert v.judge_reasoning
        assert all(ref.startswith("train.py:") for ref in v.evidence_refs)
        assert v.id.split("-")[1] == dim.value
    dims = [score.dimensions[d].score for d in score.dimensions]
    assert score.overall_score == pytest.approx(sum(dims) / len(dims))


def test_levels_are_rounded_from_the_expected_scores(good: Path, stub: Path) -> None:
    for repo in (good, stub):
        score = OfflineJudge().score(SPEC, repo)
        for result in score.dimensions.values():
            pairs = sorted((v.expected_score, v.score) for v in result.claims)
            assert all(0.0 <= e <= 1.0 for e, _ in pairs)
            # A higher expected score never gets a lower level, and rounding keeps the mean.
            assert [level for _, level in pairs] == sorted(level for _, level in pairs)
            mean = sum(e for e, _ in pairs) / len(pairs)
            assert result.score == pytest.approx(mean, abs=0.125 / len(pairs) + 1e-3)


def test_deterministic(good: Path) -> None:
    first = OfflineJudge().score(SPEC, good)
    second = OfflineJudge().score(SPEC, good)
    assert [v.model_dump(exclude={"scored_at"}) for _, v in first.verdicts()] == \
        [v.model_dump(exclude={"scored_at"}) for _, v in second.verdicts()]


def test_an_implementation_beats_stubs_and_docs(good: Path, stub: Path) -> None:
    judge = OfflineJudge()
    good_score = judge.score(SPEC, good)
    stub_score = judge.score(SPEC, stub)
    assert good_score.overall_score > stub_score.overall_score
    low = [v for _, v in stub_score.verdicts() if v.score is not None and v.score <= 0.25]
    assert low and all(v.failure_category is not None for v in low)


def test_emulating_the_lenient_judge_scores_higher(good: Path) -> None:
    calibration = default_calibration()
    judges = sorted(calibration.cutpoints)
    assert len(judges) == 2
    expected = {j: OfflineJudge(emulate=j).score(SPEC, good).overall_score for j in judges}
    strict = calibration.default_judge
    lenient = next(j for j in judges if j != strict)
    assert expected[lenient] >= expected[strict]


def test_default_judge_is_the_stricter_one(good: Path, stub: Path) -> None:
    # Strictness is about real claims and repositories: the two judges' cut points cross
    # (gpt-5.5 gives 0.25 more readily, full marks far more rarely), so a synthetic feature
    # sweep does not order them.
    calibration = default_calibration()
    means = {j: sum(OfflineJudge(emulate=j).score(SPEC, repo).overall_score
                    for repo in (good, stub)) for j in calibration.cutpoints}
    assert means[calibration.default_judge] == min(means.values())


def test_unknown_emulated_judge_is_a_clear_error() -> None:
    with pytest.raises(CalibrationError, match="cannot emulate judge 'nobody'"):
        OfflineJudge(emulate="nobody")


def test_committed_calibration_is_small_and_documented() -> None:
    calibration = Calibration.load(CALIBRATION_FILE)
    assert calibration.n_parameters <= 48
    assert calibration.fitted_at[:4].isdigit() and "runs" in calibration.data
    assert set(calibration.dimension_offsets) == set(Dimension)
    for cuts in calibration.cutpoints.values():
        assert len(cuts) == 4 and cuts == sorted(cuts)
    for judge in calibration.cutpoints:
        for dim in Dimension:
            cuts = calibration.cuts(judge, dim)
            assert (np.diff(cuts) > 0).all()


def test_calibration_without_dimension_shifts_still_loads(tmp_path: Path) -> None:
    data = json.loads(CALIBRATION_FILE.read_text())
    data.pop("dimension_cut_shifts", None)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    old = Calibration.load(path)
    judge = old.default_judge
    assert (old.cuts(judge, Dimension.D4) == old.cuts(judge)).all()


def test_broken_calibration_file(tmp_path: Path) -> None:
    bad = tmp_path / "calibration.json"
    bad.write_text(json.dumps({"fitted_at": "x"}))
    with pytest.raises(CalibrationError, match=str(bad)):
        Calibration.load(bad)


def test_bad_repositories(tmp_path: Path) -> None:
    judge = OfflineJudge()
    with pytest.raises(RepositoryError, match="does not exist"):
        judge.score(SPEC, tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(RepositoryError, match="is a file"):
        judge.score(SPEC, tmp_path / "file")
    (tmp_path / "empty").mkdir()
    empty = judge.score(SPEC, tmp_path / "empty")
    assert empty.model_extra["empty_repository"] is True
    assert all(v.score is not None and v.score <= 0.25 for _, v in empty.verdicts())


def test_unsafe_and_broken_files_are_noted_not_fatal(tmp_path: Path, good: Path) -> None:
    secret = make_repo(tmp_path / "outside", {"secret.py": "LEARNING_RATE = 3e-4\n"})
    os.symlink(secret / "secret.py", good / "leak.py")
    (good / "broken.py").write_text("def (:\n")
    (good / "blob.bin").write_bytes(b"\x00" * 100)
    score = OfflineJudge().score(SPEC, good)
    notes = score.model_extra
    assert any(s.startswith("leak.py: symlink") for s in notes["skipped_files"])
    assert any(s.startswith("blob.bin") for s in notes["skipped_files"])
    assert any(s.startswith("broken.py") for s in notes["parse_errors"])
    assert all("leak.py" not in ref for _, v in score.verdicts() for ref in v.evidence_refs)


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=60))
def test_apportion_keeps_the_mean_and_the_order(expected: list[float]) -> None:
    values = np.array(expected)
    levels = apportion(values)
    assert set(levels) <= set(SCORE_LEVELS)
    assert abs(levels.mean() - values.mean()) <= 0.125 / len(values) + 1e-9
    order = np.argsort(values, kind="stable")
    assert all(levels[a] <= levels[b] + 0.25 for a, b in zip(order, order[1:], strict=False))


def test_same_verdicts_under_any_hash_seed(good: Path) -> None:
    """Set iteration order changes with PYTHONHASHSEED; the verdicts must not."""
    import subprocess
    import sys

    code = ("import json,sys; from pathlib import Path; "
            "from sabench.verifiers.offline import OfflineJudge; "
            "from tests.verifiers.test_offline import SPEC; "
            "s = OfflineJudge().score(SPEC, Path(sys.argv[1])); "
            "print(json.dumps([(v.id, v.score, v.confidence, v.evidence_refs) "
            "for _, v in s.verdicts()]))")
    outputs = {subprocess.run([sys.executable, "-c", code, str(good)], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).resolve().parents[2],
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2", "3")}
    assert len(outputs) == 1 and json.loads(outputs.pop())
