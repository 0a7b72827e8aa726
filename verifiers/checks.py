"""Per-claim checks: deterministic facts about how a repository covers one claim.

`check_claim(index, claim)` returns a `ClaimCheck` holding the outcome of every check, whatever
the claim's dimension, so that the offline judge, the failure taxonomy and a repair loop can
read the same facts:

- values (D1): the claim's distinctive numbers found in executable code or config, found only in
  comments/docs/tests, bound to a name related to the claim, or a related name bound to a
  different value (mismatch);
- terms (D2): weighted share of the claim's terms on executable lines, in the first evidence
  window, and inside the best single function, and whether that function is a stub;
- protocol objects (D3): named datasets, baselines and metrics found in runnable code;
- phases (D4): the named steps mapped to functions, and whether the static call order from the
  entry points follows the stated order;
- stubs and placeholders near the evidence; evidence found only in docs or tests;
- what the official judge would see (`official_search`, `shown`): whether its gates score the
  claim 0 without its LLM, and how the two windows its LLM is shown carry the claim.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict

from sabench.verifiers.evidence import (
    Query,
    Window,
    WindowScorer,
    make_query,
    rank_windows,
    select,
    to_evidence,
)
from sabench.verifiers.index import Assignment, Definition, RepoIndex
from sabench.verifiers.official_search import OfficialSearch, SearchResult
from sabench.verifiers.shown import (
    PaperTerms,
    ShownWindows,
    in_repo_code,
    shown_windows,
    snippet_terms,
)
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.stubs import PLACEHOLDER
from sabench.verifiers.terms import term_set
from sabench.verifiers.types import Evidence, EvidenceKind

_EXTERNAL = re.compile(
    r"\b(?:pre-?trained|checkpoint|weights|human (?:evaluation|raters|study)|API|GPT-?4|"
    r"Stable Diffusion|LLaMA|Llama|CLIP|Mistral|Qwen|SAM|A100|H100|GPU|TPU|hours|days)\b")
_NOT_ALNUM = re.compile(r"[^a-z0-9|]")
_STEP_SPLIT = re.compile(r"(?:Step|Phase|Stage)\s*\d+[a-z]?\s*[—:\-–)]|→|->|\(\d+\)|\b\d\)\s|;\s")


class ValueMismatch(BaseModel):
    """A name related to the claim bound to a value the claim does not state."""

    model_config = ConfigDict(frozen=True)

    name: str
    found: str
    file: str
    line: int


class ClaimCheck(BaseModel):
    """The outcome of every check for one claim (fractions are in [0, 1])."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    dimension: Dimension
    claim_chars: int = 0
    numbers: list[str] = []
    numbers_in_code: list[str] = []
    numbers_docs_only: list[str] = []
    numbers_bound: list[str] = []
    value_mismatches: list[ValueMismatch] = []
    term_coverage: float = 0.0
    any_coverage: float = 0.0
    window_coverage: float = 0.0
    function: str | None = None
    function_coverage: float = 0.0
    function_stub: str | None = None
    placeholder_near: bool = False
    entities: list[str] = []
    entities_in_code: list[str] = []
    phases: int = 0
    phases_found: list[str] = []
    phase_order: float | None = None
    external: bool = False
    # What the official judge would see (`official_search`): the gate that gives 0 without
    # the LLM (None: the LLM judges), the two code/config windows it is shown (`shown`), and
    # the weighted share of the claim's terms in all 8 kept windows; and the share of the
    # claim's terms found anywhere in the repository's code and config.
    official_gate: str | None = None
    shown: ShownWindows = ShownWindows()
    kept_coverage: float = 0.0
    repo_terms: float = 0.0
    evidence: list[Evidence] = []

    @property
    def stub_detected(self) -> bool:
        """The best-matching function is a stub, or placeholder markers sit in the evidence."""
        return self.function_stub is not None or self.placeholder_near

    @property
    def docs_tests_only(self) -> bool:
        """Something matches, but only in docs, comments or tests, not in executable code."""
        return self.any_coverage >= 0.4 and self.term_coverage < 0.5 * self.any_coverage or (
            bool(self.numbers_docs_only) and not self.numbers_in_code)

    @property
    def value_found(self) -> bool:
        return bool(self.numbers) and len(self.numbers_in_code) == len(self.numbers)


