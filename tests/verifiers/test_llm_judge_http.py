"""The LLM and hybrid judges through `make_judge` over HTTP: the real OpenAI and Anthropic
clients against the loopback model server, whose responder reads each request's batch of claims
and answers it. Scores must land on the right claims, malformed verdicts must be asked again,
and verdicts that never come must be errors, never zeros."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sabench.agent.usage import UsageRecorder
from sabench.benchmark.dataset import load_paper
from sabench.benchmark.scoring import make_judge, score_repo
from sabench.verifiers import llm_judge_prompt
from sabench.verifiers.llm_judge import default_evidence
from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import ClaimVerdict, PaperScore
from tests.agent.model_server import HttpError, LoopbackModelServer, RawBody, Reply, Request

DEMO = Path(__file__).resolve().parents[2] / "benchmark" / "demo"
PAPER = load_paper(DEMO / "papers" / "smoothlr")
REPO = DEMO / "repos" / "faithful"
BATCH = 3
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
# provider -> (the judge's model spec, which server URL it takes)
JUDGE_MODELS = {"openai-compatible": ("openai-compatible:judge-model", "openai_url"),
                "anthropic": ("anthropic:claude-sonnet-4-6", "anthropic_url")}
CLAIM_BLOCK = re.compile(r"^## Claim (\S+)\n(.*?)(?=^## Claim |\Z)", re.MULTILINE | re.DOTALL)
SHOWN_REF = re.compile(r"^\[\d+\] (\S+:\d+(?:-\d+)?) \(", re.MULTILINE)


@pytest.fixture(autouse=True)
def _fake_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")


@pytest.fixture(params=list(JUDGE_MODELS))
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def expected_batches() -> dict[str, int]:
    """Requests per dimension for the claims retrieval finds evidence for (batches of BATCH)."""
    provide = default_evidence()(REPO)
    sent = [c for c in PAPER.claims if provide(c)]
    assert len(sent) > 2 * BATCH  # the demo must need several batches
    dims = {c.dimension.value for c in sent}
    return {d: math.ceil(sum(c.dimension.value == d for c in sent) / BATCH) for d in dims}


def judge(server: LoopbackModelServer, provider: str = "openai-compatible", kind: str = "llm",
          recorder: UsageRecorder | None = None, **options: Any) -> Any:
    spec, url = JUDGE_MODELS[provider]
    options = {"batch_size": BATCH, "backoff": 0.0, **options}
    return make_judge(f"{kind}:{spec}", getattr(server, url), recorder=recorder, **options)


# --- reading requests, writing verdicts ---------------------------------------------------------

def prompt_of(request: Request) -> str:
    """The user message of a judge request, whichever API carried it."""
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def system_of(request: Request) -> str:
    if request.api == "anthropic":
        system = request.body["system"]
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    return request.body["messages"][0]["content"]


def shown(request: Request) -> dict[str, list[str]]:
    """Claim ids of the batch, in order, with the evidence references shown for each."""
    return {m.group(1): SHOWN_REF.findall(m.group(2))
            for m in CLAIM_BLOCK.finditer(prompt_of(request))}


def level_for(claim_id: str) -> float:
    """A different level for neighbouring claims, so a verdict on the wrong claim shows."""
    return LEVELS[int(claim_id.rsplit("-", 1)[1]) % len(LEVELS)]


def verdict(claim_id: str, refs: list[str], **changes: Any) -> dict[str, Any]:
    return {"id": claim_id, "score": level_for(claim_id),
            "reasoning": f"{claim_id} is realised as shown.",
            "evidence_refs": refs[:1] + ["not_shown.py:1-2"], **changes}


def answer(request: Request, skip: frozenset[str] = frozenset()) -> Reply:
    """A correct reply to the batch: every claim (except `skip`) at its level."""
    verdicts = [verdict(cid, refs) for cid, refs in shown(request).items() if cid not in skip]
    return Reply(text=json.dumps({"verdicts": verdicts}), input_tokens=900, output_tokens=60)


def claims_of(result: PaperScore) -> dict[str, ClaimVerdict]:
    return {v.id: v for _, v in result.verdicts()}


def sent_ids(server: LoopbackModelServer) -> list[str]:
    return [cid for r in server.requests for cid in shown(r)]


# --- correct verdicts ----------------------------------------------------------------------------

def test_every_claim_gets_its_own_verdict_in_one_request_per_batch(
        model_server: LoopbackModelServer, provider: str,
        expected_batches: dict[str, int]) -> None:
    model_server.responder = answer
    recorder = UsageRecorder()
    result = score_repo(PAPER, REPO, judge(model_server, provider, recorder=recorder), recorder)
    requests = model_server.requests
    assert len(requests) == sum(expected_batches.values())
    per_dim = [{cid.split("-")[1] for cid in shown(r)} for r in requests]
    assert all(len(dims) == 1 for dims in per_dim)  # a batch holds one dimension
    assert {d: sum(dims == {d} for dims in per_dim) for d in expected_batches} == expected_batches
    assert all(0 < len(shown(r)) <= BATCH for r in requests)
    assert sorted(sent_ids(model_server)) == sorted(set(sent_ids(model_server)))  # once each
    assert all(system_of(r).strip() == llm_judge_prompt.SYSTEM.strip() for r in requests)
    assert all(r.body["temperature"] == 0.0 and r.api == provider.split("-")[0]
               for r in requests)
    verdicts = claims_of(result)
    refs_shown = {cid: refs for r in requests for cid, refs in shown(r).items()}
    for cid in sent_ids(model_server):
        assert verdicts[cid].score == level_for(cid), cid
        assert verdicts[cid].evidence_refs == refs_shown[cid][:1]  # unshown refs dropped
        assert verdicts[cid].judge == f"llm:{JUDGE_MODELS[provider][0]}"
    assert result.errors == 0 and result.overall_score is not None


def test_usage_of_every_request_is_recorded_and_priced(
        model_server: LoopbackModelServer, provider: str) -> None:
    model_server.responder = answer
    recorder = UsageRecorder()
    result = score_repo(PAPER, REPO, judge(model_server, provider, recorder=recorder), recorder)
    calls = model_server.request_count()
    usage = result.usage
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (
        calls, 900 * calls, 60 * calls)
    if provider == "anthropic":  # claude-sonnet-4: $3 in, $15 out per million tokens
        assert usage["dollars"] == pytest.approx(calls * (900 * 3 + 60 * 15) / 1e6)
        assert usage["unpriced_calls"] == 0
    else:  # a self-hosted model has no list price: counted apart, never as $0 spent
        assert (usage["dollars"], usage["unpriced_calls"]) == (0.0, calls)


# --- malformed, then good --------------------------------------------------------------------

def bad_json(request: Request) -> Reply:
    return Reply(text='{"verdicts": [{"id": "' + next(iter(shown(request))))


def out_of_range(request: Request) -> Reply:
    first, *rest = shown(request).items()
    verdicts = [verdict(first[0], first[1], score=0.6)] + [verdict(c, r) for c, r in rest]
    return Reply(text=json.dumps({"verdicts": verdicts}))


def missing_first(request: Request) -> Reply:
    return answer(request, skip=frozenset(list(shown(request))[:1]))


def wrong_shape(request: Request) -> Reply:
    return Reply(text=json.dumps({"scores": {cid: 1 for cid in shown(request)}}))


MALFORMED: dict[str, tuple[Callable[[Request], Reply], str]] = {
    "bad-json": (bad_json, "reply is not valid JSON"),
    "score-out-of-range": (out_of_range, "is not one of"),
    "missing-claim-id": (missing_first, "no verdict for claim ids"),
    "wrong-shape": (wrong_shape, "does not follow the format at verdicts"),
}


def malformed_once(bad: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    """Answers a batch badly the first time any of its claims is asked, well afterwards."""
    asked: set[str] = set()
    lock = threading.Lock()  # the judge sends batches from several threads

    def respond(request: Request) -> Reply:
        ids = set(shown(request))
        with lock:
            first_time = not ids & asked
            asked.update(ids)
        return bad(request) if first_time else answer(request)

    return respond


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_verdict_is_asked_again_and_then_lands(
        model_server: LoopbackModelServer, kind: str, expected_batches: dict[str, int]) -> None:
    bad, problem = MALFORMED[kind]
    model_server.responder = malformed_once(bad)
    recorder = UsageRecorder()
    result = score_repo(PAPER, REPO, judge(model_server, recorder=recorder), recorder)
    batches = sum(expected_batches.values())
    assert model_server.request_count() == 2 * batches
    firsts, retries = [], []
    for request in model_server.requests:
        (retries if "could not be used" in prompt_of(request) else firsts).append(request)
    assert len(firsts) == len(retries) == batches
    assert all(problem in prompt_of(r) for r in retries)
    if kind == "missing-claim-id":  # only the unanswered claim is asked again
        assert sorted(cid for r in retries for cid in shown(r)) == sorted(
            list(shown(r))[0] for r in firsts)
    verdicts = claims_of(result)
    assert result.errors == 0
    assert all(verdicts[cid].score == level_for(cid) for r in firsts for cid in shown(r))
    assert recorder.totals().calls == 2 * batches  # the failed answer was paid for too


# --- never usable: errors, not zeros -------------------------------------------------------------

NEVER_USABLE: dict[str, tuple[Callable[[Request], Any], str, int]] = {
    # name -> (answer to every request, what the error says, requests per judge attempt)
    "prose": (lambda r: Reply(text="The code looks faithful to me."), "not valid JSON", 1),
    "score-out-of-range": (out_of_range, "is not one of", 1),
    "malformed-http-body": (lambda r: RawBody('{"unexpected": true}'), "model call failed", 1),
    "server-error": (lambda r: HttpError(500), "model call failed", 3),  # + 2 SDK retries
    "rate-limited": (lambda r: HttpError(429), "model call failed", 3),
}


@pytest.mark.parametrize("kind", list(NEVER_USABLE))
def test_verdicts_that_never_come_are_errors_never_zeros(
        model_server: LoopbackModelServer, kind: str, expected_batches: dict[str, int],
        tmp_path: Path) -> None:
    respond, problem, per_attempt = NEVER_USABLE[kind]
    model_server.responder = respond
    result = score_repo(PAPER, REPO, judge(model_server, max_attempts=2))
    batches = sum(expected_batches.values())
    assert model_server.request_count() == batches * 2 * per_attempt
    sent = set(sent_ids(model_server))
    verdicts = claims_of(result)
    assert sent and all(verdicts[cid].is_error for cid in sent)
    assert all(verdicts[cid].score is None and problem in verdicts[cid].error for cid in sent)
    assert all("after 2 attempts" in verdicts[cid].error for cid in sent)
    assert result.errors == len(sent) and result.overall_score is None
    result.dump(tmp_path / "score.json")
    written = json.loads((tmp_path / "score.json").read_text())
    assert all(c["score"] is None for d in written["dimensions"].values() for c in d["claims"]
               if c["id"] in sent)


def test_one_claim_never_answered_is_the_only_error(model_server: LoopbackModelServer) -> None:
    never = "smoothlr-D2-003"
    model_server.responder = lambda request: answer(request, skip=frozenset({never}))
    result = score_repo(PAPER, REPO, judge(model_server, max_attempts=3))
    asked_alone = [r for r in model_server.requests if list(shown(r)) == [never]]
    assert len(asked_alone) == 2  # attempts 2 and 3 ask for it alone
    verdicts = claims_of(result)
    assert verdicts[never].is_error and f"no verdict for claim ids {never}" in verdicts[
        never].error
    assert [cid for cid, v in verdicts.items() if v.is_error] == [never]
    assert result.dimensions[Dimension.D2].score is not None  # the mean of the others


# --- transport errors ------------------------------------------------------------------

def test_a_429_then_success_is_retried_by_the_client(
        model_server: LoopbackModelServer, provider: str,
        expected_batches: dict[str, int]) -> None:
    model_server.enqueue(HttpError(429))
    model_server.responder = answer
    recorder = UsageRecorder()
    result = score_repo(PAPER, REPO, judge(model_server, provider, recorder=recorder,
                                           concurrency=1), recorder)
    batches = sum(expected_batches.values())
    assert model_server.request_count() == batches + 1
    first, second = model_server.requests[:2]
    assert shown(first) == shown(second)  # the same batch, sent again by the SDK
    assert result.errors == 0 and recorder.totals().calls == batches


def test_rate_limits_past_the_sdk_retries_are_retried_by_the_judge(
        model_server: LoopbackModelServer, expected_batches: dict[str, int]) -> None:
    model_server.enqueue(*[HttpError(429)] * 3)  # the SDK's first try and its 2 retries
    model_server.responder = answer
    result = score_repo(PAPER, REPO, judge(model_server, concurrency=1))
    batches = sum(expected_batches.values())
    assert model_server.request_count() == 3 + batches
    assert len({tuple(shown(r)) for r in model_server.requests[:4]}) == 1
    assert result.errors == 0


# --- hybrid ---------------------------------------------------------------------------------------

def offline_verdicts() -> dict[str, ClaimVerdict]:
    return claims_of(make_judge("offline").score(PAPER, REPO))


def test_the_hybrid_judge_asks_only_about_unsure_claims(
        model_server: LoopbackModelServer, provider: str) -> None:
    model_server.responder = answer
    offline = offline_verdicts()
    result = score_repo(PAPER, REPO, judge(model_server, provider, kind="hybrid",
                                           threshold=0.5))
    sent = set(sent_ids(model_server))
    unsure = {cid for cid, v in offline.items() if v.confidence is None or v.confidence < 0.5}
    assert sent and sent <= unsure
    verdicts = claims_of(result)
    assert all(verdicts[cid].score == level_for(cid) for cid in sent)
    assert all(verdicts[cid].score == v.score for cid, v in offline.items() if cid not in unsure)
    assert result.model == f"hybrid:{JUDGE_MODELS[provider][0]}"


@pytest.mark.parametrize("fallback", [False, True])
def test_the_hybrid_judge_never_turns_llm_failures_into_zeros(
        model_server: LoopbackModelServer, fallback: bool) -> None:
    model_server.responder = lambda request: Reply(text="no JSON here")
    offline = offline_verdicts()
    result = score_repo(PAPER, REPO, judge(model_server, kind="hybrid", threshold=0.5,
                                           max_attempts=2, fallback_to_offline=fallback))
    sent = set(sent_ids(model_server))
    verdicts = claims_of(result)
    assert sent
    for cid in sent:
        if fallback:  # the offline verdict stays, and says the LLM failed
            assert verdicts[cid].score == offline[cid].score
            assert "not valid JSON" in verdicts[cid].model_extra["llm_error"]
        else:
            assert verdicts[cid].is_error and "not valid JSON" in verdicts[cid].error
    assert result.errors == (0 if fallback else len(sent))
