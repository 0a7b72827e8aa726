"""KeywordJudge: a deterministic, offline evidence check by numbers and salient terms.

The simplest scorer that still says something: for each claim it extracts the numbers and the
salient words, and looks for them in the repository's code and config files (comments, docstrings,
docs and tests are not implementation, so they are not searched). A number counts fully when it
sits on a line that also names one of the claim's terms (`label_smoothing: float = 0.1`), partly
when it only appears somewhere. For ordering claims (D4) written as steps (`a -> b -> c`), each
step is located on a code line and the steps must appear in that order within a file. Coverage
maps to the 5-level scale. It knows nothing about semantics: a changed formula that keeps its
names and constants goes unnoticed, which is why the calibrated offline judge is preferred when
present.
"""

from __future__ import annotations

import ast
import io
import math
import os
import re
import tokenize
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sabench.verifiers.index import parse_python
from sabench.verifiers.judge import check_repository
from sabench.verifiers.spec import Claim, Dimension, PaperSpec
from sabench.verifiers.types import (
    ClaimVerdict,
    Evidence,
    EvidenceKind,
    FailureCategory,
    PaperScore,
)

JUDGE_NAME = "keyword"
MAX_FILE_BYTES = 1_000_000
_SOURCE_KINDS = {".py": EvidenceKind.CODE, ".yaml": EvidenceKind.CONFIG,
                 ".yml": EvidenceKind.CONFIG, ".json": EvidenceKind.CONFIG,
                 ".toml": EvidenceKind.CONFIG, ".cfg": EvidenceKind.CONFIG,
                 ".ini": EvidenceKind.CONFIG, ".sh": EvidenceKind.CODE}
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", "tests", "test",
              ".ipynb_checkpoints", "site-packages"}

# Coverage thresholds for the scores 1, 0.75, 0.5, 0.25 (below the last: 0).
_LEVELS = ((0.85, 1.0), (0.65, 0.75), (0.45, 0.5), (0.2, 0.25))
# Weight of the numbers against the terms when a claim states numbers: values identify a claim
# far better than words shared by every reproduction of the paper.
_NUMBER_WEIGHT = 0.6
_WEAK_NUMBER = 0.4  # a number present in the repository, but never beside a claim term

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NUMBER = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE]([-+−]?\d+)|\s*(?:\\times|×|\*)\s*10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?)?"
    r"(?!\w|\.\d)(\s*\\?%)?")
_POWER = re.compile(r"(?<![\w.])10\s*(?:\^|\*\*)\s*\{?\s*\(?([-+−]?\d+)\)?\s*\}?")
_REFERENCE = re.compile(r"(?:eq|eqs|equation|section|sec|table|figure|fig|appendix|algorithm|"
                        r"alg|step|lemma|theorem)\.?\s*\(?$", re.IGNORECASE)
_FRACTION = re.compile(r"\\[td]?frac\s*\{\s*(\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}")
_STEP_SPLIT = re.compile(r"\s*(?:->|→|=>|⇒|;|\bthen\b)\s*")
_TRIVIAL = {0.0, 1.0}

_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
          "η": "eta", "θ": "theta", "κ": "kappa", "λ": "lambda", "μ": "mu", "π": "pi",
          "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "ω": "omega"}
# Greek names are notation: code rarely spells them, so they are not evidence either way.
_NOTATION = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "eta", "theta", "kappa",
             "lambda", "mu", "rho", "sigma", "tau", "phi", "omega", "frac", "tfrac", "dfrac",
             "mathbb", "mathcal", "mathrm", "mathbf", "text", "left", "right", "cdot", "times",
             "quad", "qquad", "tag", "lvert", "rvert", "top", "dots", "ldots", "leftarrow",
             "rightarrow", "operatorname", "hat", "tilde", "bar", "sim", "leq", "geq", "le", "ge"}
