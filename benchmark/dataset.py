"""SA-Bench dataset: load and validate `<papers>/<paper_id>/{paper.md, sau.json, config.yaml}`.

`sau.json` is accepted in the shapes the official release reads:

* a dimension-keyed object: ``{"paper_id", "paper_title", "D1": [claim, ...], ..., "D4": [...]}``
* a ``requirements`` object keyed by dimension: ``{"requirements": {"D1": [...], ...}}``
* a ``requirements`` list, or a bare list, of claims that name their own ``dimension`` (or ``type``)

A claim is ``{"id", "claim" (or "text"), "source"?}``. Every problem is a `DatasetError` whose
one-line message names the file and the entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sabench.verifiers import files
from sabench.verifiers.spec import Claim, Dimension, PaperSpec

CLAIMS_FILE = "sau.json"
PAPER_FILE = "paper.md"
CONFIG_FILE = "config.yaml"

# Names the release and its tools use for the four dimensions, besides D1..D4.
_DIMENSION_ALIASES = {
    "numerical": Dimension.D1, "numeric": Dimension.D1, "hyperparameters": Dimension.D1,
    "formula": Dimension.D2, "formulas": Dimension.D2, "algorithm": Dimension.D2,
    "algorithmic": Dimension.D2, "protocol": Dimension.D3, "experiment": Dimension.D3,
    "experimental": Dimension.D3, "ordering": Dimension.D4, "pipeline": Dimension.D4,
    "order": Dimension.D4,
}


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message names the file and the entry."""


def parse_dimension(value: Any, where: str) -> Dimension:
    """`D1`..`D4` (any case) or a known alias such as `numerical`; else a DatasetError."""
    text = str(value).strip()
    if text.upper() in Dimension.__members__:
        return Dimension(text.upper())
    alias = _DIMENSION_ALIASES.get(text.lower())
    if alias is None:
        raise DatasetError(f"{where}: unknown dimension {value!r} (expected D1, D2, D3 or D4)")
    return alias


#: The largest claim file read (the release's largest is 47 KB): a bigger one is refused
#: before it is read, rather than scored for hours.
MAX_JSON_BYTES = 16 << 20


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """Parse a JSON file, turning every way it can be unreadable into a one-line DatasetError."""
    return files.read_json(path, DatasetError, "", max_bytes)


def _raw_claims(data: Any, path: Path) -> Iterator[tuple[Dimension | None, Any, str]]:
    """Yield (dimension given by the container or None, raw entry, entry label) for any shape."""
    container = data.get("requirements", data) if isinstance(data, dict) else data
    if isinstance(container, list):
        for index, entry in enumerate(container):
            yield None, entry, f"entry {index}"
        return
    if not isinstance(container, dict):
        raise DatasetError(f"{path}: expected a JSON object or list of claims")
    keyed = [key for key in container if str(key).upper() in Dimension.__members__]
    if not keyed:
        raise DatasetError(f"{path}: no claims found (no D1..D4 keys, no 'requirements')")
    for key in keyed:
        entries = container[key]
        if not isinstance(entries, list):
            raise DatasetError(f"{path}: {key} must be a list of claims")
        for index, entry in enumerate(entries):
            yield Dimension(str(key).upper()), entry, f"{key}[{index}]"


def _claim(dimension: Dimension | None, entry: Any, where: str) -> Claim:
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: a claim must be an object, got {type(entry).__name__}")
    claim_id = str(entry.get("id") or "").strip()
    if not claim_id:
        raise DatasetError(f"{where}: claim has no id")
    where = f"{where} ({claim_id})"
    text = str(entry.get("claim") or entry.get("text") or "").strip()
    if not text:
        raise DatasetError(f"{where}: claim has no text ('claim' or 'text')")
    declared = entry.get("dimension", entry.get("type"))
    if declared is not None:
        declared_dim = parse_dimension(declared, where)
        if dimension is not None and declared_dim != dimension:
            raise DatasetError(f"{where}: listed under {dimension} but says {declared_dim}")
        dimension = declared_dim
    if dimension is None:
        raise DatasetError(f"{where}: claim has no dimension ('dimension' or 'type')")
    return Claim(id=claim_id, dimension=dimension, text=text, source=str(entry.get("source", "")))


