"""Evidence retrieval: the places in an indexed repository that bear on one claim.

A claim becomes a `Query` (its terms weighted by rarity in this repository, its distinctive
numbers, its named entities). Every line holding a query term or number is a hit; hits are pooled
into 8-line windows (what a judge reads), and windows are ranked by what they match, weighted by
dimension: D1 favours config values and assignments, D2 function bodies that are not stubs, D3
data/evaluation/metric code and scripts, D4 entry points, trainers and pipelines. Documentation,
comments and tests count less than executable code but are still returned (with their kind), so
a checker can tell "only in the docs" from "absent".
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from sabench.verifiers.index import FileEntry, RepoIndex
from sabench.verifiers.numbers import Number, distinctive_numbers
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import named_entities, term_set
from sabench.verifiers.types import Evidence, EvidenceKind

WINDOW = 8
_STEP = WINDOW // 2
# Terms on more than this share of a repository's lines say nothing about a claim.
_COMMON_SHARE = 0.25
_NUMBER_WEIGHT = 3.0

_D3_PATH = re.compile(r"data|eval|metric|experiment|benchmark|baseline|script|run|ablation|"
                      r"dataset|loader|test_suite|result", re.IGNORECASE)
_D4_PATH = re.compile(r"main|train|pipeline|run|trainer|stage|phase|loop|engine|solver|algorithm",
                      re.IGNORECASE)


@dataclass
class Query:
    """What retrieval looks for: weighted terms, distinctive numbers and named entities."""

    claim: Claim
    weights: dict[str, float]
    numbers: list[Number]
    entities: list[str]

    @property
    def total_weight(self) -> float:
        return math.fsum(self.weights.values()) or 1.0


def make_query(index: RepoIndex, claim: Claim) -> Query:
    """Weigh the claim's terms by inverse line frequency in this repository (common terms drop)."""
    total = max(1, _total_lines(index))
    weights: dict[str, float] = {}
    for term in sorted(term_set(claim.text)):  # sorted: same float sums in every process
        df = len(index.term_lines.get(term, ()))
        if df > _COMMON_SHARE * total and total > 40:
            continue
        weights[term] = math.log(1.0 + total / (1.0 + df))
    return Query(claim, weights, distinctive_numbers(claim.text), named_entities(claim.text))


def _total_lines(index: RepoIndex) -> int:
    cached = getattr(index, "_total_lines", None)
    if cached is None:
        cached = sum(len(f.lines) for f in index.files.values())
        index._total_lines = cached  # type: ignore[attr-defined]
    return cached


_ROLE_FACTOR = {"code": 1.0, "config": 1.2, "comment": 0.35, "docstring": 0.35, "docs": 0.3,
                "blank": 0.0}


def line_factor(entry: FileEntry, line: int, dimension: Dimension) -> float:
    """How much a hit on this line counts for a claim of this dimension."""
    role = entry.roles[line - 1]
    return _ROLE_FACTOR[role] * _file_factor(entry, dimension, role)


def _file_factor(entry: FileEntry, dimension: Dimension, role: str = "code") -> float:
    factor = 0.5 if entry.kind == EvidenceKind.TEST else 1.0
    if dimension == Dimension.D1 and role == "config":
        factor *= 1.3
    elif _favoured(entry, dimension):
        factor *= 1.25
    return factor


def _favoured(entry: FileEntry, dimension: Dimension) -> bool:
    """D3 favours data/eval/metric files and scripts, D4 entry points and trainers."""
    if dimension == Dimension.D3:
        return bool(_D3_PATH.search(entry.path)) or entry.lang in ("sh", "bash")
    if dimension == Dimension.D4:
        return entry.entry_point or bool(_D4_PATH.search(entry.path))
    return False


def factor_array(index: RepoIndex, dimension: Dimension) -> np.ndarray:
    """`line_factor` for every global line id of the index (cached on the index)."""
    key = f"factor:{dimension}"
    if key not in index.cache:
        arr = np.zeros(index.n_global + WINDOW, dtype=np.float64)
        for rel, entry in index.files.items():
            start = index.line_offset[rel]
            by_role = {r: _ROLE_FACTOR[r] * _file_factor(entry, dimension, r)
                       for r in _ROLE_FACTOR}
            arr[start:start + len(entry.lines)] = [by_role[r] for r in entry.roles]
        index.cache[key] = arr
    return index.cache[key]


def window_starts(index: RepoIndex) -> np.ndarray:
    """Global ids where windows start: every 4th line of every file."""
    if "starts" not in index.cache:
        parts = [np.arange(index.line_offset[rel], index.line_offset[rel] + len(e.lines), _STEP)
                 for rel, e in index.files.items()]
        index.cache["starts"] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return index.cache["starts"]


def line_weights(index: RepoIndex, query: Query) -> np.ndarray:
    """Per global line: factor × (weights of the query terms + number weight per number)."""
    raw = np.zeros(index.n_global + WINDOW, dtype=np.float64)
    for term, weight in query.weights.items():
        ids = index.term_ids(term)
        if ids is not None:
            raw[ids] += weight
    for num in query.numbers:
        ids = index.number_ids(num.key)
        if ids is not None:
            raw[ids] += _NUMBER_WEIGHT
    return raw * factor_array(index, query.claim.dimension)