_STOPWORD_TEXT = """
the and for with from into onto that this these those are was were been being its their each
every all any both than then when where which while who whose what how not only also such can may
must should will would could same other our they them using use used uses via per over under
after before between during about above below more most less very just but within without across
through based given following follows include includes including section table figure appendix
equation paper method approach value values set sets one two three four five six seven eight nine
ten first second third new note see show shows applied apply applies computed compute exactly
instead never always part whole stay stays receive receives so if else is be as of to in on at by
or an it we no coefficient distribution drawn plus reported report kept endpoints
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Abbreviations in code and the words a paper writes for them.
_EXPANSIONS = {
    "lr": ("learning", "rate"), "val": ("validation",), "valid": ("validation",),
    "init": ("initialisation",), "grad": ("gradient",), "grads": ("gradient",),
    "std": ("standard", "deviation"), "eps": ("epsilon",), "wd": ("weight", "decay"),
    "knn": ("nearest", "neighbours"), "acc": ("accuracy",), "num": ("number",),
    "cfg": ("configuration",), "prob": ("probability",), "probs": ("probability",),
    "idx": ("index",), "dim": ("dimension",), "ckpt": ("checkpoint",), "bs": ("batch", "size"),
    "iters": ("iteration",), "iter": ("iteration",), "opt": ("optimiser",),
    "optim": ("optimiser",), "avg": ("average",), "perm": ("permutation",),
}


def term_key(word: str) -> str:
    """A comparable key: lower case, light stemming, cut to 5 letters.

    `standardiser` = `standardise`, `clipping` = `clip`, `seeds` = `seed`: papers and code
    inflect the same word differently, and a keyword check must not miss it for that.
    """
    word = word.lower()
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # clipp -> clip
            break
    return word[:5]


def _words(text: str) -> list[str]:
    """Words of free text or code, identifiers split at `_` and camelCase, Greek spelled out."""
    text = "".join(f" {_GREEK[ch]} " if ch in _GREEK else ch for ch in text)
    out: list[str] = []
    for word in _WORD.findall(text.replace("\\", " ")):
        out.extend(piece.lower() for piece in _CAMEL.findall(word) if not piece.isdigit())
    return out


def claim_terms(text: str) -> set[str]:
    """The salient term keys of a claim: no stopwords, no notation, no single letters."""
    return {term_key(w) for w in _words(text)
            if len(w) > 1 and w not in _STOPWORDS and w not in _NOTATION}


def code_terms(text: str) -> set[str]:
    """The term keys a line of code offers, abbreviations expanded to the words papers use."""
    keys: set[str] = set()
    for word in _words(text):
        keys.add(term_key(word))
        keys.update(term_key(full) for full in _EXPANSIONS.get(word, ()))
    return keys


def _value(mantissa: str, exponent: str | None) -> float:
    value = float(mantissa)
    if exponent:
        value *= 10.0 ** int(exponent.replace("−", "-"))
    return value


def number_groups(text: str, *, skip_references: bool = False) -> list[frozenset[float]]:
    """Numeric values in text, each as the set of its accepted forms.

    `5e-4`, `5 \\times 10^{-4}`, `10^{-3}` and `\\frac{1}{2}` are read as values; `20%` accepts
    20 or 0.2.

    Args:
        text: a claim or a line of code.
        skip_references: leave out numbers that label a section, equation, table, step.
    """
    found: list[frozenset[float]] = []
    for match in _NUMBER.finditer(text):
        if skip_references and _REFERENCE.search(text[max(0, match.start() - 12):match.start()]):
            continue
        value = round_value(_value(match.group(1), match.group(2) or match.group(3)))
        percent = round_value(value / 100.0) if match.group(4) else value
        found.append(frozenset({value, percent}))
    for match in _POWER.finditer(text):
        found.append(frozenset({round_value(10.0 ** int(match.group(1).replace("−", "-")))}))
    for match in _FRACTION.finditer(text):
        if float(match.group(2)):
            found.append(frozenset({round_value(float(match.group(1)) / float(match.group(2)))}))
    return found


def extract_numbers(text: str) -> set[float]:
    """Every value in text, all accepted forms together (for indexing lines of code)."""
    return set().union(*number_groups(text)) if text else set()


def round_value(value: float) -> float:
    """Six significant digits, so that `0.0005` and `5e-4` compare equal."""
    return float(f"{value:.6g}") if math.isfinite(value) else value


@dataclass(frozen=True)
class CodeLine:
    """One line of implementation text, with what it offers as evidence."""

    file: str
    number: int
    text: str
    kind: EvidenceKind
    terms: frozenset[str]
    numbers: frozenset[float]
    is_declaration: bool

    def evidence(self, why: str) -> Evidence:
        return Evidence(file=self.file, start_line=self.number, end_line=self.number,
                        snippet=self.text.strip()[:200], kind=self.kind, why=why)


class RepositoryText:
    """The searchable lines of a repository, built once per repository."""

    def __init__(self, lines: list[CodeLine]) -> None:
        self.lines = lines
        self.terms: set[str] = set().union(*(line.terms for line in lines))
        self.numbers: set[float] = set().union(*(line.numbers for line in lines))

    @classmethod
    def read(cls, repo: Path) -> RepositoryText:
        lines: list[CodeLine] = []
        for path, kind in _source_files(repo):
            rel = path.relative_to(repo).as_posix()
            try:
                text = path.read_bytes().decode("utf-8", errors="replace")
            except OSError:  # unreadable (permissions, vanished): not evidence either way
                continue
            for number, code, declared in _implementation_lines(text, path.suffix):
                lines.append(CodeLine(rel, number, code, kind, frozenset(code_terms(code)),
                                      frozenset(extract_numbers(code)), declared))
        return cls(lines)


def _source_files(repo: Path) -> list[tuple[Path, EvidenceKind]]:
    """Code and config files, in a stable order; symlinks, tests and huge files are skipped."""
    found: list[tuple[Path, EvidenceKind]] = []
    for root, dirs, files in os.walk(repo, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            kind = _SOURCE_KINDS.get(path.suffix.lower())
            if kind is None or path.is_symlink() or name.startswith("test_"):
                continue
            if path.stat().st_size <= MAX_FILE_BYTES:
                found.append((path, kind))
    return found


def _implementation_lines(text: str, suffix: str) -> list[tuple[int, str, bool]]:
    """(line number, text, is a declaration) of non-empty lines.

    Python loses its comments and docstrings; its declarations (imports, def/class headers,
    class-level fields) are marked, since they name a step without performing it.
    """
    lines = text.splitlines()
    declared: set[int] = set()
    if suffix == ".py":
        lines, declared = _strip_python(text, lines)
    return [(i, line, i in declared) for i, line in enumerate(lines, 1) if line.strip()]


def _strip_python(text: str, lines: list[str]) -> tuple[list[str], set[int]]:
    """Blank out comments and docstrings: they describe the code, they are not the code."""
    stripped = list(lines)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                stripped[row - 1] = stripped[row - 1][:col]
        tree = parse_python(text)
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        return [line.split("#", 1)[0] for line in lines], set()
    declared: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            for row in _rows(body[0]):
                stripped[row - 1] = ""
        declared.update(_declaration_rows(node))
    return stripped, declared


def _rows(node: ast.AST) -> range:
    start = getattr(node, "lineno", 1)
    return range(start, (getattr(node, "end_lineno", None) or start) + 1)


def _declaration_rows(node: ast.AST) -> set[int]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return set(_rows(node))
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        rows = set(range(node.lineno, node.body[0].lineno))
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign | ast.AnnAssign):
                    rows.update(_rows(stmt))
        return rows
    return set()


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


@dataclass(frozen=True)
class Coverage:
    """How much of a claim the repository shows, with the lines that show it."""

    value: float
    reasons: tuple[str, ...]
    evidence: tuple[Evidence, ...]


def level(coverage: float) -> float:
    """Map coverage in [0, 1] to the 5-level scale."""
    for threshold, score in _LEVELS:
        if coverage >= threshold:
            return score
    return 0.0


def term_coverage(terms: set[str], repo: RepositoryText) -> tuple[float, list[str]]:
    """Share of the claim's terms found anywhere, and the missing ones."""
    missing = sorted(terms - repo.terms)
    return (1.0 - len(missing) / len(terms) if terms else 1.0), missing


