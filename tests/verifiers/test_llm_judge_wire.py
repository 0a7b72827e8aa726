"""The LLM and hybrid judges over the wire: the real OpenAI client against the loopback model
server, with batching, malformed verdicts, retries and usage as they happen in a real run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sabench.agent.usage import UsageRecorder
from sabench.benchmark.dataset import load_paper
from sabench.benchmark.scoring import make_judge, score_repo
from tests.agent.model_server import HttpError, LoopbackModelServer, Reply, Request

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = load_paper(DEMO / "papers" / "smoothlr")
REPO = DEMO / "repos" / "faithful"
CLAIM = re.compile(r"^## Claim (\S+)$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def claim_ids(request: Request) -> list[str]:
    text = "\n".join(str(m["content"]) for m in request.body["messages"])
    return CLAIM.findall(text)


def verdicts(request: Request, score: float = 0.75) -> Reply:
    body = {"verdicts": [{"id": cid, "score": score, "reasoning": "The code sets it.",
                          "evidence_refs": []} for cid in claim_ids(request)]}
    return Reply(text=json.dumps(body), input_tokens=900, output_tokens=60)


def judge(server: LoopbackModelServer, kind: str = "llm",
          recorder: UsageRecorder | None = None, **options: object):
    return make_judge(f"{kind}:openai-compatible:judge-model", server.openai_url,
                      recorder=recorder, backoff=0.0, **options)


def scored(result) -> list:
    return [c for d in result.dimensions.values() for c in d.claims]


def test_every_claim_with_evidence_is_judged_in_batches(
        model_server: LoopbackModelServer) -> None:
    model_server.responder = verdicts
    recorder = UsageRecorder()
    result = score_repo(PAPER, REPO, judge(model_server, recorder=recorder, batch_size=3),
                        recorder)
    sent = [cid for r in model_server.requests for cid in claim_ids(r)]
    assert len(sent) == len(set(sent)) > 0  # each claim sent once
    assert all(len(claim_ids(r)) <= 3 for r in model_server.requests)
    by_id = {c.id: c for c in scored(result)}
    assert all(by_id[cid].score == 0.75 for cid in sent)
    assert recorder.totals().calls == model_server.request_count()
    assert recorder.totals().input_tokens == 900 * model_server.request_count()
    assert result.usage["calls"] == model_server.request_count()


def test_a_malformed_verdict_is_asked_again_with_the_problem(
        model_server: LoopbackModelServer) -> None:
    seen: set[tuple[str, ...]] = set()

    def malformed_once(request: Request) -> Reply:
        batch = tuple(claim_ids(request))
        if batch not in seen:
            seen.add(batch)
            return Reply(text='{"verdicts": [{"id": "nope", "score": 7}]}')
        return verdicts(request, 1.0)

    model_server.responder = malformed_once
    result = score_repo(PAPER, REPO, judge(model_server, batch_size=50))
    batches = len(seen)
    assert model_server.request_count() == 2 * batches
    for batch in seen:
        asked = [r.body["messages"][-1]["content"] for r in model_server.requests
                 if tuple(claim_ids(r)) == batch]
        assert "could not be used" not in asked[0] and "could not be used" in asked[1]
    assert not any(c.is_error for c in scored(result))


def test_verdicts_that_stay_malformed_are_errors_never_zeros(
        model_server: LoopbackModelServer) -> None:
    model_server.responder = lambda request: Reply(text="I think it is fine.")
    result = score_repo(PAPER, REPO, judge(model_server, batch_size=50, max_attempts=2))
    sent = {cid for r in model_server.requests for cid in claim_ids(r)}
    errors = {c.id for c in scored(result) if c.is_error}
    assert sent and errors == sent
    assert all(c.score is None and c.error for c in scored(result) if c.id in sent)


def test_a_429_is_retried_by_the_client(model_server: LoopbackModelServer) -> None:
    model_server.enqueue(HttpError(429))
    model_server.responder = verdicts
    result = score_repo(PAPER, REPO, judge(model_server, batch_size=50, concurrency=1))
    batches = {tuple(claim_ids(r)) for r in model_server.requests if claim_ids(r)}
    assert model_server.request_count() == len(batches) + 1
    assert not any(c.is_error for c in scored(result))


def test_the_hybrid_judge_sends_only_the_claims_it_is_unsure_of(
        model_server: LoopbackModelServer) -> None:
    model_server.responder = verdicts
    offline = scored(make_judge("offline").score(PAPER, REPO))
    unsure = {c.id for c in offline if c.confidence is None or c.confidence < 0.5}
    result = score_repo(PAPER, REPO, judge(model_server, kind="hybrid", threshold=0.5))
    sent = {cid for r in model_server.requests for cid in claim_ids(r)}
    assert 0 < len(sent) < len(PAPER.claims)
    assert sent <= unsure  # unsure claims without any evidence are not worth a request
    by_id = {c.id: c for c in scored(result)}
    assert all(by_id[cid].score == 0.75 for cid in sent)
    sure = {c.id: c.score for c in offline if c.id not in unsure}
    assert all(by_id[cid].score == score for cid, score in sure.items())
