"""The Judge protocol: score one repository against one paper's claims.

A judge builds what it needs (repository index, evidence) once per repository and returns one
`PaperScore` in the official layout. Judges that cannot judge a claim return an error verdict
for it (`ClaimVerdict.failed`), never a silent 0. Implementations register in `JUDGES` by kind
(`offline`, `keyword`, `llm`, `hybrid`, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from sabench.verifiers.spec import PaperSpec
from sabench.verifiers.types import PaperScore


@runtime_checkable
class Judge(Protocol):
    """Scores a repository claim by claim."""

    @property
    def name(self) -> str:
        """Recorded in each verdict's `judge` field and the score's `model` field."""
        ...

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        """Judge every claim of `spec` against the repository at `repo`."""
        ...


class RepositoryError(ValueError):
    """A repository that cannot be scored at all (missing, not a folder)."""


def check_repository(repo: Path) -> Path:
    """The resolved repository folder, or a one-line RepositoryError naming the path."""
    if not repo.exists():
        raise RepositoryError(f"{repo}: repository path does not exist")
    if not repo.is_dir():
        raise RepositoryError(f"{repo}: repository path is a file, not a folder")
    return repo.resolve()
