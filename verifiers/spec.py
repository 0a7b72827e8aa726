"""The specification a reproduction is checked against: a paper and its atomic claims (SAUs)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Dimension(StrEnum):
    """The four SA-Bench dimensions of an implementation claim."""

    D1 = "D1"
    D2 = "D2"
    D3 = "D3"
    D4 = "D4"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Dimension.D1: "numerical values",
    Dimension.D2: "formulas and algorithms",
    Dimension.D3: "experiment protocol",
    Dimension.D4: "ordering and pipelines",
}


class Claim(BaseModel):
    """One Semantic Alignment Unit: an atomic, checkable statement about the paper's method."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    dimension: Dimension
    text: str = Field(min_length=1)
    source: str = ""


class PaperSpec(BaseModel):
    """A paper with its claims, as the benchmark (or a scaffold's own extraction) states them."""

    model_config = ConfigDict(frozen=True)

    paper_id: str = Field(min_length=1)
    title: str = ""
    markdown: str = ""
    claims: tuple[Claim, ...] = ()

    def claims_in(self, dimension: Dimension) -> list[Claim]:
        """The claims of one dimension, in file order."""
        return [claim for claim in self.claims if claim.dimension == dimension]

    def counts(self) -> dict[Dimension, int]:
        """Number of claims per dimension (every dimension present, possibly 0)."""
        return {dim: len(self.claims_in(dim)) for dim in Dimension}
