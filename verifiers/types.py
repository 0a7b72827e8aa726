"""Verdicts and paper scores: the official SA-Bench result JSON plus sabench's own fields.

The official files (the full release files and the slimmed ones) read and write through these
models unchanged: unknown fields are kept, so nothing is lost on a round trip. A claim whose
judgement failed carries ``score=None`` and an ``error``; it is never counted as a 0.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from sabench.verifiers.files import read_json
from sabench.verifiers.spec import Dimension

SCORE_LEVELS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)


def _keep_null_score(model: BaseModel, handler: SerializerFunctionWrapHandler,
                     key: str = "score") -> Any:
    """Serialise, keeping an explicit `score: null` that `exclude_none` would drop.

    A failed claim (and a dimension whose claims all failed) must round-trip through `dump`
    and `load`: without the key the file would not load back.
    """
    data = handler(model)
    if isinstance(data, dict):
        data.setdefault(key, None)
    return data


class FailureCategory(StrEnum):
    """Why a claim lost points (taxonomy of low verdicts); `correct` for full marks."""

    CORRECT = "correct"
    PARTIAL = "partial"
    MISMATCH = "implementation_mismatch"
    STUB = "stub_or_placeholder"
    MISSING = "missing"
    DOCS_ONLY = "docs_or_tests_only"
    EXTERNAL = "external_dependency"


class EvidenceKind(StrEnum):
    CODE = "code"
    CONFIG = "config"
    DOCS = "docs"
    TEST = "test"


class Evidence(BaseModel):
    """A place in a repository that bears on a claim, and why it was retrieved."""

    model_config = ConfigDict(frozen=True)

    file: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    snippet: str = ""
    kind: EvidenceKind = EvidenceKind.CODE
    why: str = ""
    relevance: float = 0.0

    @property
    def ref(self) -> str:
        """The official `path:start-end` reference."""
        if self.start_line == self.end_line:
            return f"{self.file}:{self.start_line}"
        return f"{self.file}:{self.start_line}-{self.end_line}"


class ClaimVerdict(BaseModel):
    """The judgement of one claim: a 5-level score, or an error when judging failed."""

    model_config = ConfigDict(extra="allow")

    id: str
    score: float | None
    judge_reasoning: str = ""
    evidence_refs: list[str] = Field(default_factory=list)
    # sabench's own fields; absent from official files, so all optional.
    judge: str | None = None
    failure_category: FailureCategory | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    # The offline judge's expected score before rounding to a level: ranks claims more finely.
    expected_score: float | None = Field(default=None, ge=0.0, le=1.0)
    error: str | None = None

    @field_validator("score")
    @classmethod
    def _on_the_scale(cls, value: float | None) -> float | None:
        if value is not None and value not in SCORE_LEVELS:
            raise ValueError(f"score {value} is not one of {SCORE_LEVELS}")
        return value

    @model_validator(mode="after")
    def _error_xor_score(self) -> ClaimVerdict:
        if self.score is None and not self.error:
            raise ValueError("a claim without a score must say why in 'error'")
        return self

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _keep_null_score(self, handler)

    @property
    def is_error(self) -> bool:
        return self.score is None

    @classmethod
    def failed(cls, claim_id: str, error: str, judge: str | None = None) -> ClaimVerdict:
        """A verdict for a claim whose judgement could not be made."""
        return cls(id=claim_id, score=None, error=error, judge=judge)


class DimensionResult(BaseModel):
    """All verdicts of one dimension; `score` is the mean over the claims that were judged."""

    model_config = ConfigDict(extra="allow")

    score: float | None
    total_claims: int
    claims: list[ClaimVerdict]

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _keep_null_score(self, handler)

    @classmethod
    def of(cls, verdicts: list[ClaimVerdict]) -> DimensionResult:
        judged = [v.score for v in verdicts if v.score is not None]
        return cls(score=fmean(judged) if judged else None, total_claims=len(verdicts),
                   claims=verdicts)

    @property
    def errors(self) -> int:
        return sum(v.is_error for v in self.claims)


class PaperScore(BaseModel):
    """The score of one repository against one paper, in the official result layout."""

    model_config = ConfigDict(extra="allow")

    paper_id: str
    repo_path: str | None = None
    scored_at: str | None = None
    model: str | None = None  # full release files: the judge model's name
    judge_model: str | None = None  # slimmed release files
    dimensions: dict[Dimension, DimensionResult]
    overall_score: float | None

    @classmethod
    def of(cls, paper_id: str, verdicts: dict[Dimension, list[ClaimVerdict]],
           **fields: Any) -> PaperScore:
        """Aggregate verdicts: dimension = mean of its claims, overall = mean of dimensions."""
        dims = {dim: DimensionResult.of(v) for dim, v in verdicts.items() if v}
        scored = [d.score for d in dims.values() if d.score is not None]
        return cls(paper_id=paper_id, dimensions=dims,
                   overall_score=fmean(scored) if scored else None, **fields)

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _keep_null_score(self, handler, "overall_score")

    @property
    def judge_name(self) -> str | None:
        return self.judge_model or self.model

    def verdicts(self) -> list[tuple[Dimension, ClaimVerdict]]:
        return [(dim, v) for dim, result in self.dimensions.items() for v in result.claims]

    @property
    def errors(self) -> int:
        return sum(result.errors for result in self.dimensions.values())

    def dump(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=1, exclude_none=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> PaperScore:
        """Read a result file; raises ResultFileError with a one-line cause naming the file."""
        data = read_json(path, ResultFileError, "cannot read result JSON")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ResultFileError(f"{path}: invalid result at {where}: {first['msg']}") from exc


class ResultFileError(ValueError):
    """A result file that cannot be read or does not follow the result format."""
