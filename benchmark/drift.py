"""The drift-detection suite: does the alignment check notice when one claim's code drifts?

Take repositories where a claim is implemented (the official judge scored it >= 0.5 and the
check passes it before any change), inject one drift at that claim's official evidence, check
again, and count the claim as detected when it now fails. Kinds of drift, by dimension:

    D1 value     a value the claim states, where the evidence's code sets it (never in a
                 comment or string, never a number of a name or label, never 0 or 1),
                 times ten; preferably on a line whose code names a word of the claim
    D2 stub      the function holding the evidence replaced by `raise NotImplementedError`
    D2 operator  one arithmetic operator of the evidence's code swapped (+ -, * /), not one
                 joining strings nor on a line that prints, logs or asserts; preferably on
                 a line whose code names a word of the claim
    D3 remove    the evidence lines commented out (the metric, baseline or split is gone)
    D4 swap      two consecutive call lines of the evidence swapped, preferably calls named
                 after the claim's steps (the phases reorder; prints, logging, argument
                 declarations and `super().__init__()` are not phases, and two assignments
                 neither of which reads what the other sets are no order to drift)

Detected means the claim now fails, or its expected score dropped (by at least `DROP`): the
check's verdict on it went down. `flagged` counts the stricter outcome, pass -> fail, which is
what sends a claim to repair. A false alarm is another claim of the same repository, none of
whose official evidence lines the injection changed (a stub changes the whole body it
replaces), whose verdict crosses the pass threshold either way.

Each repository is copied once (files put back after each injection); repositories of more
than `MAX_FILES` files are left out and listed in the report.

The report also splits detection by whether the official judge's reasoning about the claim
names what a drift changed (a D1 value's setting, the function of a stub or an operator swap):
the judge's own reading of which code implements the claim, which no checker sees. A drift
the judge does not name may change a number that only coincides with one of the claim's, or a
function beside the claim's code.
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import random
import re
import shutil
import tempfile
import tokenize
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sabench.benchmark.dataset import load_paper
from sabench.benchmark.scoring import read_runs_root
from sabench.scaffolds.alignment_check import CHECKERS
from sabench.verifiers.alignment import ClaimResult
from sabench.verifiers.files import read_json
from sabench.verifiers.index import parse_python
from sabench.verifiers.numbers import GROUPED_THOUSANDS
from sabench.verifiers.spec import Claim, PaperSpec
from sabench.verifiers.stubs import stub_reason
from sabench.verifiers.terms import term_set

OFFICIAL_PASS = 0.5
DROP = 0.01
REF = re.compile(r"^(.+):(\d+)-(\d+)$")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?!\w|\.\d)")


@dataclass(frozen=True)
class Site:
    """A claim's official evidence: files and line ranges (1-based, inclusive)."""

    claim: Claim
    ranges: tuple[tuple[str, int, int], ...]

    def touches(self, changed: dict[str, list[tuple[int, int]]]) -> bool:
        """Some of its lines are among the `changed` ones (per file, 1-based ranges)."""
        return any(a <= d and c <= b for f, a, b in self.ranges for c, d in changed.get(f, ()))


class DriftSuiteError(ValueError):
    """A runs root the suite cannot use (one line naming the file and the entry)."""


def check_official(official: Any, path: Path) -> None:
    """An official score file: dimensions -> claims, each a dict with an `id`."""
    try:
        claims = [c for d in official["dimensions"].values() for c in d["claims"]]
        if all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in claims):
            return
    except (TypeError, KeyError, AttributeError):
        pass
    raise DriftSuiteError(f"{path}: not an official score file (expected dimensions -> claims "
                          "with ids)")


def inside(repo: Path, rel: str) -> bool:
    """`rel` names a regular file of the repository reached without `..` or any link (a
    link in a working copy could point back at the original, which must never be written)."""
    root = repo.resolve()
    try:
        return (repo / rel).is_file() and (repo / rel).resolve() == root / rel
    except (OSError, ValueError):
        return False