def number_coverage(numbers: set[frozenset[float]], terms: set[str],
                    repo: RepositoryText) -> tuple[float, list[str], list[Evidence]]:
    """Each number: 1 beside a claim term, `_WEAK_NUMBER` elsewhere in the code, 0 if absent."""
    total, notes, evidence = 0.0, [], []
    for group in sorted(numbers, key=min):
        shown = "/".join(f"{v:g}" for v in sorted(group))
        beside = [ln for ln in repo.lines if group & ln.numbers and ln.terms & terms]
        if beside:
            total += 1.0
            evidence.append(beside[0].evidence(f"{shown} beside a claim term"))
        elif group & repo.numbers:
            total += _WEAK_NUMBER
            notes.append(f"{shown} found but not beside a claim term")
        else:
            notes.append(f"{shown} not found")
    return total / len(numbers), notes, evidence


def claim_numbers(text: str) -> set[frozenset[float]]:
    """The claim's numbers worth looking for: 0 and 1 alone identify nothing."""
    return {group for group in number_groups(text, skip_references=True)
            if not group <= _TRIVIAL}


def lexical_coverage(claim: Claim, repo: RepositoryText) -> Coverage:
    """Numbers (weighted) and terms of the claim found in the repository."""
    terms = claim_terms(claim.text)
    numbers = claim_numbers(claim.text)
    term_cov, missing = term_coverage(terms, repo)
    reasons = [f"terms {len(terms) - len(missing)}/{len(terms)}"
               + (f" (missing: {', '.join(missing)})" if missing else "")]
    if not numbers:
        return Coverage(term_cov, tuple(reasons), ())
    num_cov, notes, evidence = number_coverage(numbers, terms, repo)
    reasons.insert(0, f"numbers {num_cov:.2f} of {len(numbers)}"
                   + (f" ({'; '.join(notes)})" if notes else ""))
    value = _NUMBER_WEIGHT * num_cov + (1 - _NUMBER_WEIGHT) * term_cov
    return Coverage(value, tuple(reasons), tuple(evidence))


