"""The LLM judge (`--judge llm:<model>`) and the hybrid judge (`--judge hybrid:<model>`).

Protocol: evidence is retrieved per claim; claims of one dimension are sent in batches; the model
answers a JSON object with a five-level score, a reason and file:line references per claim; the
reply is validated strictly. Transport errors and unusable replies are retried with exponential
backoff, and only the claims still unanswered are asked again. A claim that has no usable answer
after the last attempt becomes an error verdict (`ClaimVerdict.failed`), never a 0. A claim for
which retrieval found nothing is scored 0 without a model call, as the official pipeline does.

The chat model arrives already built (construction and price accounting live in `agent/`);
pass usage recorders as `callbacks`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sabench.verifiers import llm_judge_prompt as prompt
from sabench.verifiers.judge import Judge, check_repository
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import (
    SCORE_LEVELS,
    ClaimVerdict,
    Evidence,
    EvidenceKind,
    PaperScore,
)

EvidenceProvider = Callable[[Claim], list[Evidence]]
"""Evidence for one claim in one repository."""

EvidenceFactory = Callable[[Path], EvidenceProvider]
"""Builds the evidence provider of a repository (indexing it once)."""

NO_EVIDENCE_REASON = ("No evidence retrieved from the repository for this claim; "
                      "not sent to the model.")
_REF = re.compile(r"^[^\s:][^:]*:\d+(-\d+)?$")


def default_evidence(k: int = 8) -> EvidenceFactory:
    """Evidence from the repository index and the dimension-aware retrieval of `verifiers/`."""

    def build(root: Path) -> EvidenceProvider:
        from sabench.verifiers.evidence import retrieve
        from sabench.verifiers.index import RepoIndex

        index = RepoIndex.build(root)
        return lambda claim: list(retrieve(index, claim, k))

    return build


def official_evidence() -> EvidenceFactory:
    """Evidence as the official SA-Bench judge collects it (`official_search`): only the two
    code/config windows its LLM is shown, and none for a claim its gates score 0 without the
    LLM (such a claim is not sent). Use it to reproduce the official protocol."""

    def build(root: Path) -> EvidenceProvider:
        from sabench.verifiers.index import RepoIndex
        from sabench.verifiers.official_search import OfficialSearch

        search = OfficialSearch(RepoIndex.build(root))

        def provide(claim: Claim) -> list[Evidence]:
            result = search.collect(claim)
            if result.gate is not None:
                return []
            return [Evidence(file=item.file, start_line=item.start,
                             end_line=max(item.start, item.start + item.snippet.count("\n")),
                             snippet=item.snippet, kind=EvidenceKind(item.kind),
                             why=f"official search ({item.relevance})")
                    for item in result.shown]

        return provide

    return build


EVIDENCE_KINDS: dict[str, Callable[[], EvidenceFactory]] = {
    "ranked": default_evidence, "official": official_evidence}
"""`--evidence` choices: our dimension-aware retrieval, or the official judge's search."""


class ReplyVerdict(BaseModel):
    """One verdict as the model must write it."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    score: float
    reasoning: str = Field(min_length=1)
    evidence_refs: list[str] = Field(default_factory=list)

    @field_validator("score")
    @classmethod
    def _on_the_scale(cls, value: float) -> float:
        if value not in SCORE_LEVELS:
            raise ValueError(f"score {value} is not one of {list(SCORE_LEVELS)}")
        return value

    @field_validator("evidence_refs")
    @classmethod
    def _refs_are_locations(cls, refs: list[str]) -> list[str]:
        bad = [ref for ref in refs if not _REF.match(ref.strip())]
        if bad:
            raise ValueError(f"evidence_refs must look like 'path:start-end', got {bad[0]!r}")
        return [ref.strip() for ref in refs]


class Reply(BaseModel):
    """The whole reply: one verdict per claim of the batch."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[ReplyVerdict]


class ReplyError(ValueError):
    """A reply that cannot be used; the message says what to fix (sent back to the model)."""