def evidence_sites(spec: PaperSpec, official: dict[str, Any], repo: Path) -> dict[str, Site]:
    """Each claim's official evidence ranges that exist in the repository."""
    refs = {c["id"]: c.get("evidence_refs") or [] for d in official["dimensions"].values()
            for c in d["claims"]}
    sites = {}
    for claim in spec.claims:
        ranges = []
        for ref in refs.get(claim.id, []):
            found = REF.match(ref) if isinstance(ref, str) else None
            if found and inside(repo, found.group(1)):
                ranges.append((found.group(1), int(found.group(2)), int(found.group(3))))
        if ranges:
            sites[claim.id] = Site(claim, tuple(ranges))
    return sites


# ------------------------------------------------------------------------------- injections


Injection = Callable[[Path, Site, random.Random], bool]


def lines_of(repo: Path, rel: str) -> list[str]:
    return (repo / rel).read_text(encoding="utf-8", errors="surrogateescape").splitlines(True)


def write_lines(repo: Path, rel: str, lines: list[str]) -> None:
    (repo / rel).write_text("".join(lines), encoding="utf-8", errors="surrogateescape")


@dataclass(frozen=True)
class Position:
    """One place a drift can go: columns `start:end` of a line (0-based) and what replaces
    them; `named` when the line's code names a word of the claim."""

    named: bool
    rel: str
    line: int
    start: int
    end: int
    replacement: str


def apply(repo: Path, position: Position) -> None:
    lines = lines_of(repo, position.rel)
    text = lines[position.line]
    lines[position.line] = text[:position.start] + position.replacement + text[position.end:]
    write_lines(repo, position.rel, lines)


def _first_of_the_best(positions: list[Position]) -> Position:
    """The first position on a line that names a word of the claim, else the first."""
    return min(positions, key=lambda p: not p.named)  # stable: first of the best


def drift_value(repo: Path, site: Site, rng: random.Random) -> bool:
    """A number stated by the claim, where the evidence's code (not a comment or a string)
    sets it, multiplied by ten: a drift of what runs, not of what the code says about it.
    The first such number on a line whose code names a word of the claim is taken, else the
    first at all: an evidence range often sets several things, and `hidden_dim = 256` beside
    `batch_size = 256` is not the value of "batch size 256"."""
    positions = value_positions(repo, site)
    if positions:
        apply(repo, _first_of_the_best(positions))
    return bool(positions)


def value_positions(repo: Path, site: Site) -> list[Position]:
    """Every number of the evidence's code that is a value the claim states, times ten."""
    stated = claim_values(site.claim.text)
    words = term_set(site.claim.text)
    found = []
    for rel, start, end in site.ranges:
        lines = lines_of(repo, rel)
        code = code_spans(rel, lines)
        for i in range(start - 1, min(end, len(lines))):
            for number in NUMBER.finditer(lines[i]):
                if in_code(code, i, number.start(1)) and (
                        number.group(1) in stated or _same_value(number.group(1), stated)):
                    named = bool(term_set(_code_before(lines[i], number.start(1), code, i))
                                 & words)
                    found.append(Position(named, rel, i, number.start(1), number.end(1),
                                          _tenfold(number.group(1))))
    return found


def _code_before(line: str, column: int, spans: Spans | None, index: int) -> str:
    """The code of a line before `column`, strings kept (a key `"lr": 3e-4` names its
    value), comments left out."""
    comment = min((a for a, b in (spans or {}).get(index, ()) if line[a:a + 1] == "#"),
                  default=len(line))
    return line[:min(column, comment)]


#: Numbers of a claim's text that name rather than set something: a model or dataset name
#: (`LLaMA-2`, `KL-16`) or a label (`Eq. 3`, `Figure 2`, `Stage 1`).
NAMING = re.compile(r"(?:[A-Za-z]-|(?:eq|eqs|equation|fig|figure|table|section|sec|appendix|"
                    r"algorithm|alg|stage|phase|step|line|theorem|lemma)\.?\s*\(?)$",
                    re.IGNORECASE)


