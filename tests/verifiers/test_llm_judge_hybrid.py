"""The hybrid judge: offline verdicts where confident, the (scripted) LLM for the rest."""

from __future__ import annotations

import json
import re
from pathlib import Path

from langchain_core.messages import BaseMessage

from sabench.verifiers.keyword import KeywordJudge
from sabench.verifiers.llm_judge import NO_EVIDENCE_REASON, HybridJudge, LLMJudge
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import ClaimVerdict, PaperScore
from tests.agent.scripted import ScriptedChatModel

TRAIN = """\
LEARNING_RATE = 3e-4
BATCH_SIZE = 64
WARMUP_STEPS = 500


def train(model, data):
    for batch in data:
        loss = model(batch).mean()
        loss.backward()
"""

SPEC = PaperSpec(paper_id="p", claims=(
    Claim(id="p-D1-001", dimension=Dimension.D1, text="The learning rate is 3e-4."),
    Claim(id="p-D1-002", dimension=Dimension.D1, text="The batch size is 64."),
    Claim(id="p-D1-003", dimension=Dimension.D1, text="Gradient clipping at norm 7.5."),
    Claim(id="p-D2-001", dimension=Dimension.D2,
          text="The loss is the mean of the model output, and warm-up lasts 500 steps."),
))


class ConfidenceByLevel:
    """The keyword judge, with confidence 0.9 at the ends of the scale and 0.3 in between."""

    def __init__(self) -> None:
        self.inner = KeywordJudge()

    @property
    def name(self) -> str:
        return self.inner.name

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        result = self.inner.score(spec, repo)
        by_dim = {dim: [v.model_copy(update={"confidence": 0.9 if v.score in (0.0, 1.0) else 0.3})
                        for v in res.claims] for dim, res in result.dimensions.items()}
        return PaperScore.of(spec.paper_id, by_dim, model=self.name)


def answer(messages: list[BaseMessage]) -> str:
    ids = re.findall(r"^## Claim (\S+)$", str(messages[-1].content), re.MULTILINE)
    return json.dumps({"verdicts": [{"id": cid, "score": 0.5, "reasoning": "llm looked"}
                                    for cid in ids]})


def sent_ids(model: ScriptedChatModel) -> list[str]:
    return [cid for messages in model.received
            for cid in re.findall(r"^## Claim (\S+)$", str(messages[-1].content), re.MULTILINE)]


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN, encoding="utf-8")
    return repo


def test_only_unsure_claims_reach_the_llm(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    offline = ConfidenceByLevel()
    base = {v.id: v for _, v in offline.score(SPEC, repo).verdicts()}
    unsure = sorted(cid for cid, v in base.items() if v.confidence < 0.7)
    assert unsure and len(unsure) < len(base)  # the fixture exercises both paths
    model = ScriptedChatModel(replies=[answer, answer])
    judge = HybridJudge(offline, LLMJudge(model, concurrency=1, sleep=lambda _: None),
                        threshold=0.7)
    score = judge.score(SPEC, repo)
    assert sorted(sent_ids(model)) == unsure
    got = {v.id: v for _, v in score.verdicts()}
    for cid, verdict in got.items():
        if cid in unsure:
            assert verdict.score == 0.5 and verdict.judge == "llm:scripted-model"
        else:
            assert verdict == base[cid]
    assert score.model == "hybrid:scripted-model"
    assert (score.llm_claims, score.offline_claims) == (len(unsure), len(base) - len(unsure))


def test_verdicts_without_confidence_all_go_to_the_llm(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer, answer])
    judge = HybridJudge(KeywordJudge(), LLMJudge(model, concurrency=1, sleep=lambda _: None))
    score = judge.score(SPEC, repo)
    sent = set(sent_ids(model))
    assert sent and all(v.judge == "llm:scripted-model" for _, v in score.verdicts())
    # a claim retrieval finds nothing for is scored 0 by the LLM judge without a call
    for _, verdict in score.verdicts():
        assert (verdict.id in sent) == (verdict.judge_reasoning != NO_EVIDENCE_REASON)


def test_llm_failure_is_an_error_or_falls_back_when_asked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    outage = [ConnectionError("down")] * 4
    strict = HybridJudge(KeywordJudge(), LLMJudge(
        ScriptedChatModel(replies=list(outage)), max_attempts=2, concurrency=1,
        sleep=lambda _: None))
    failed = strict.score(SPEC, repo)
    assert failed.errors > 0
    assert all(v.is_error or v.judge_reasoning == NO_EVIDENCE_REASON for _, v in failed.verdicts())
    lenient = HybridJudge(KeywordJudge(), LLMJudge(
        ScriptedChatModel(replies=list(outage)), max_attempts=2, concurrency=1,
        sleep=lambda _: None), fallback_to_offline=True)
    kept = lenient.score(SPEC, repo)
    offline = {v.id: v for _, v in KeywordJudge().score(SPEC, repo).verdicts()}
    for _, verdict in kept.verdicts():
        if verdict.judge_reasoning != NO_EVIDENCE_REASON:
            assert verdict.score == offline[verdict.id].score
            assert "ConnectionError" in verdict.llm_error
    assert any(getattr(v, "llm_error", None) for _, v in kept.verdicts())
    assert isinstance(kept.verdicts()[0][1], ClaimVerdict) and kept.errors == 0


def test_real_offline_judge_routes_by_its_confidence(tmp_path: Path) -> None:
    from sabench.verifiers.offline import OfflineJudge

    repo = make_repo(tmp_path)
    offline = OfflineJudge()
    base = {v.id: v for _, v in offline.score(SPEC, repo).verdicts()}
    threshold = 0.5
    unsure = sorted(cid for cid, v in base.items() if v.confidence < threshold)
    assert unsure and len(unsure) < len(base)  # the fixture exercises both paths
    assert all(base[cid].evidence_refs for cid in unsure)  # so each one reaches the model
    model = ScriptedChatModel(replies=[answer, answer])
    judge = HybridJudge(offline, LLMJudge(model, concurrency=1, sleep=lambda _: None),
                        threshold=threshold)
    score = judge.score(SPEC, repo)
    assert sorted(sent_ids(model)) == unsure
    for _, verdict in score.verdicts():
        if verdict.id in unsure:
            assert verdict.score == 0.5 and verdict.judge == "llm:scripted-model"
        else:
            assert verdict == base[verdict.id].model_copy(update={"judge": offline.name})
    # the model reads the LLM judge's own (ranked) retrieval, not the offline judge's citations
    from sabench.verifiers.evidence import retrieve
    from sabench.verifiers.index import RepoIndex

    request = str(model.received[0][-1].content)
    claim = next(c for c in SPEC.claims if c.id == unsure[0])
    ranked = [e.ref for e in retrieve(RepoIndex.build(repo), claim)]
    assert ranked and all(f"{ref} (" in request for ref in ranked)