class _RepoView:
    """Per-repository sets the checks reuse for every claim (computed once, cached on the index)."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self._in_code: dict[str, bool] = {}

    def in_compact_code(self, name: str) -> bool:
        """Whether the executable code, compacted (see `_compact`), holds `name` compacted
        (cached: claims of one paper name the same datasets and baselines)."""
        found = self._in_code.get(name)
        if found is None:
            compact = _compact(name)
            found = self._in_code[name] = bool(compact) and compact in self.compact_code
        return found

    @cached_property
    def code_terms(self) -> set[str]:
        return self._collect(executable=True, attr="line_terms")

    @cached_property
    def any_terms(self) -> set[str]:
        return set(self.index.term_lines)

    @cached_property
    def code_numbers(self) -> set[str]:
        return self._collect(executable=True, attr="line_numbers")

    @cached_property
    def any_numbers(self) -> set[str]:
        return set(self.index.number_lines)

    def _collect(self, executable: bool, attr: str) -> set[str]:
        out: set[str] = set()
        for rel, entry in self.index.files.items():
            if entry.kind == EvidenceKind.TEST:
                continue
            per_line = getattr(self.index, attr)[rel]
            for role, found in zip(entry.roles, per_line, strict=True):
                if found and (role in ("code", "config")) == executable:
                    out |= found
        return out

    @cached_property
    def compact_code(self) -> str:
        return _compact("\n".join(line for entry in self.index.files.values()
                                  if entry.kind != EvidenceKind.TEST
                                  for line, role in zip(entry.lines, entry.roles, strict=True)
                                  if role in ("code", "config")))

    @cached_property
    def functions(self) -> list[tuple[Definition, frozenset[str]]]:
        """Each non-test function with the terms on its executable lines."""
        out = []
        for d in self.index.functions():
            entry = self.index.files[d.file]
            if entry.kind == EvidenceKind.TEST:
                continue
            found: set[str] = set(term_set(d.name))
            per_line = self.index.line_terms[d.file]
            for no in range(d.start, min(d.end, len(per_line)) + 1):
                if entry.roles[no - 1] == "code":
                    found |= per_line[no - 1]
            out.append((d, frozenset(found)))
        return out

    @cached_property
    def term_functions(self) -> dict[str, np.ndarray]:
        """term -> indices (into `functions`) of the functions whose body holds it."""
        table: dict[str, list[int]] = {}
        for i, (_, found) in enumerate(self.functions):
            for term in found:
                table.setdefault(term, []).append(i)
        return {t: np.array(ids) for t, ids in table.items()}

    @cached_property
    def name_functions(self) -> dict[str, np.ndarray]:
        """term -> indices of the functions whose name holds it."""
        table: dict[str, list[int]] = {}
        for i, (d, _) in enumerate(self.functions):
            for term in term_set(d.name):
                table.setdefault(term, []).append(i)
        return {t: np.array(ids) for t, ids in table.items()}

    @cached_property
    def call_order(self) -> dict[str, int]:
        return static_call_order(self.index)


def view(index: RepoIndex) -> _RepoView:
    if "view" not in index.cache:
        index.cache["view"] = _RepoView(index)
    return index.cache["view"]


def _compact(text: str) -> str:
    """Lower case without separators, so `CIFAR-10`, `cifar10` and `Cifar_10` compare equal;
    lines stay apart (`|`) so a name never matches across two lines."""
    return _NOT_ALNUM.sub("", text.lower().replace("\n", "|"))


def _share(weights: dict[str, float], found: Iterable[str]) -> float:
    total = math.fsum(weights.values())
    if not total:
        return 0.0
    # fsum: exact, so the result does not depend on set iteration order (hash seed); walk the
    # smaller side (a claim's few terms against a repository's thousands).
    if not isinstance(found, (set, frozenset)) or len(found) <= len(weights):
        return math.fsum(weights[t] for t in found if t in weights) / total
    return math.fsum(w for t, w in weights.items() if t in found) / total


def check_claim(index: RepoIndex, claim: Claim, k: int = 8,
                paper: PaperTerms | None = None) -> ClaimCheck:
    """Run every check for one claim against an indexed repository.

    Args:
        index: the repository index.
        claim: the claim to check.
        k: how many evidence windows to keep.
        paper: term rarity among the claims of the claim's paper (default: this claim only).

    Returns:
        A ClaimCheck; its `evidence` holds the official search's kept windows (at most k).
    """
    rv = view(index)
    query = make_query(index, claim)
    # The evidence is what the official search keeps: the windows the features describe, so
    # the verdict cites what it rests on (`evidence.retrieve` ranks for the LLM judges).
    result = official_search(index).collect(claim)
    scorer = WindowScorer(index, query)
    windows = [scorer.span(item.file, item.start, item.end) for item in result.items[:k]]
    nums = [n.key for n in query.numbers]
    in_code = [n for n in nums if n in rv.code_numbers]
    function, coverage = best_function(rv, query.weights)
    entities = query.entities if claim.dimension in (Dimension.D3, Dimension.D1) else []
    ent_code = [e for e in entities if rv.in_compact_code(e)]
    phases, found, order = check_phases(rv, query) if claim.dimension == Dimension.D4 else (
        0, [], None)
    top = windows[0] if windows else None
    check = ClaimCheck(
        claim_id=claim.id, dimension=claim.dimension, claim_chars=len(claim.text), numbers=nums,
        numbers_in_code=in_code,
        numbers_docs_only=[n for n in nums if n not in rv.code_numbers and n in rv.any_numbers],
        numbers_bound=bound_numbers(index, query), value_mismatches=mismatches(index, query),
        term_coverage=_share(query.weights, rv.code_terms),
        any_coverage=_share(query.weights, rv.any_terms),
        window_coverage=_share(query.weights, top.terms) if top else 0.0,
        function=function.qualname if function else None, function_coverage=coverage,
        function_stub=function.stub if function else None,
        placeholder_near=_placeholder_near(index, windows),
        entities=entities, entities_in_code=ent_code,
        phases=phases, phases_found=found, phase_order=order,
        external=bool(_EXTERNAL.search(claim.text)),
        **official_view(index, claim, query, result, paper),
        evidence=[to_evidence(index, w, f"official search, {item.relevance} query")
                  for w, item in zip(windows, result.items, strict=False)])
    if check.docs_tests_only:  # that search leaves docs and tests out: cite them from ours
        ranked = select(rank_windows(index, query), k)
        check = check.model_copy(update={"evidence": [to_evidence(index, w) for w in ranked]})
    return check


def official_search(index: RepoIndex) -> OfficialSearch:
    """The official evidence search of the repository (built once, cached on the index)."""
    search = index.cache.get("official_search")
    if search is None:
        search = index.cache["official_search"] = OfficialSearch(index)
    return search


def official_view(index: RepoIndex, claim: Claim, query: Query, result: SearchResult,
                  paper: PaperTerms | None = None) -> dict[str, object]:
    """The ClaimCheck fields describing what the official judge would see for `claim`."""
    kept_terms = snippet_terms(index, result.items)
    claim_terms = term_set(claim.text)
    return {
        "official_gate": result.gate,
        "shown": shown_windows(index, claim.text, result.shown, paper),
        "kept_coverage": _share(query.weights, kept_terms),
        "repo_terms": (sum(in_repo_code(index, t) for t in claim_terms) / len(claim_terms)
                       if claim_terms else 0.0),
    }


def best_function(rv: _RepoView, weights: dict[str, float]) -> tuple[Definition | None, float]:
    """The function that best covers the terms (see `function_match`) and its body coverage."""
    d, body, _ = function_match(rv, weights)
    return d, body


def function_match(rv: _RepoView, weights: dict[str, float]
                   ) -> tuple[Definition | None, float, float]:
    """The function that best covers the terms: share covered by its executable lines, with
    the terms of its own name counting once more (so `solve_adjoint` beats its caller `train`
    for "solve the adjoint").

    Returns:
        (function, share covered by its body, share covered by body and name, capped at 1).
    """
    total = math.fsum(weights.values())
    if not total:
        return None, 0.0, 0.0
    funcs = rv.functions
    if not funcs:
        return None, 0.0, 0.0
    body = np.zeros(len(funcs))
    name = np.zeros(len(funcs))
    for term, weight in weights.items():
        ids = rv.term_functions.get(term)
        if ids is not None:
            body[ids] += weight
        ids = rv.name_functions.get(term)
        if ids is not None:
            name[ids] += weight
    rank = np.where(body > 0, body + name, 0.0)
    best_i = int(np.argmax(rank))  # first maximum: earliest function wins ties
    if rank[best_i] <= 0:
        return None, 0.0, 0.0
    best, best_rank, best_cov = funcs[best_i][0], float(rank[best_i]), float(body[best_i])
    return best, best_cov / total, min(1.0, best_rank / total)


def bound_numbers(index: RepoIndex, query: Query) -> list[str]:
    """Claim numbers assigned (code or config) to a name sharing a term with the claim."""
    wanted = {n.key for n in query.numbers}
    out: set[str] = set()
    for a in _assignments_by_number(index, wanted):
        if term_set(a.path) & query.weights.keys():
            out |= a.numbers & wanted
    return sorted(out)


def _assignments_by_number(index: RepoIndex, wanted: set[str]):
    table = index.cache.get("assign_by_number")
    if table is None:
        table = {}
        for a in index.assignments:
            if index.files[a.file].kind != EvidenceKind.TEST:
                for key in a.numbers:
                    table.setdefault(key, []).append(a)
        index.cache["assign_by_number"] = table
    for key in wanted:
        yield from table.get(key, ())


def mismatches(index: RepoIndex, query: Query, limit: int = 5) -> list[ValueMismatch]:
    """Names specific to the claim (rare terms) bound to numbers the claim does not state."""
    wanted = {n.key for n in query.numbers}
    if not wanted:
        return []
    rare = {t for t, w in query.weights.items() if w >= 2.0 and len(t) > 2}
    out: list[ValueMismatch] = []
    for a, name_terms in _valued_assignments(index):
        if name_terms & rare and not a.numbers & wanted:
            out.append(ValueMismatch(name=a.path, found=str(a.value), file=a.file, line=a.line))
            if len(out) == limit:
                break
    return out


def _valued_assignments(index: RepoIndex) -> list[tuple[Assignment, frozenset[str]]]:
    """Assignments outside tests of a plain value holding numbers, with their names' terms, in
    index order (cached: every claim with numbers looks through them)."""
    found = index.cache.get("valued_assignments")
    if found is None:
        found = index.cache["valued_assignments"] = [
            (a, term_set(a.name)) for a in index.assignments
            if a.numbers and index.files[a.file].kind != EvidenceKind.TEST
            and isinstance(a.value, (int, float, str))]
    return found


def _placeholder_near(index: RepoIndex, windows: list[Window]) -> bool:
    return any(_placeholder_in(index, w.file, w.start, w.end) for w in windows)


def _placeholder_in(index: RepoIndex, file: str, start: int, end: int) -> bool:
    """A placeholder marker in the lines, or they sit in a stub (cached: many claims share
    their evidence windows)."""
    cache = index.cache.setdefault("placeholder_windows", {})
    key = (file, start, end)
    found = cache.get(key)
    if found is None:
        owner = index.enclosing(file, start + 2)
        # one search per window; NUL keeps a match from spanning two lines (no `\s` matches it)
        found = cache[key] = bool(
            PLACEHOLDER.search("\0".join(index.files[file].lines[start - 1:end]))
            or (owner is not None and owner.stub))
    return found


# --------------------------------------------------------------------- D4 phases
def claim_steps(text: str) -> list[str]:
    """The stated steps of a pipeline claim, in order (`Step 1 — ...`, `A → B`, `(1) ...`)."""
    parts = [p.strip(" .,:—-") for p in _STEP_SPLIT.split(text)]
    return [p for p in parts if len(term_set(p)) >= 2]


def check_phases(rv: _RepoView, query: Query) -> tuple[int, list[str], float | None]:
    """Map each stated step to its best function; return (steps, functions found, order).

    `order` is the share of consecutive found steps whose functions come in the stated order
    in the static call order from the entry points (None with fewer than two found).
    """
    steps = claim_steps(query.claim.text)
    weights_all = query.weights
    found: list[Definition] = []
    for step in steps:
        weights = {t: weights_all[t] for t in sorted(term_set(step)) if t in weights_all}
        d, _, cov = function_match(rv, weights)
        if d is not None and cov >= 0.5 and d.stub is None:
            found.append(d)
    order = rv.call_order
    ranked = [order[d.qualname] for d in found if d.qualname in order]
    pairs = list(zip(ranked, ranked[1:], strict=False))
    frac = sum(a <= b for a, b in pairs) / len(pairs) if pairs else None
    return len(steps), [d.qualname for d in found], frac


def static_call_order(index: RepoIndex) -> dict[str, int]:
    """Functions in the order a depth-first walk of calls from the entry points reaches them.

    Entry points are functions named `main`, then functions called at module level of
    entry-point files (`if __name__ == "__main__": run()`), in file order.
    """
    by_name: dict[str, list[Definition]] = {}
    for d in index.functions():
        by_name.setdefault(d.name, []).append(d)
    roots = [d for d in index.functions() if d.name == "main"]
    roots += [d for file, name, _ in index.module_calls if index.files[file].entry_point
              for d in by_name.get(name, ())]
    order: dict[str, int] = {}
    stack = list(reversed(roots))
    while stack:
        d = stack.pop()
        if d.qualname in order:
            continue
        order[d.qualname] = len(order)
        callees = [c for name, _ in d.calls for c in by_name.get(name, ())
                   if c.qualname not in order]
        stack.extend(reversed(callees))
    return order