def claim_values(text: str) -> set[str]:
    """The numbers a claim states as values: names and labels left out, `1,000` read as one
    number, and 0 and 1 left out (they are in nearly every line of code, so the first one in
    the evidence is rarely the claim's, and ten times 0 is 0)."""
    values = {m.group(0).replace(",", "") for m in GROUPED_THOUSANDS.finditer(text)}
    plain = GROUPED_THOUSANDS.sub(lambda m: " " * len(m.group(0)), text)
    values |= {m.group(1) for m in NUMBER.finditer(plain)
               if not NAMING.search(plain[max(0, m.start() - 12):m.start()])}
    return {v for v in values if _float(v) not in (0.0, 1.0)}


#: Per line (0-based), the column ranges that are comments or strings: no drift goes there.
Spans = dict[int, list[tuple[int, int]]]


def code_spans(rel: str, lines: list[str]) -> Spans | None:
    """Comment and string spans of a Python file (None when it does not tokenize), or the
    comments of a configuration file (`#` to the end of the line)."""
    if not rel.endswith(".py"):
        return {i: [(line.index("#"), len(line))] for i, line in enumerate(lines)
                if "#" in line and not rel.endswith(".json")}
    spans: Spans = defaultdict(list)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("".join(lines)).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for token in tokens:
        if token.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        (row, col), (end_row, end_col) = token.start, token.end
        for line in range(row - 1, end_row):
            spans[line].append((col if line == row - 1 else 0,
                                end_col if line == end_row - 1 else 1 << 30))
    return spans


def in_code(spans: Spans | None, line: int, column: int) -> bool:
    return spans is not None and not any(a <= column < b for a, b in spans.get(line, ()))


def _same_value(number: str, stated: set[str]) -> bool:
    try:
        value = float(number)
    except ValueError:
        return False
    return any(_float(s) == value for s in stated) and value not in (0.0, 1.0)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _tenfold(number: str) -> str:
    """The value times ten, written plainly (`3e-4` -> `0.003`, `64` -> `640`)."""
    value = float(number) * 10
    return str(int(value)) if value.is_integer() and "." not in number else f"{value:.10g}"


#: What a function that already does nothing is (`verifiers.stubs.stub_reason`).
_NOTHING = ("empty body", "raises NotImplementedError")