def parse_claims(data: Any, path: Path, paper_id: str) -> tuple[Claim, ...]:
    """Validate a parsed claim file of paper `paper_id`; ids must be unique and the paper's."""
    declared = data.get("paper_id") if isinstance(data, dict) else None
    if declared is not None and str(declared) != paper_id:
        raise DatasetError(f"{path}: paper_id {declared!r} does not match folder {paper_id!r}")
    claims: list[Claim] = []
    seen: set[str] = set()
    for dimension, entry, label in _raw_claims(data, path):
        claim = _claim(dimension, entry, f"{path}: {label}")
        if claim.id in seen:
            raise DatasetError(f"{path}: {label}: duplicate claim id {claim.id!r}")
        if not claim.id.startswith(f"{paper_id}-"):
            raise DatasetError(f"{path}: {label}: claim id {claim.id!r} does not belong to "
                               f"paper {paper_id!r} (expected '{paper_id}-...')")
        seen.add(claim.id)
        claims.append(claim)
    if not claims:
        raise DatasetError(f"{path}: the claim file holds no claims")
    return tuple(claims)


def _read_title(paper_dir: Path, data: Any) -> str:
    config = paper_dir / CONFIG_FILE
    if config.is_file():
        try:
            meta = yaml.safe_load(config.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatasetError(f"{config}: invalid YAML: {first_line}") from exc
        if isinstance(meta, dict) and meta.get("title"):
            return str(meta["title"])
    if isinstance(data, dict) and data.get("paper_title"):
        return str(data["paper_title"])
    return paper_dir.name


def _read_markdown(path: Path) -> str:
    if not path.is_file():
        raise DatasetError(f"{path}: missing (every paper needs its paper.md)")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not valid UTF-8 (byte {exc.start})") from exc


def load_paper(paper_dir: Path, *, with_markdown: bool = True) -> PaperSpec:
    """Load one paper folder; the folder name is the paper id.

    Args:
        paper_dir: `<papers>/<paper_id>/` holding paper.md, sau.json and (optionally) config.yaml.
        with_markdown: read paper.md too (scoring needs only the claims).

    Raises:
        DatasetError: with a one-line message naming the file and the entry.
    """
    paper_dir = Path(paper_dir)
    if not paper_dir.is_dir():
        raise DatasetError(f"{paper_dir}: paper folder does not exist")
    claims_path = paper_dir / CLAIMS_FILE
    if not claims_path.is_file():
        raise DatasetError(f"{claims_path}: missing (every paper needs its claim file)")
    data = read_json(claims_path)
    claims = parse_claims(data, claims_path, paper_dir.name)
    markdown = _read_markdown(paper_dir / PAPER_FILE) if with_markdown else ""
    return PaperSpec(paper_id=paper_dir.name, title=_read_title(paper_dir, data),
                     markdown=markdown, claims=claims)


def paper_dirs(papers_dir: Path) -> list[Path]:
    """The paper folders of a dataset, sorted by id (hidden folders ignored)."""
    papers_dir = Path(papers_dir)
    if not papers_dir.is_dir():
        raise DatasetError(f"{papers_dir}: dataset folder does not exist")
    found = sorted(p for p in papers_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not found:
        raise DatasetError(f"{papers_dir}: no paper folders found")
    return found


def load_papers(papers_dir: Path, *, with_markdown: bool = True) -> dict[str, PaperSpec]:
    """Load every paper of a dataset, keyed by id; the first bad file raises DatasetError."""
    specs = (load_paper(d, with_markdown=with_markdown) for d in paper_dirs(papers_dir))
    return {spec.paper_id: spec for spec in specs}


@dataclass
class DatasetReport:
    """What `sabench data check` found: the papers that loaded and one line per problem."""

    papers: dict[str, PaperSpec] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def counts(self) -> dict[Dimension, int]:
        """Claims per dimension over all papers that loaded."""
        totals = dict.fromkeys(Dimension, 0)
        for spec in self.papers.values():
            for dim, count in spec.counts().items():
                totals[dim] += count
        return totals

    @property
    def total_claims(self) -> int:
        return sum(self.counts().values())


def check_dataset(papers_dir: Path) -> DatasetReport:
    """Validate every paper folder, collecting all problems instead of stopping at the first."""
    report = DatasetReport()
    for paper_dir in paper_dirs(papers_dir):
        try:
            spec = load_paper(paper_dir)
        except DatasetError as exc:
            report.errors.append(str(exc))
            continue
        report.papers[spec.paper_id] = spec
    return report


def resolve_papers_dir(path: Path) -> Path:
    """Accept either the papers folder itself or a dataset root that holds `papers/`."""
    path = Path(path)
    nested = path / "papers"
    if nested.is_dir() and not (path / CLAIMS_FILE).exists():
        return nested
    return path