@dataclass
class Window:
    """An 8-line window with what it matched."""

    file: str
    start: int
    end: int
    score: float
    terms: set[str]
    numbers: set[str]
    executable_share: float


def rank_windows(index: RepoIndex, query: Query, shortlist: int = 16) -> list[Window]:
    """Score the windows that hold matches; best first.

    Windows are first ranked by the plain sum of their lines' weights (vectorised), and only
    the `shortlist` best are scored exactly (each term and number counted once per window).
    """
    starts = window_starts(index)
    if not len(starts):
        return []
    weights = line_weights(index, query)
    cum = np.concatenate(([0.0], np.cumsum(weights)))
    sums = cum[starts + WINDOW] - cum[starts]
    nonzero = np.flatnonzero(sums > 0)
    if len(nonzero) > shortlist:
        nonzero = nonzero[np.argpartition(-sums[nonzero], shortlist)[:shortlist]]
    scorer = WindowScorer(index, query)
    windows = [scorer.score(int(starts[i])) for i in nonzero]
    windows.sort(key=lambda w: (-w.score, w.file, w.start))
    return windows


class WindowScorer:
    """Scores windows for one query (what all its windows share is computed once)."""

    def __init__(self, index: RepoIndex, query: Query) -> None:
        self.index, self.query = index, query
        self.terms = frozenset(query.weights)
        self.numbers = frozenset(n.key for n in query.numbers)
        self.factors = factor_array(index, query.claim.dimension)

    def score(self, gid: int) -> Window:
        """The window starting at global line `gid` (see `span`)."""
        file, start = self.index.locate(gid)
        return self.span(file, start, start + WINDOW - 1)

    def span(self, file: str, start: int, end: int) -> Window:
        """The window of lines `start`..`end` of `file` (cut at the file's end): each term and
        number counted once, at its best line factor."""
        index, query = self.index, self.query
        entry = index.files[file]
        end = min(len(entry.lines), end)
        gid = index.line_offset[file] + start - 1
        best_term: dict[str, float] = {}
        best_num: dict[str, float] = {}
        line_terms, line_numbers = index.line_terms[file], index.line_numbers[file]
        for line in range(start, end + 1):
            found = self.terms & line_terms[line - 1]
            numbers = self.numbers & line_numbers[line - 1] if self.numbers else ()
            if not found and not numbers:
                continue
            factor = self.factors[gid + line - start]
            for term in found:
                best_term[term] = max(best_term.get(term, 0.0), factor * query.weights[term])
            for key in numbers:
                best_num[key] = max(best_num.get(key, 0.0), factor * _NUMBER_WEIGHT)
        roles = entry.roles[start - 1:end]
        executable = sum(r in ("code", "config") for r in roles) / max(1, len(roles))
        score = math.fsum(best_term.values()) / query.total_weight + math.fsum(
            best_num.values()) / max(1, len(query.numbers)) / _NUMBER_WEIGHT
        if query.claim.dimension == Dimension.D2:
            owner = index.enclosing(file, start + 2)
            if owner is not None and owner.stub:
                score *= 0.6
        return Window(file, start, end, score, set(best_term), set(best_num), executable)


def select(windows: list[Window], k: int, per_file: int = 3) -> list[Window]:
    """The k best windows, without overlaps and with at most `per_file` from one file."""
    chosen: list[Window] = []
    used: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for w in windows:
        spans = used[w.file]
        if len(spans) >= per_file or any(w.start <= e and s <= w.end for s, e in spans):
            continue
        spans.append((w.start, w.end))
        chosen.append(w)
        if len(chosen) == k:
            break
    return chosen


def to_evidence(index: RepoIndex, window: Window, found_by: str = "") -> Evidence:
    """An Evidence item for a window: file, lines, snippet, kind and why it matched (`found_by`
    leads the reason when given)."""
    entry = index.files[window.file]
    why = [found_by] if found_by else []
    if window.numbers:
        why.append("numbers " + ", ".join(sorted(window.numbers)))
    if window.terms:
        why.append("terms " + ", ".join(sorted(window.terms)[:8]))
    if window.executable_share < 0.5:
        why.append("mostly comments/docs")
    kind = entry.kind
    if kind == EvidenceKind.CODE and window.executable_share == 0:
        kind = EvidenceKind.DOCS
    return Evidence(file=window.file, start_line=window.start, end_line=window.end,
                    snippet=index.window(window.file, window.start, window.end), kind=kind,
                    why="; ".join(why), relevance=round(window.score, 4))


def retrieve(index: RepoIndex, claim: Claim, k: int = 8) -> list[Evidence]:
    """The k most relevant 8-line windows of the repository for one claim.

    Args:
        index: the repository index (`RepoIndex.build`).
        claim: the claim to find evidence for; its dimension steers the ranking.
        k: how many windows at most.

    Returns:
        Evidence items, best first; empty when nothing in the repository matches.
    """
    query = make_query(index, claim)
    windows = select(rank_windows(index, query), k)
    return [to_evidence(index, w) for w in windows]