def drift_stub(repo: Path, site: Site, rng: random.Random) -> bool:
    """The function that holds the evidence replaced by a stub; not one that already does
    nothing (an abstract method's docstring, `pass`, `...`, a raise of
    NotImplementedError): replacing it changes nothing that runs."""
    for rel, start, end in site.ranges:
        if not rel.endswith(".py"):
            continue
        lines = lines_of(repo, rel)
        try:
            tree = parse_python("".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body and \
                    node.lineno <= end and (node.end_lineno or node.lineno) >= start and \
                    stub_reason(node) not in _NOTHING:
                body_start = node.body[0].lineno - 1
                indent = re.match(r"\s*", lines[body_start]).group(0)
                lines[body_start:node.end_lineno] = [f"{indent}raise NotImplementedError\n"]
                write_lines(repo, rel, lines)
                return True
    return False


OPERATORS = ((" + ", " - "), (" - ", " + "), (" * ", " / "), (" / ", " * "))


#: Lines whose arithmetic computes no part of the method: output, logging, assertions.
NOT_COMPUTING = re.compile(r"^\s*(?:assert\b|(?:print|logging\.\w+|log\w*|logger\.\w+|"
                           r"warnings\.warn|tqdm\.write|\w*\.set_description)\()")


def drift_operator(repo: Path, site: Site, rng: random.Random) -> bool:
    """One arithmetic operator in the evidence's Python code swapped: not in a comment or a
    string, not joining a string (`"\\n" + "=" * 70` formats output), and not on a line that
    prints, logs or asserts. The first on a line whose code names a word of the claim is
    taken, else the first at all (`len(blocks) - 1` beside `h + alpha * (h_a - h)` is not the
    claim's formula)."""
    positions = operator_positions(repo, site)
    if positions:
        apply(repo, _first_of_the_best(positions))
    return bool(positions)


def operator_positions(repo: Path, site: Site, every: bool = False) -> list[Position]:
    """The operators of the evidence's computing lines that a swap may take: per line, the
    first of the first kind found (`OPERATORS` in order), or with `every` each of them."""
    words = term_set(site.claim.text)
    found = []
    for rel, start, end in site.ranges:
        if not rel.endswith(".py"):
            continue
        lines = lines_of(repo, rel)
        code = code_spans(rel, lines)
        for i in range(start - 1, min(end, len(lines))):
            if NOT_COMPUTING.match(lines[i]):
                continue
            named = bool(term_set(_code_before(lines[i], len(lines[i]), code, i)) & words)
            for old, new in OPERATORS:
                at = [a for a in _occurrences(lines[i], old) if in_code(code, i, a + 1) and
                      not _joins_string(code, i, a, len(old))]
                found += [Position(named, rel, i, a, a + len(old), new)
                          for a in (at if every else at[:1])]
                if at and not every:
                    break
    return found


def _occurrences(line: str, text: str) -> list[int]:
    found, at = [], line.find(text)
    while at >= 0:
        found.append(at)
        at = line.find(text, at + 1)
    return found


def _joins_string(spans: Spans | None, line: int, at: int, width: int) -> bool:
    """The operator at `at` has a string literal right beside it."""
    return any(b == at or a == at + width for a, b in (spans or {}).get(line, ()))


def drift_remove(repo: Path, site: Site, rng: random.Random) -> bool:
    """The evidence lines commented out (Python and YAML; other files emptied there)."""
    changed = False
    for rel, start, end in site.ranges:
        lines = lines_of(repo, rel)
        for i in range(start - 1, min(end, len(lines))):
            if lines[i].strip() and not lines[i].lstrip().startswith("#"):
                indent = re.match(r"\s*", lines[i]).group(0)
                keep = f"{indent}pass  # removed\n" if rel.endswith(".py") and \
                    lines[i].rstrip().endswith(":") else f"{indent}# removed\n"
                lines[i] = keep
                changed = True
        write_lines(repo, rel, lines)
    return changed


CALL_LINE = re.compile(r"^\s*(?:[\w.\[\], ]+=\s*)?[\w.]+\(.*\)\s*$")


#: Calls that report or declare rather than do a phase's work: swapping them reorders nothing.
NOT_A_PHASE = re.compile(r"^\s*(?:[\w.\[\], ]+=\s*)?(?:print|logging\.\w+|log\w*|logger\.\w+|"
                         r"warnings\.warn|\w*parser\.add_argument|\w+\.append|tqdm\.write|"
                         r"super\(\)\.__init__)\(")


def drift_swap(repo: Path, site: Site, rng: random.Random) -> bool:
    """Two consecutive call lines of the evidence, at the same indentation, swapped: the first
    such pair whose calls both name a step of the claim (a word of the callee is the claim's),
    else the first pair at all. Calls that only print, log, declare arguments or initialise a
    base class are not phases and are left alone, and so are two assignments neither of which
    reads what the other sets (`a = f(x)` beside `b = g(x)`): swapped, they compute the same,
    so no check could tell, and the pair is no drift."""
    steps = term_set(site.claim.text)
    pairs = []
    for rel, start, end in site.ranges:
        lines = lines_of(repo, rel)
        for i in range(start - 1, min(end, len(lines)) - 1):
            a, b = lines[i], lines[i + 1]
            if _phase_call(a) and _phase_call(b) and a != b and _indent(a) == _indent(b) \
                    and _reorders(a, b):
                pairs.append((rel, i, _names_step(a, steps) and _names_step(b, steps)))
    if not pairs:
        return False
    rel, i, _ = next((p for p in pairs if p[2]), pairs[0])
    lines = lines_of(repo, rel)
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    write_lines(repo, rel, lines)
    return True


def _phase_call(line: str) -> bool:
    return bool(CALL_LINE.match(line)) and not NOT_A_PHASE.match(line)


def _reorders(first: str, second: str) -> bool:
    """Swapping the two lines can change what runs: one is a bare call (a step run for its
    effect, on whatever state it shares), or one reads or sets what the other sets. An
    assignment is read as computing its value: the calls on its right are not taken to
    change anything beside it, though a method is taken to read its whole object."""
    a, b = _statement(first), _statement(second)
    if a is None or b is None or not isinstance(a, _ASSIGNS) or not isinstance(b, _ASSIGNS):
        return True
    set_a, set_b = _set_by(a), _set_by(b)
    return _overlap(set_a, _read_by(b) | set_b) or _overlap(set_b, _read_by(a))


_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def _statement(line: str) -> ast.stmt | None:
    try:
        body = parse_python(line.strip()).body
    except (SyntaxError, ValueError):
        return None
    return body[0] if len(body) == 1 else None


def _chain(node: ast.AST) -> str | None:
    """`self.model.fc` for an attribute chain, `x` for `x[i]` (an item set sets `x`)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _chain(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):
        return _chain(node.value)
    return None


def _set_by(statement: ast.stmt) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    out = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and \
                    isinstance(getattr(node, "ctx", None), ast.Store):
                out.add(_chain(node))
    return out - {None}


def _read_by(statement: ast.stmt) -> set[str]:
    """The names and attribute chains a statement reads (an augmented assignment reads its
    target; a method call reads the object it is called on)."""
    out = set()
    roots = [statement.value] if statement.value is not None else []
    if isinstance(statement, ast.AugAssign):
        roots.append(statement.target)
    for root in roots:
        inner = {id(n.value) for n in ast.walk(root) if isinstance(n, ast.Attribute)}
        for node in ast.walk(root):
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in inner:
                out.add(_chain(node))  # the whole chain read: `self.N`, not all of `self`
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                out.add(_chain(node.func.value))
    if isinstance(statement, ast.AugAssign):
        out |= _set_by(statement)
    return out - {None}


def _overlap(set_names: set[str], other: set[str]) -> bool:
    """A name set is one read or set (`self.lr` and `self.lr`), or part of it (`self.cfg` and
    `self.cfg.lr`, either way)."""
    return any(s == o or o.startswith(f"{s}.") or s.startswith(f"{o}.")
               for s in set_names for o in other)


def _names_step(line: str, steps: set[str]) -> bool:
    """The callee's name shares a word with the claim (`train_stage1` for "Stage 1 training")."""
    callee = re.search(r"([\w.]+)\(", line)
    return bool(callee) and bool(term_set(callee.group(1).replace(".", " ")) & steps)


def _indent(line: str) -> str:
    return re.match(r"\s*", line).group(0)


KINDS: dict[str, list[tuple[str, Injection]]] = {
    "D1": [("value", drift_value)],
    "D2": [("stub", drift_stub), ("operator", drift_operator)],
    "D3": [("remove", drift_remove)],
    "D4": [("swap", drift_swap)],
}


# ------------------------------------------------------------------------------- the suite


@dataclass
class Outcome:
    run: str
    claim: str
    dimension: str
    kind: str
    detected: bool
    flagged: bool
    alarms: int
    others: int
    change: dict[str, Any] | None = None  # the first line the injection changed
    #: whether the official judge's reasoning about the claim names what the drift changed
    #: (`judge_names`); None for kinds that change no one named thing (D3, D4)
    judge_named: bool | None = None


#: Repositories with more files are left out (and listed): every injection re-checks the
#: whole repository, and an agent's reproduction has hundreds of files, not 100,000.
MAX_FILES = 20_000


def too_many_files(repo: Path, limit: int = MAX_FILES) -> bool:
    count = 0
    for _, _, files in os.walk(repo):
        count += len(files)
        if count > limit:
            return True
    return False


def candidates(runs_root: Path, papers: Path, skipped: list[dict[str, str]] | None = None,
               only: Collection[str] | None = None
               ) -> Iterator[tuple[str, PaperSpec, Path, dict]]:
    """Complete runs (no cited file missing) with their paper and official score, of the
    papers in `only` if given (an id no run has is an error); runs left out for their size
    go to `skipped`."""
    specs: dict[str, PaperSpec] = {}
    runs = read_runs_root(runs_root).runs
    unknown = sorted(set(only or ()) - {run.paper_id for run in runs})
    if unknown:
        raise DriftSuiteError(f"{runs_root}: no run of paper {unknown[0]}")
    for run in runs:
        if run.missing_cited_files or only is not None and run.paper_id not in only:
            continue
        if too_many_files(run.repo):
            if skipped is not None:
                skipped.append({"run": f"{run.config}/{run.paper_id}",
                                "reason": f"more than {MAX_FILES:,} files"})
            continue
        official_file = runs_root / "official_scores" / run.config / f"{run.paper_id}.json"
        if not official_file.is_file():
            continue
        official = read_json(official_file, DriftSuiteError, "cannot read the official score")
        check_official(official, official_file)
        spec = specs.setdefault(run.paper_id, load_paper(papers / run.paper_id))
        yield f"{run.config}/{run.paper_id}", spec, run.repo, official


def drift_test(runs_root: Path, papers: Path, *, sample: int | None = None, seed: int = 0,
               checker: str = "alignment", stratified: bool = False,
               kinds: Collection[str] | None = None, papers_only: Collection[str] | None = None,
               progress: Callable[[Outcome], None] | None = None) -> dict[str, Any]:
    """Inject one drift per chosen claim and report detection and false alarms.

    With `stratified`, the draw takes the dimensions in turn (as long as each has claims
    left), so that a capped sample measures D3 and D4 too, which are rare among implemented
    claims; the overall figure then weighs the dimensions alike. With `kinds` (names of
    `KINDS`: value, stub, operator, remove, swap), only those kinds are injected, so that one
    kind of drift is measured on a sample of its own. With `papers_only` (paper ids), only
    those papers' runs are drifted: a split of papers that tuning never reads gives a
    held-out figure, which a seed over all papers does not (seeds share draws)."""
    rng = random.Random(seed)
    check = CHECKERS[checker]
    chosen = chosen_kinds(kinds)
    plans, skipped = [], []
    reasoning: dict[str, dict[str, str]] = {}
    for name, spec, repo, official in candidates(Path(runs_root), Path(papers), skipped,
                                                 papers_only):
        scores = {c["id"]: c["score"] for d in official["dimensions"].values()
                  for c in d["claims"]}
        reasoning[name] = {c["id"]: c.get("judge_reasoning") or ""
                           for d in official["dimensions"].values() for c in d["claims"]}
        sites = evidence_sites(spec, official, repo)
        eligible = [cid for cid, s in scores.items() if s is not None and s >= OFFICIAL_PASS
                    and cid in sites and chosen[sites[cid].claim.dimension.value]]
        plans += [(name, spec, repo, sites, cid) for cid in eligible]
    rng.shuffle(plans)
    if stratified:
        plans = interleave_dimensions(plans)
    outcomes, baselines = [], {}
    with WorkingCopies() as copies:
        for name, spec, repo, sites, cid in plans:
            if sample is not None and len(outcomes) >= sample:
                break
            if name not in baselines:
                baselines[name] = {r.id: r for r in check(spec, repo, None)}
            if not baselines[name][cid].passed:
                continue
            outcome = inject_and_check(name, spec, copies.of(name, repo), sites, cid,
                                       baselines[name], check, rng, chosen)
            if outcome is not None:
                outcome.judge_named = judge_names(reasoning[name].get(cid, ""), outcome,
                                                  copies.of(name, repo))
                outcomes.append(outcome)
                if progress:
                    progress(outcome)
    return {**summarise(outcomes), "stratified": stratified,
            "kinds": sorted(k for ks in chosen.values() for k, _ in ks),
            "papers": sorted(papers_only) if papers_only is not None else None,
            "skipped_runs": skipped}


def chosen_kinds(names: Collection[str] | None) -> dict[str, list[tuple[str, Injection]]]:
    """`KINDS` with only the kinds named (all without names); a name that is no kind is an
    error naming the known ones."""
    known = {kind for ks in KINDS.values() for kind, _ in ks}
    unknown = sorted(set(names or ()) - known)
    if unknown:
        raise DriftSuiteError(f"unknown kind of drift {', '.join(unknown)} (known: "
                              f"{', '.join(sorted(known))})")
    return {d: [(k, f) for k, f in ks if not names or k in names] for d, ks in KINDS.items()}


class WorkingCopies:
    """One copy of each repository, made the first time one of its claims is drifted (not
    one per claim: a repository of 100,000 files is copied once). An injection changes files
    of the copy and `inject_and_check` puts them back. FIFOs, sockets and devices are not
    copied."""

    def __enter__(self) -> WorkingCopies:
        self._tmp = tempfile.TemporaryDirectory(prefix="sabench-drift-")
        self.made: dict[str, Path] = {}
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()

    def of(self, name: str, repo: Path) -> Path:
        if name not in self.made:
            copy = Path(self._tmp.name) / str(len(self.made))
            shutil.copytree(repo, copy, symlinks=True, ignore=_special_files)
            self.made[name] = copy
        return self.made[name]


def _special_files(folder: str, names: list[str]) -> set[str]:
    keep = set()
    for name in names:
        path = os.path.join(folder, name)
        if os.path.islink(path) or os.path.isdir(path) or os.path.isfile(path):
            keep.add(name)
    return set(names) - keep


def interleave_dimensions(plans: list[tuple]) -> list[tuple]:
    """The plans in turns of D1, D2, D3, D4 (each dimension's own order kept)."""
    by_dimension: dict[str, list[tuple]] = defaultdict(list)
    for plan in plans:
        by_dimension[plan[3][plan[4]].claim.dimension.value].append(plan)
    queues = [by_dimension[d] for d in sorted(by_dimension)]
    out = []
    for turn in range(max((len(q) for q in queues), default=0)):
        out += [q[turn] for q in queues if turn < len(q)]
    return out


def inject_and_check(name: str, spec: PaperSpec, copy: Path, sites: dict[str, Site], cid: str,
                     before: dict[str, ClaimResult], check: Callable, rng: random.Random,
                     chosen: dict[str, list[tuple[str, Injection]]] | None = None
                     ) -> Outcome | None:
    """Drift claim `cid` in `copy` (a working copy) with one of the `chosen` kinds (default:
    every kind of its dimension), check, and put the files back."""
    site = sites[cid]
    kinds = list((chosen or KINDS)[site.claim.dimension.value])
    rng.shuffle(kinds)
    saved = {rel: (copy / rel).read_bytes() for rel in {r for r, _, _ in site.ranges}}
    try:
        for kind, inject in kinds:
            if inject(copy, site, rng):
                after = {r.id: r for r in check(spec, copy, None)}
                changed = {rel: changed_lines(data, (copy / rel).read_bytes())
                           for rel, data in saved.items()}
                untouched = [o for o, s in sites.items() if o != cid and not s.touches(changed)]
                alarms = sum(after[o].passed != before[o].passed for o in untouched)
                flagged = not after[cid].passed
                dropped = after[cid].expected_score <= before[cid].expected_score - DROP
                return Outcome(name, cid, site.claim.dimension.value, kind,
                               flagged or dropped, flagged, alarms, len(untouched),
                               first_change(copy, saved, changed))
            _restore(copy, saved)  # a kind that changed nothing may still have rewritten
    finally:
        _restore(copy, saved)
    return None


def changed_lines(before: bytes, after: bytes) -> list[tuple[int, int]]:
    """The lines of `before` (1-based, inclusive ranges) that `after` changed or removed; an
    insertion counts as touching the line it follows. A stub touches the whole body it
    replaced, not just the drifted claim's evidence."""
    old, new = before.splitlines(), after.splitlines()
    out = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False
                                                     ).get_opcodes():
        if tag != "equal":
            out.append((max(1, i1), max(i1 + 1, i2)) if tag == "insert" else (i1 + 1, i2))
    return out