def parse_reply(text: str, expected: Sequence[str]) -> tuple[dict[str, ReplyVerdict], str | None]:
    """Validate a reply against the claim ids of its batch.

    Returns:
        The verdicts of the expected ids that were answered validly, and a one-line problem
        when some expected ids are missing (None when all were answered).

    Raises:
        ReplyError: the reply is not the JSON object of the reply format.
    """
    try:
        data = json.loads(_json_block(text))
        reply = Reply.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"reply is not valid JSON ({exc.msg} at char {exc.pos})") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ReplyError(f"reply does not follow the format at {where}: {first['msg']}") from exc
    wanted = set(expected)
    found: dict[str, ReplyVerdict] = {}
    for verdict in reply.verdicts:
        if verdict.id in wanted and verdict.id not in found:
            found[verdict.id] = verdict
    missing = [cid for cid in expected if cid not in found]
    problem = f"no verdict for claim ids {', '.join(missing)}" if missing else None
    return found, problem


def _json_block(text: str) -> str:
    """The JSON object in a reply, tolerating a Markdown code fence around it."""
    stripped = text.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", stripped, re.DOTALL)
    if fence:
        return fence.group(1)
    start, end = stripped.find("{"), stripped.rfind("}")
    return stripped[start:end + 1] if 0 <= start < end else stripped