def claim_steps(claim: Claim) -> list[set[str]]:
    """The ordered steps of a D4 claim written as `a -> b -> c` (empty when it is not)."""
    if claim.dimension != Dimension.D4:
        return []
    steps = [claim_terms(part) for part in _STEP_SPLIT.split(claim.text)]
    steps = [step for step in steps if step]
    return steps if len(steps) >= 2 else []


def step_lines(step: set[str], repo: RepositoryText) -> list[CodeLine]:
    """The code lines (not declarations) naming most of a step's terms, at least a third."""
    best, found = 0, []
    for line in repo.lines:
        if line.is_declaration or line.kind != EvidenceKind.CODE:
            continue
        hits = len(step & line.terms)
        if hits * 3 < len(step) or hits == 0 or hits < best:
            continue
        if hits > best:
            best, found = hits, []
        found.append(line)
    return found


def pair_order(first: list[CodeLine], second: list[CodeLine]) -> bool | None:
    """True if some line of `first` precedes one of `second` in a file, False if only the
    reverse happens, None if they never share a file (the order cannot be seen)."""
    shared = False
    for a in first:
        for b in second:
            if a.file == b.file:
                shared = True
                if a.number <= b.number:
                    return True
    return False if shared else None


def ordering_coverage(steps: list[set[str]], repo: RepositoryText) -> Coverage:
    """Share of steps found, times the share of consecutive found steps in the stated order."""
    located = [step_lines(step, repo) for step in steps]
    found = [lines for lines in located if lines]
    orders = [pair_order(a, b) for a, b in zip(found, found[1:], strict=False)]
    seen = [o for o in orders if o is not None]
    in_order = sum(seen) / len(seen) if seen else 1.0
    value = len(found) / len(steps) * in_order
    unknown = len(orders) - len(seen)
    reasons = (f"steps found {len(found)}/{len(steps)}",
               f"consecutive steps in order {sum(seen)}/{len(seen)}"
               + (f" ({unknown} not comparable)" if unknown else ""))
    evidence = tuple(lines[0].evidence(f"step {i + 1}") for i, lines in enumerate(located) if lines)
    return Coverage(value, reasons, evidence[:6])


def judge_claim(claim: Claim, repo: RepositoryText) -> ClaimVerdict:
    """The verdict on one claim."""
    steps = claim_steps(claim)
    coverage = ordering_coverage(steps, repo) if steps else lexical_coverage(claim, repo)
    score = level(coverage.value)
    if score == 1.0:
        category = FailureCategory.CORRECT
    elif score == 0.0:
        category = FailureCategory.MISSING
    else:
        category = FailureCategory.PARTIAL
    reasoning = f"coverage {coverage.value:.2f}: " + "; ".join(coverage.reasons)
    return ClaimVerdict(id=claim.id, score=score, judge_reasoning=reasoning,
                        evidence_refs=[ev.ref for ev in coverage.evidence], judge=JUDGE_NAME,
                        failure_category=category)


class KeywordJudge:
    """Judge by presence of the claim's numbers and terms in the code (deterministic, offline)."""

    @property
    def name(self) -> str:
        return JUDGE_NAME

    def score(self, spec: PaperSpec, repo: Path) -> PaperScore:
        """Judge every claim of `spec` against the repository at `repo`.

        Raises:
            RepositoryError: the repository does not exist or is not a folder.
        """
        root = check_repository(repo)
        text = RepositoryText.read(root)
        verdicts = {dim: [judge_claim(claim, text) for claim in spec.claims_in(dim)]
                    for dim in Dimension}
        return PaperScore.of(spec.paper_id, verdicts, repo_path=str(repo), model=JUDGE_NAME,
                             scored_at=datetime.now(UTC).isoformat(timespec="seconds"))