def first_change(copy: Path, saved: dict[str, bytes],
                 changed: dict[str, list[tuple[int, int]]]) -> dict[str, Any] | None:
    """The first line an injection changed, before and after (so that a miss can be read
    without repeating the injection); a stub's `after` is its one line. The line is the
    first that differs, not the diff's first range: a diff reads a swap of two lines as one
    line moved, and the range it gives may start at the unchanged line above."""
    for rel, ranges in sorted(changed.items()):
        if ranges:
            old = saved[rel].decode("utf-8", "replace").splitlines()
            new = (copy / rel).read_bytes().decode("utf-8", "replace").splitlines()
            pairs = enumerate(zip(old, new, strict=False), 1)  # a stub is shorter
            line = next((n for n, (a, b) in pairs if a != b), ranges[0][0])
            return {"file": rel, "line": line, "before": _line(old, line),
                    "after": _line(new, line)}
    return None


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip()[:200] if 0 < number <= len(lines) else ""


def _restore(copy: Path, saved: dict[str, bytes]) -> None:
    for rel, data in saved.items():
        (copy / rel).write_bytes(data)


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    def rate(items: list[Outcome]) -> float | None:
        return round(sum(o.detected for o in items) / len(items), 4) if items else None

    by_dimension, by_kind = defaultdict(list), defaultdict(list)
    for outcome in outcomes:
        by_dimension[outcome.dimension].append(outcome)
        by_kind[f"{outcome.dimension} {outcome.kind}"].append(outcome)
    others = sum(o.others for o in outcomes)
    return {"n_injected": len(outcomes), "detection": rate(outcomes),
            "flagged": round(sum(o.flagged for o in outcomes) / len(outcomes), 4)
            if outcomes else None,
            "by_dimension": {d: rate(v) for d, v in sorted(by_dimension.items())},
            "by_kind": {k: {"n": len(v), "detection": rate(v)}
                        for k, v in sorted(by_kind.items())},
            "false_alarm_rate": round(sum(o.alarms for o in outcomes) / others, 4)
            if others else None,
            "by_judge_naming": by_judge_naming(outcomes),
            "runs": len({o.run for o in outcomes}),
            "injections": [{"run": o.run, "claim": o.claim, "kind": f"{o.dimension} {o.kind}",
                            "detected": o.detected, "flagged": o.flagged, "change": o.change,
                            "alarms": o.alarms, "untouched": o.others,
                            "judge_named": o.judge_named}
                           for o in outcomes]}