def reply_text(message: BaseMessage) -> str:
    """The text of a reply, whether content is a string or a list of content blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") if isinstance(block, dict) else str(block) for block in content]
    return "".join(parts)


def render_evidence(item: Evidence, max_chars: int) -> str:
    """One evidence window with its line numbers, as the model sees it."""
    lines = item.snippet.splitlines() or [""]
    if len(lines) == item.end_line - item.start_line + 1:
        lines = [f"{item.start_line + i:>5} | {line}" for i, line in enumerate(lines)]
    body = "\n".join(lines)
    if len(body) > max_chars:
        body = body[:max_chars] + "\n  [...]"
    return f"{item.ref} ({item.kind.value})\n{body}"


_OUTPUT_TOKENS_PER_CLAIM = 120  # a verdict: id, score, 2-4 sentences, a few refs


@dataclass(frozen=True)
class JudgePlan:
    """Requests and estimated tokens of judging a set of claims (no model call made)."""

    requests: int
    claims_sent: int
    claims_without_evidence: int
    input_tokens: int
    output_tokens: int


@dataclass
class _Attempts:
    """What happened to one batch: answers so far and the last problem per claim."""

    verdicts: dict[str, ReplyVerdict] = field(default_factory=dict)
    problem: str = ""
    feedback: str = ""  # what was wrong with the last reply, told to the model on retry
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class LLMJudge:
    """Judges claims with a chat model on retrieved evidence.

    Args:
        model: a constructed langchain chat model (see `sabench.agent.models.make_model`).
        name: recorded in verdicts and scores; defaults to `llm:<model name>`.
        evidence: builds a repository's evidence provider; defaults to index + retrieval.
        batch_size: claims per request (claims of one dimension share a request).
        evidence_per_claim: evidence windows shown per claim.
        max_attempts: requests per batch before its unanswered claims become errors.
        backoff: first retry delay in seconds; doubles per attempt up to `max_backoff`.
        concurrency: batches in flight at once (threads; model calls are I/O bound).
        callbacks: langchain callback handlers passed to every call (usage recorders).
        sleep: the delay function (tests pass a recorder instead of sleeping).
    """

    def __init__(self, model: BaseChatModel, *, name: str | None = None,
                 evidence: EvidenceFactory | None = None, batch_size: int = 8,
                 evidence_per_claim: int = 8, max_attempts: int = 3, backoff: float = 2.0,
                 max_backoff: float = 60.0, concurrency: int = 4,
                 snippet_chars: int = 1500, paper_context_chars: int = 600,
                 callbacks: Sequence[BaseCallbackHandler] = (),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if batch_size < 1 or max_attempts < 1 or concurrency < 1:
            raise ValueError("batch_size, max_attempts and concurrency must be at least 1")
        self.model = model
        self._name = name or f"llm:{_model_name(model)}"
        self.evidence = evidence or default_evidence(evidence_per_claim)
        self.batch_size = batch_size
        self.evidence_per_claim = evidence_per_claim
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = concurrency
        self.snippet_chars = snippet_chars
        self.paper_context_chars = paper_context_chars
        self.callbacks = list(callbacks)
        self.sleep = sleep
        self._lock = threading.Lock()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0

    @property
    def name(self) -> str:
        return self._name

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        """Judge every claim of `spec` against `repo`."""
        root = check_repository(repo)
        verdicts = self.judge_claims(spec, spec.claims, self.evidence(root))
        return assemble(spec, verdicts, repo=repo, model=self.name)

    def judge_claims(self, spec: PaperSpec, claims: Iterable[Claim],
                     provider: EvidenceProvider) -> dict[str, ClaimVerdict]:
        """Verdicts for `claims` (by claim id), retrieving evidence through `provider`."""
        claims = list(claims)
        evidence = {claim.id: provider(claim)[: self.evidence_per_claim] for claim in claims}
        verdicts = {c.id: self._no_evidence(c) for c in claims if not evidence[c.id]}
        batches = self._batches([c for c in claims if evidence[c.id]])
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            for result in pool.map(lambda b: self._judge_batch(spec, b, evidence), batches):
                verdicts.update(result)
        return verdicts

    def plan(self, spec: PaperSpec, claims: Iterable[Claim],
             provider: EvidenceProvider) -> JudgePlan:
        """What judging `claims` would send, without calling the model (for cost estimates).

        Token counts are estimated at four characters per token; retries are not included.
        """
        claims = list(claims)
        evidence = {claim.id: provider(claim)[: self.evidence_per_claim] for claim in claims}
        batches = self._batches([c for c in claims if evidence[c.id]])
        chars = sum(len(str(m.content)) for batch in batches
                    for m in self.messages(spec, batch, evidence))
        return JudgePlan(requests=len(batches), claims_sent=sum(map(len, batches)),
                         claims_without_evidence=len(claims) - sum(map(len, batches)),
                         input_tokens=chars // 4,
                         output_tokens=sum(map(len, batches)) * _OUTPUT_TOKENS_PER_CLAIM)

    def _batches(self, claims: list[Claim]) -> list[list[Claim]]:
        by_dim: dict[Dimension, list[Claim]] = {}
        for claim in claims:
            by_dim.setdefault(claim.dimension, []).append(claim)
        return [group[i:i + self.batch_size] for group in by_dim.values()
                for i in range(0, len(group), self.batch_size)]

    def _no_evidence(self, claim: Claim) -> ClaimVerdict:
        return ClaimVerdict(id=claim.id, score=0.0, judge_reasoning=NO_EVIDENCE_REASON,
                            judge=self.name, confidence=1.0)

    def _judge_batch(self, spec: PaperSpec, batch: list[Claim],
                     evidence: dict[str, list[Evidence]]) -> dict[str, ClaimVerdict]:
        state = _Attempts()
        for attempt in range(self.max_attempts):
            pending = [c for c in batch if c.id not in state.verdicts]
            if not pending:
                break
            if attempt:
                self.sleep(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
            self._attempt(spec, pending, evidence, state)
        self._count(state)
        return {c.id: self._verdict(c, state, evidence[c.id]) for c in batch}

    def _attempt(self, spec: PaperSpec, pending: list[Claim],
                 evidence: dict[str, list[Evidence]], state: _Attempts) -> None:
        messages = self.messages(spec, pending, evidence, retry_problem=state.feedback)
        state.calls += 1
        try:
            reply = self.model.invoke(messages, config={"callbacks": self.callbacks})
        except Exception as exc:  # transport errors of any SDK: retried, then surfaced
            state.problem = f"model call failed: {type(exc).__name__}: {_one_line(exc)}"
            return  # the model never answered: keep the last feedback, if any
        meta = getattr(reply, "usage_metadata", None) or {}
        state.input_tokens += int(meta.get("input_tokens") or 0)
        state.output_tokens += int(meta.get("output_tokens") or 0)
        try:
            found, problem = parse_reply(reply_text(reply), [c.id for c in pending])
        except ReplyError as exc:
            state.problem = state.feedback = str(exc)
            return
        state.verdicts.update(found)
        state.problem = state.feedback = problem or ""

    def _count(self, state: _Attempts) -> None:
        with self._lock:  # batches finish on several threads
            self.calls += state.calls
        self.input_tokens += state.input_tokens
        self.output_tokens += state.output_tokens

    def _verdict(self, claim: Claim, state: _Attempts,
                 evidence: list[Evidence]) -> ClaimVerdict:
        answer = state.verdicts.get(claim.id)
        if answer is None:
            error = f"no usable verdict after {self.max_attempts} attempts: {state.problem}"
            return ClaimVerdict.failed(claim.id, error, judge=self.name)
        shown = {item.file for item in evidence}
        refs = [ref for ref in answer.evidence_refs if ref.rsplit(":", 1)[0] in shown]
        return ClaimVerdict(id=claim.id, score=answer.score, judge_reasoning=answer.reasoning,
                            evidence_refs=refs, judge=self.name)

    def messages(self, spec: PaperSpec, claims: list[Claim],
                 evidence: dict[str, list[Evidence]], retry_problem: str = "") -> list[BaseMessage]:
        """The request for one batch (public so that prompts can be inspected and tested)."""
        dimension = claims[0].dimension
        parts = [f"Paper: {spec.title or spec.paper_id}",
                 prompt.DIMENSION_GUIDE[dimension], ""]
        parts += [self._claim_block(claim, evidence[claim.id]) for claim in claims]
        parts.append(prompt.REPLY_FORMAT)
        if retry_problem:
            parts.append(prompt.RETRY_NOTE.format(problem=retry_problem))
        return [SystemMessage(content=prompt.SYSTEM), HumanMessage(content="\n".join(parts))]

    def _claim_block(self, claim: Claim, evidence: list[Evidence]) -> str:
        lines = [f"## Claim {claim.id}", claim.text.strip()]
        if claim.source.strip():
            lines.append(f"Paper context: {claim.source.strip()[: self.paper_context_chars]}")
        lines.append("Evidence:")
        lines += [f"[{i}] {render_evidence(item, self.snippet_chars)}"
                  for i, item in enumerate(evidence, 1)]
        return "\n".join(lines) + "\n"


def assemble(spec: PaperSpec, verdicts: dict[str, ClaimVerdict], *, repo: Path,
             model: str, **fields: Any) -> PaperScore:
    """A PaperScore in claim-file order from verdicts keyed by claim id."""
    by_dim: dict[Dimension, list[ClaimVerdict]] = {}
    for claim in spec.claims:
        by_dim.setdefault(claim.dimension, []).append(verdicts[claim.id])
    return PaperScore.of(spec.paper_id, by_dim, repo_path=str(repo), model=model,
                         scored_at=datetime.now(UTC).isoformat(timespec="seconds"), **fields)


class HybridJudge:
    """The offline judge where it is confident, the LLM judge for the rest.

    A claim goes to the LLM when the offline verdict's `confidence` is below `threshold` (or
    missing, or the offline verdict is an error). The default, 0.5, sends about a fifth of the
    claims on the development runs: offline verdicts below it matched the official judge's
    level 34% of the time, those above it 65%. With `fallback_to_offline`, a claim the LLM
    fails on keeps its offline verdict (noted in an `llm_error` field); otherwise it becomes an
    error verdict like in the LLM judge.
    """

    def __init__(self, offline: Judge, llm: LLMJudge, *, threshold: float = 0.5,
                 fallback_to_offline: bool = False, name: str | None = None) -> None:
        self.offline = offline
        self.llm = llm
        self.threshold = threshold
        self.fallback_to_offline = fallback_to_offline
        self._name = name or f"hybrid:{llm.name.removeprefix('llm:')}"

    @property
    def name(self) -> str:
        return self._name

    def unsure(self, verdict: ClaimVerdict) -> bool:
        """True when the offline verdict should be checked by the LLM."""
        return verdict.is_error or verdict.confidence is None or verdict.confidence < self.threshold

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        """Offline verdicts, with the unsure ones replaced by LLM verdicts."""
        root = check_repository(repo)
        base = {v.id: v for _, v in self.offline.score(spec, repo).verdicts()}
        unsure = [claim for claim in spec.claims if self.unsure(base[claim.id])]
        # The LLM's own evidence: the offline judge cites the official search's windows, which
        # need not be what this LLM judge is configured to read.
        judged = (self.llm.judge_claims(spec, unsure, self.llm.evidence(root)) if unsure
                  else {})
        verdicts = {cid: self._merge(base[cid], judged.get(cid)) for cid in base}
        return assemble(spec, verdicts, repo=repo, model=self.name,
                        llm_claims=len(unsure), offline_claims=len(base) - len(unsure))

    def _merge(self, offline: ClaimVerdict, llm: ClaimVerdict | None) -> ClaimVerdict:
        if llm is None:
            return offline
        if llm.is_error and self.fallback_to_offline and not offline.is_error:
            return ClaimVerdict.model_validate({**offline.model_dump(), "llm_error": llm.error})
        return llm


def _model_name(model: BaseChatModel) -> str:
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]
