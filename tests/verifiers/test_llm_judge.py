"""The LLM judge driven by scripted chat models: batching, validation, retries, errors, cost."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from sabench.agent.usage import UsageRecorder
from sabench.verifiers.llm_judge import (
    NO_EVIDENCE_REASON,
    EvidenceProvider,
    LLMJudge,
    ReplyError,
    official_evidence,
    parse_reply,
)
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import Evidence, EvidenceKind, PaperScore
from tests.agent.scripted import ScriptedChatModel

TRAIN_PY = """\
import torch

LEARNING_RATE = 3e-4
BATCH_SIZE = 64


def train(model, data):
    opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    for batch in data:
        loss = model(batch).mean()
        loss.backward()
        opt.step()
"""


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN_PY, encoding="utf-8")
    return repo


def make_spec(n_d1: int, n_d2: int = 0) -> PaperSpec:
    claims = [Claim(id=f"p-D1-{i:03d}", dimension=Dimension.D1,
                    text=f"The learning rate is 3e-4 (variant {i}).") for i in range(n_d1)]
    claims += [Claim(id=f"p-D2-{i:03d}", dimension=Dimension.D2,
                     text=f"Training uses AdamW on the mean loss (part {i}).") for i in range(n_d2)]
    return PaperSpec(paper_id="p", title="A paper", claims=tuple(claims))


def file_evidence(repo: Path, skip: set[str] = frozenset()) -> EvidenceProvider:
    """Evidence read from the real file: the first eight lines of train.py for every claim."""
    lines = (repo / "train.py").read_text(encoding="utf-8").splitlines()

    def provide(claim: Claim) -> list[Evidence]:
        if claim.id in skip:
            return []
        return [Evidence(file="train.py", start_line=1, end_line=8,
                         snippet="\n".join(lines[:8]), kind=EvidenceKind.CODE, why="lr")]

    return provide


def ids_in(messages: list[BaseMessage]) -> list[str]:
    return re.findall(r"^## Claim (\S+)$", str(messages[-1].content), re.MULTILINE)


def answer_all(score: float = 0.75, refs: tuple[str, ...] = ("train.py:3-3",)):
    """A scripted reply that answers every claim of the request it receives."""

    def reply(messages: list[BaseMessage]) -> str:
        return json.dumps({"verdicts": [
            {"id": cid, "score": score, "reasoning": "lr set in train.py",
             "evidence_refs": list(refs)}
            for cid in ids_in(messages)]})

    return reply


def judge_for(model: ScriptedChatModel, repo: Path, sleeps: list[float] | None = None,
              skip: set[str] = frozenset(), **options) -> LLMJudge:
    recorder = sleeps if sleeps is not None else []
    return LLMJudge(model, evidence=lambda root: file_evidence(root, skip), concurrency=1,
                    sleep=recorder.append, **options)


def test_claims_are_batched_per_dimension(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all() for _ in range(5)])
    score = judge_for(model, repo, batch_size=5).score(make_spec(12, 8), repo)
    batches = [ids_in(messages) for messages in model.received]
    assert [len(b) for b in batches] == [5, 5, 2, 5, 3]
    assert all(len({cid.split("-")[1] for cid in b}) == 1 for b in batches)
    sent = sorted(cid for b in batches for cid in b)
    assert sent == sorted(c.id for c in make_spec(12, 8).claims)
    assert score.dimensions[Dimension.D1].score == 0.75 and score.overall_score == 0.75
    assert score.model == "llm:scripted-model"
    assert all(v.judge == "llm:scripted-model" for _, v in score.verdicts())


def test_request_shows_claim_evidence_with_line_numbers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all()])
    judge_for(model, repo).score(make_spec(1), repo)
    system, user = model.received[0]
    assert "0.75" in str(system.content)
    assert "The learning rate is 3e-4 (variant 0)." in str(user.content)
    assert "train.py:1-8 (code)" in str(user.content)
    assert "    3 | LEARNING_RATE = 3e-4" in str(user.content)


def test_malformed_reply_is_retried_with_the_problem_stated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=["I think it is fine.", answer_all(1.0)])
    sleeps: list[float] = []
    score = judge_for(model, repo, sleeps, backoff=2.0).score(make_spec(3), repo)
    assert len(model.received) == 2 and sleeps == [2.0]
    assert "not valid JSON" in str(model.received[1][-1].content)
    assert [v.score for _, v in score.verdicts()] == [1.0, 1.0, 1.0]
    assert score.errors == 0


def test_off_scale_score_is_malformed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all(0.3), answer_all(0.5)])
    score = judge_for(model, repo).score(make_spec(2), repo)
    assert "score 0.3 is not one of" in str(model.received[1][-1].content)
    assert [v.score for _, v in score.verdicts()] == [0.5, 0.5]


def test_only_unanswered_claims_are_asked_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)

    def first_two(messages: list[BaseMessage]) -> str:
        return json.dumps({"verdicts": [
            {"id": cid, "score": 0.25, "reasoning": "only a comment"}
            for cid in ids_in(messages)[:2]]})

    model = ScriptedChatModel(replies=[first_two, answer_all(1.0)])
    score = judge_for(model, repo).score(make_spec(3), repo)
    assert ids_in(model.received[1]) == ["p-D1-002"]
    assert "no verdict for claim ids p-D1-002" in str(model.received[1][-1].content)
    assert [v.score for _, v in score.verdicts()] == [0.25, 0.25, 1.0]


def test_transport_errors_back_off_exponentially(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[ConnectionError("reset by peer"), TimeoutError("slow"),
                                       answer_all(0.5)])
    sleeps: list[float] = []
    score = judge_for(model, repo, sleeps, backoff=1.5).score(make_spec(2), repo)
    assert sleeps == [1.5, 3.0]
    assert score.errors == 0 and score.overall_score == 0.5


def test_claims_still_failing_become_errors_not_zeros(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all(1.0), ConnectionError("down"),
                                       ConnectionError("down"), ConnectionError("down")])
    spec = make_spec(2, 2)
    score = judge_for(model, repo, batch_size=2, max_attempts=3).score(spec, repo)
    d1, d2 = score.dimensions[Dimension.D1], score.dimensions[Dimension.D2]
    assert [v.score for v in d1.claims] == [1.0, 1.0]
    assert [v.score for v in d2.claims] == [None, None]
    assert all("no usable verdict after 3 attempts" in v.error for v in d2.claims)
    assert all("ConnectionError: down" in v.error for v in d2.claims)
    assert d2.score is None and score.errors == 2 and score.overall_score == 1.0
    out = tmp_path / "score.json"
    score.dump(out)
    reloaded = PaperScore.load(out)
    assert reloaded.errors == 2
    assert json.loads(out.read_text())["dimensions"]["D2"]["claims"][0]["score"] is None


def test_claims_without_evidence_are_zero_without_a_call(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all(1.0)])
    score = judge_for(model, repo, skip={"p-D1-001"}).score(make_spec(3), repo)
    assert ids_in(model.received[0]) == ["p-D1-000", "p-D1-002"]
    verdict = {v.id: v for _, v in score.verdicts()}
    assert verdict["p-D1-001"].score == 0.0
    assert verdict["p-D1-001"].judge_reasoning == NO_EVIDENCE_REASON


def test_refs_outside_the_shown_evidence_are_dropped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all(0.75, ("train.py:3-4", "invented.py:1-9"))])
    score = judge_for(model, repo).score(make_spec(1), repo)
    assert score.verdicts()[0][1].evidence_refs == ["train.py:3-4"]


def test_bad_reference_format_is_malformed() -> None:
    reply = json.dumps({"verdicts": [{"id": "a", "score": 1, "reasoning": "x",
                                      "evidence_refs": ["train.py line 3"]}]})
    with pytest.raises(ReplyError, match="path:start-end"):
        parse_reply(reply, ["a"])


def test_fenced_json_and_unknown_ids_are_tolerated() -> None:
    reply = "```json\n" + json.dumps({"verdicts": [
        {"id": "a", "score": 0, "reasoning": "absent"},
        {"id": "zzz", "score": 1, "reasoning": "not asked"}]}) + "\n```"
    found, problem = parse_reply(reply, ["a", "b"])
    assert set(found) == {"a"} and problem == "no verdict for claim ids b"


def test_usage_and_dollars_are_totalled(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    recorder = UsageRecorder()
    model = ScriptedChatModel(
        replies=["not json", answer_all(), answer_all(), ConnectionError("x"), answer_all()],
        model_name="gpt-4o", input_tokens_per_call=4000, output_tokens_per_call=500)
    judge = LLMJudge(model, evidence=lambda root: file_evidence(root), batch_size=4,
                     concurrency=1, sleep=lambda _: None, callbacks=[recorder])
    judge.score(make_spec(12), repo)
    totals = recorder.totals()
    # 5 requests; the failed transport call returns nothing to bill.
    assert judge.calls == 5 and totals.calls == 4
    assert (totals.input_tokens, totals.output_tokens) == (16_000, 2_000)
    assert judge.input_tokens == 16_000
    assert totals.dollars == pytest.approx(4 * (4000 * 2.5 + 500 * 10.0) / 1e6)


def test_concurrent_batches_give_the_same_verdicts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[answer_all(0.5) for _ in range(6)])
    judge = LLMJudge(model, evidence=lambda root: file_evidence(root), batch_size=2,
                     concurrency=3, sleep=lambda _: None)
    score = judge.score(make_spec(6, 6), repo)
    assert len(model.received) == 6 and score.errors == 0
    assert [v.id for _, v in score.verdicts()] == [c.id for c in make_spec(6, 6).claims]


@pytest.mark.llm
def test_real_model_judges_a_small_repository(tmp_path: Path) -> None:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        pytest.skip("no ANTHROPIC_API_KEY")
    from sabench.agent.models import make_model

    repo = make_repo(tmp_path)
    recorder = UsageRecorder()
    model = make_model("anthropic:claude-haiku-4-5", callbacks=[recorder])
    judge = LLMJudge(model, evidence=lambda root: file_evidence(root))
    score = judge.score(make_spec(1, 1), repo)
    assert score.errors == 0 and recorder.totals().dollars > 0


def test_default_evidence_comes_from_the_repository_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "README.md").write_text("# Notes\nWe train with AdamW.\n", encoding="utf-8")
    model = ScriptedChatModel(replies=[answer_all(1.0)])
    judge = LLMJudge(model, concurrency=1, sleep=lambda _: None)
    score = judge.score(make_spec(1), repo)
    request = str(model.received[0][-1].content)
    assert "train.py:" in request and "LEARNING_RATE = 3e-4" in request
    assert score.verdicts()[0][1].score == 1.0


def test_claim_with_nothing_retrievable_costs_no_call(tmp_path: Path) -> None:
    repo = tmp_path / "empty-ish"
    repo.mkdir()
    (repo / "notes.txt").write_text("unrelated words only\n", encoding="utf-8")
    model = ScriptedChatModel(replies=[])
    spec = PaperSpec(paper_id="p", claims=(Claim(id="p-D1-001", dimension=Dimension.D1,
                                                 text="Dropout probability is 0.37."),))
    score = LLMJudge(model, sleep=lambda _: None).score(spec, repo)
    assert model.received == [] and score.verdicts()[0][1].score == 0.0


def test_plan_matches_what_scoring_sends(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    spec = make_spec(7, 3)
    model = ScriptedChatModel(replies=[answer_all() for _ in range(3)])
    judge = judge_for(model, repo, skip={"p-D1-004"}, batch_size=4)
    plan = judge.plan(spec, spec.claims, file_evidence(repo, {"p-D1-004"}))
    assert model.received == []  # planning calls no model
    judge.score(spec, repo)
    assert plan.requests == len(model.received) == 3
    assert (plan.claims_sent, plan.claims_without_evidence) == (9, 1)
    sent_chars = sum(len(str(m.content)) for messages in model.received for m in messages)
    assert plan.input_tokens == sent_chars // 4


def test_transport_retry_does_not_blame_the_model(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = ScriptedChatModel(replies=[ConnectionError("reset"), answer_all()])
    judge_for(model, repo).score(make_spec(1), repo)
    assert str(model.received[0][-1].content) == str(model.received[1][-1].content)
    assert "could not be used" not in str(model.received[1][-1].content)


def test_official_evidence_shows_two_windows_and_applies_the_gates(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "configs").mkdir()
    (repo / "configs" / "train.yaml").write_text("optimizer: adamw\nlr: 3e-4\n")
    spec = PaperSpec(paper_id="p", claims=(
        Claim(id="p-D1-001", dimension=Dimension.D1, text="AdamW with learning rate 3e-4."),
        Claim(id="p-D3-001", dimension=Dimension.D3,
              text="The experiment trains for 77777 iterations.")))
    model = ScriptedChatModel(replies=[answer_all(0.5, ("configs/train.yaml:1-2",))])
    judge = LLMJudge(model, evidence=official_evidence(), concurrency=1, sleep=lambda _: None)
    score = judge.score(spec, repo)
    assert [ids_in(m) for m in model.received] == [["p-D1-001"]]  # the gated claim: no call
    request = str(model.received[0][-1].content)
    assert request.count("(code)") + request.count("(config)") == 2
    assert "lr: 3e-4" in request
    verdicts = [v for _, v in score.verdicts()]
    assert {v.id: v.score for v in verdicts} == {"p-D1-001": 0.5, "p-D3-001": 0.0}