# ------------------------------------------------------------------------------- judge naming


def judge_names(reasoning: str, outcome: Outcome, copy: Path) -> bool | None:
    """Whether the official judge's reasoning about the claim names what the drift changed:
    the setting of a D1 value (`n_heads` of "... d_model=1280, n_heads=20 ..."), the function
    a stub replaced or an operator swap is in (`copy`: the repository as it was before the
    drift). That is the judge's own reading of which code implements the claim, which no
    checker sees; None for the kinds that change no one named thing (D3, D4)."""
    change = outcome.change
    if change is None or outcome.kind not in ("value", "stub", "operator"):
        return None
    name = drifted_setting(change["before"], change["after"]) if outcome.kind == "value" \
        else enclosing_function(copy / change["file"], change["line"])
    return bool(name) and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", reasoning) is not None


#: Words of a code line that name no setting (`self.lr = 3e-4`, `cfg.get("lr", 3e-4)`).
_NOT_SETTINGS = frozenset({"self", "cls", "int", "float", "str", "bool", "default", "type",
                           "get", "getattr", "config", "cfg", "args", "parser", "add_argument",
                           "def", "return", "field", "default_factory", "lambda", "help"})


def drifted_setting(before: str, after: str) -> str:
    """The identifier a value drift changed the value of: the last one written (a key's
    string too) before the first character the drift changed."""
    cut = next((i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y),
               min(len(before), len(after)))
    names = [n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", before[:cut])
             if len(n) > 1 and n not in _NOT_SETTINGS]
    return names[-1] if names else ""


def enclosing_function(path: Path, line: int) -> str:
    """The name of the innermost function of a Python file around a line ("" for none)."""
    try:
        tree = parse_python(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return ""
    around = [node for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and
              node.lineno <= line <= (node.end_lineno or node.lineno)]
    return max(around, key=lambda node: node.lineno).name if around else ""


def by_judge_naming(outcomes: list[Outcome]) -> dict[str, dict[str, dict[str, Any]]]:
    """Detection per kind, where the official judge names what the drift changed and where
    it does not: the suite's pickers take any number of the claim's text that the evidence's
    code sets, and the first function of its first range, so some draws change code beside
    the claim's; the judge's naming tells them apart without the checker's own rules."""
    groups: dict[str, dict[str, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        if o.judge_named is not None:
            groups[f"{o.dimension} {o.kind}"]["named" if o.judge_named else "not named"].append(o)
    return {kind: {side: {"n": len(items),
                          "detection": round(sum(o.detected for o in items) / len(items), 4)}
                   for side, items in sorted(sides.items())}
            for kind, sides in sorted(groups.items())}
