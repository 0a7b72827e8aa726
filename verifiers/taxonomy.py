"""Failure taxonomy: why a claim scored 0 or 0.25.

Two readers assign a `FailureCategory` to a low verdict:

- `classify_verdict` for our own judges: structured check outcomes first (a stub found, a value
  that differs, ...), then the kinds of the evidence (none at all; only docs or tests), then
  the verdict's reasoning text;
- `read_reasoning` for any judge's free-text reasoning, including the official judge's, by
  ordered rules: the official pipeline's four fixed gate texts, then stub, synthetic data,
  value differs, mechanism differs, docs-only, partial, absent-with-unrelated-code and absent
  (the rule set summarised in reference/failure-patterns.md, re-implemented here). Each verdict
  gets the first mode that fires; modes map onto the coarser `FailureCategory`. An absent claim
  whose negated sentences name an external resource (pretrained weights, an API, a simulator, a
  human study) is an external dependency.

`release_comparison` classifies the release's zero-scored claims and compares the distribution
with the published one and with failure-patterns.md, explaining where and why they differ.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sabench.verifiers.spec import Dimension
from sabench.verifiers.types import (
    ClaimVerdict,
    Evidence,
    EvidenceKind,
    FailureCategory,
    PaperScore,
)

LOW = 0.25

# ---------------------------------------------------------------- rule modes

GATES: dict[str, str] = {
    "G1": "Only weak or indirect implementation evidence found",
    "G2": "No evidence found in repository code/config after search",
    "G3": "Experiment-parameter claim has no direct numeric or script evidence",
    "G4": "Theorem/proof-style claim only has one strong implementation signal",
}

MODE_NAMES: dict[str, str] = {
    "G1": "gate: weak or indirect evidence",
    "G2": "gate: no evidence found",
    "G3": "gate: experiment parameter without a number",
    "G4": "gate: theorem with one signal",
    "F1": "stub or placeholder",
    "F2": "synthetic or dummy data",
    "F3": "value differs",
    "F4": "mechanism or formula differs",
    "F5": "docs only",
    "F6": "partial coverage",
    "F7": "absent, cited code unrelated",
    "F8": "absent",
    "X": "absent, needs an external resource",
    "U": "unclassified",
}

MODE_CATEGORY: dict[str, FailureCategory] = {
    "G1": FailureCategory.MISSING, "G2": FailureCategory.MISSING,
    "G3": FailureCategory.MISSING, "G4": FailureCategory.MISSING,
    "F1": FailureCategory.STUB, "F2": FailureCategory.STUB,
    "F3": FailureCategory.MISMATCH, "F4": FailureCategory.MISMATCH,
    "F5": FailureCategory.DOCS_ONLY, "F6": FailureCategory.PARTIAL,
    "F7": FailureCategory.MISSING, "F8": FailureCategory.MISSING,
    "X": FailureCategory.EXTERNAL,
}

_I = 0  # texts are lower-cased once before matching (faster than re.IGNORECASE)
_STUB = re.compile(
    r"\b(stubs?|stubbed|placeholders?|todo|notimplemented(error)?|skeleton|scaffold(ing)?|"
    r"(dummy|mock|fake) (function|method|class|implementation|model|module)s?|"
    r"hard-?coded|fake (results?|outputs?|values?|metrics?)|returns? (a |an )?(constant|fixed|"
    r"zeros?|none)\b|pass(-| )only|empty (body|function|method))", _I)
_SYNTHETIC = re.compile(
    r"\b(synthetic|random|dummy|fake|toy|mock|placeholder|simulated)\W+(\w+\W+){0,2}?"
    r"(data|datasets?|tensors?|samples?|inputs?|images?|examples?|sequences?|batches)\b|"
    r"\bfakedata\b|\bstand-?ins?\b", _I)
_CONTRA = re.compile(r"contradict|conflict|mismatch|instead of|rather than|not the claimed|"
                     r"\bdiffer|different from|inconsistent with|does not match|doesn't match", _I)
_CONTRA_PLAIN = re.compile(r"contradict|conflict|inconsistent with|does not match|"
                           r"doesn't match|differs from the (claim|paper)", _I)
_NUMBER = re.compile(r"\d")
_MECHANISM = re.compile(
    r"different (formula|parameteri[sz]ation|mechanism|objective|loss|architecture|algorithm|"
    r"update|schedule|definition)|simplified (version|form|variant)|"
    r"uses? (a |the )?(standard|generic|plain|vanilla|conventional) |"
    r"\bnot used\b|never (called|used|invoked|applied)|is not (called|invoked|applied)", _I)
_DOCS = re.compile(
    r"docstrings?|\bcomments?\b|commented|readme|print(ed)? (statements?|strings?|messages?)|"
    r"only (describes?|mentions?|states?|documents?|lists?)|\bprose\b|markdown", _I)
_DOCS_STRONG = re.compile(r"mostly (docstrings?|comments?)|comments? rather than code|"
                          r"docstrings? rather than code|only in (a |the )?(docstring|comment)", _I)
_PARTIAL = re.compile(
    r"partial(ly)?\b|only (a |one )?(subset|part|portion|fraction|some)|matches some|"
    r"only (\w+ ){1,3}(is|are) (shown|set|implemented|present|defined|configured)|"
    r"some of the|not all|incomplete|covers only|only covers|"
    r"only (shows?|supports?|implements?|covers?|defines?|sets?|includes?|matches?|contains?)|"
    r"(matches|supports|covers|implements) only", _I)
_POSITIVE = re.compile(r"\b(implements?|sets?|defines?|contains?|shows?|includes?|has|uses?|"
                       r"computes?|specifies|configures?|supports?|provides?|matches|exists?|"
                       r"is present|are present)\b", _I)
_BUT = re.compile(r"\b(but|however|although|though|yet)\b", _I)
_UNRELATED = re.compile(r"unrelated|\bgeneric\b|not related|irrelevant|does not relate|"
                        r"has nothing to do", _I)
_ABSENT_START = re.compile(
    r"^(there (is|are) no|no |none of|nothing|the (repository|code|evidence|cited code|"
    r"provided (code|evidence|snippets?)) (does not|do not|doesn't|lacks?|contains? no|"
    r"shows? no|has no|provides? no)|lacks?|missing|absent)", _I)
_ABSENT = re.compile(
    r"no (visible|concrete|direct|explicit|actual|code|implementation|evidence|config|"
    r"mention)|\black(s|ing)?\b|not (implemented|present|found|shown|visible|evidenced|"
    r"defined|included)|\bmissing\b|\babsent\b|does not (implement|contain|include|show|"
    r"define|compute|appear)|do not (implement|contain|include|show)|there (is|are) no|"
    r"cannot be found|no sign", _I)
_NEGATION = re.compile(r"\bno\b|\bnot\b|n't\b|\black|\bmissing|\babsent|\bwithout\b|\bnone\b", _I)
_EXTERNAL = re.compile(
    r"pre-?trained (weights?|checkpoints?|models?|encoders?|backbones?)|checkpoints?|"
    r"\bapis?\b|\bsimulators?\b|human (evaluation|study|raters?|preference|annotators?|"
    r"judg\w+)|user stud(y|ies)|crowd-?sourc\w+|proprietary|closed-source|"
    r"(gpt-4o?|gpt-3\.5|claude|gemini)\b.{0,20}(judge|evaluator|annotat)|"
    r"\bdownload(ed|ing)?\b|external (model|service|tool|dataset|resource)s?|"
    r"foundation models?|large language models?|\bllms?\b|hugging ?face", _I)
_CODE_QUOTE = re.compile(r"`[^`]*`")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")


@dataclass(frozen=True)
class Reading:
    """The rule-based reading of one reasoning text."""

    mode: str
    category: FailureCategory | None
    external: bool = False

    @property
    def name(self) -> str:
        return MODE_NAMES[self.mode]


def sentences(text: str) -> list[str]:
    """Sentences of a reasoning text, with quoted code removed (its words are not the judge's)."""
    clean = _CODE_QUOTE.sub(" ", text).strip()
    return [s.strip() for s in _SENTENCE.split(clean) if s.strip()]


def mentions_external(parts: Iterable[str]) -> bool:
    """True when a negated sentence names an external resource (weights, API, human study)."""
    if not _EXTERNAL.search(" ".join(parts)):  # one search rules out most texts
        return False
    return any(_NEGATION.search(s) and _EXTERNAL.search(s) for s in parts)


def read_reasoning(text: str, dimension: Dimension | str | None = None) -> Reading:
    """Classify a low verdict by its reasoning text (first rule that fires)."""
    stripped = text.strip()
    for mode, prefix in GATES.items():
        if stripped.startswith(prefix):
            return Reading(mode, MODE_CATEGORY[mode])
    parts = [part.lower() for part in sentences(stripped)]
    if not parts:
        return Reading("U", None)
    mode = _mode(parts, str(dimension) if dimension else None)
    external = mentions_external(parts)
    if mode in ("F7", "F8") and external:
        return Reading("X", FailureCategory.EXTERNAL, external=True)
    return Reading(mode, MODE_CATEGORY.get(mode), external=external)


def _mode(parts: list[str], dimension: str | None) -> str:
    first, text = parts[0], " ".join(parts)
    if _ABSENT_START.search(first):
        specific = _specific(first, dimension, first_only=True)
        return specific or ("F7" if _UNRELATED.search(text) else "F8")
    specific = _specific(text, dimension, first_two=" ".join(parts[:2]))
    if specific:
        return specific
    if _UNRELATED.search(first) and _ABSENT.search(text):
        return "F7"
    if _PARTIAL.search(text) or _positive_then_negative(parts):
        return "F6"
    if _ABSENT.search(text):
        return "F7" if _UNRELATED.search(text) else "F8"
    return "F6" if _BUT.search(text) else "U"


def _positive_then_negative(parts: list[str]) -> bool:
    """A first sentence that credits something, followed by a 'but' or a negation."""
    first, rest = parts[0], " ".join(parts[1:])
    if not _POSITIVE.search(first) or _NEGATION.search(first.split(",")[0]):
        return False
    return bool(_BUT.search(first) or _BUT.search(rest) or _NEGATION.search(rest))


def _specific(text: str, dimension: str | None, first_only: bool = False,
              first_two: str = "") -> str | None:
    """F1–F5 in order; an absence sentence only yields stub, synthetic data or docs."""
    if _STUB.search(text):
        return "F1"
    if _SYNTHETIC.search(text):
        return "F2"
    if first_only:
        return "F5" if _DOCS.search(text) else None
    if _value_differs(text, dimension):
        return "F3"
    if _MECHANISM.search(text) or _CONTRA_PLAIN.search(text):
        return "F4"
    if _DOCS.search(first_two) or _DOCS_STRONG.search(text):
        return "F5"
    return None


def _value_differs(text: str, dimension: str | None) -> bool:
    for match in _CONTRA.finditer(text):
        if dimension == "D1" or _NUMBER.search(text[max(0, match.start() - 40):match.end() + 40]):
            return True
    return False


# ---------------------------------------------------------------- our verdicts

_DOC_SUFFIX = (".md", ".rst", ".txt", ".tex", ".html", ".ipynb")
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$")

_MIN_PRESENT = 0.45  # share of claim terms on executable lines; fitted on the dev runs

CHECK_KEYS: dict[str, FailureCategory] = {
    "stub": FailureCategory.STUB,
    "external": FailureCategory.EXTERNAL,
    "docs_only": FailureCategory.DOCS_ONLY,
    "missing": FailureCategory.MISSING,
    "mismatch": FailureCategory.MISMATCH,
    "value_mismatch": FailureCategory.MISMATCH,
    "order_mismatch": FailureCategory.MISMATCH,
    "partial": FailureCategory.PARTIAL,
}
"""Check outcomes that decide a category by themselves, in priority order."""


def kind_of_ref(ref: str) -> EvidenceKind:
    """The kind of an evidence reference `path:lines`, from its path alone."""
    path = ref.rsplit(":", 1)[0].lower()
    if _TEST_PATH.search(path):
        return EvidenceKind.TEST
    if path.endswith(_DOC_SUFFIX):
        return EvidenceKind.DOCS
    return EvidenceKind.CODE


def classify_verdict(verdict: ClaimVerdict, dimension: Dimension | str | None = None,
                     evidence: Iterable[Evidence] | None = None,
                     checks: Mapping[str, Any] | Any | None = None) -> FailureCategory | None:
    """The failure category of one of our verdicts (None when it is not low or is an error).

    Args:
        verdict: the verdict; full marks give `correct`, 0.5 and 0.75 give None.
        dimension: the claim's dimension (D1 treats any contradiction as a value difference).
        evidence: the evidence the judge saw; without it, the kinds of `evidence_refs` are used.
        checks: check outcomes by name (see `CHECK_KEYS`; `check_outcomes` makes them from a
            `ClaimCheck`, which may also be passed as is); a truthy outcome decides, and a
            `coverage` strictly between 0 and 1 means partial.
    """
    if verdict.score is None:
        return None
    if verdict.score == 1.0:
        return FailureCategory.CORRECT
    if verdict.score > LOW:
        return None
    if checks is not None and not isinstance(checks, Mapping):
        checks = check_outcomes(checks)
    from_checks = _from_checks(checks or {})
    if from_checks is not None:
        return from_checks
    kinds = ([item.kind for item in evidence] if evidence is not None
             else [kind_of_ref(ref) for ref in verdict.evidence_refs])
    reasoning = verdict.judge_reasoning
    reading = read_reasoning(reasoning, dimension) if reasoning else None
    if reading is not None and reading.category not in (None, FailureCategory.MISSING):
        return reading.category
    if kinds and all(kind in (EvidenceKind.DOCS, EvidenceKind.TEST) for kind in kinds):
        return FailureCategory.DOCS_ONLY
    if reading is not None and reading.category is not None:
        return reading.category
    return FailureCategory.MISSING if verdict.score == 0 or not kinds else FailureCategory.PARTIAL


def check_outcomes(check: Any) -> dict[str, Any]:
    """The taxonomy's reading of a `verifiers.checks.ClaimCheck` (read by attribute).

    Thresholds come from the development runs: with few of the claim's terms on executable
    lines the official judge's reasons call a low claim absent most of the time, so such a
    claim counts as missing before any weaker signal (a related name bound to another value)
    is considered; a placeholder merely near the evidence is not enough for a stub, the best
    matching function must be one. On the 7,292 claims that both the offline judge and the
    official judge score low in complete dev runs, these rules give the category read from
    the official reasons 42% of the time (25% with a placeholder, mismatch-first ordering).

    Args:
        check: the per-claim check outcome of the offline checks.

    Returns:
        Outcomes keyed as `CHECK_KEYS` expects, plus `coverage` (terms on executable lines).
    """
    numbers, in_code = list(check.numbers), list(check.numbers_in_code)
    found, phases = list(check.phases_found), int(check.phases)
    order = check.phase_order
    covered = check.term_coverage >= _MIN_PRESENT or bool(in_code)
    return {
        "stub": check.function_stub is not None,
        "external": bool(check.external) and check.any_coverage < 0.2 and not in_code,
        "docs_only": bool(check.docs_tests_only),
        "missing": not covered,
        "value_mismatch": bool(check.value_mismatches) and not in_code,
        "order_mismatch": order is not None and len(found) >= 2 and order < 1.0,
        "partial": (0 < len(in_code) < len(numbers)) or (0 < len(found) < phases),
        "coverage": float(check.term_coverage),
    }


def _from_checks(checks: Mapping[str, Any]) -> FailureCategory | None:
    for key, category in CHECK_KEYS.items():
        if checks.get(key):
            return category
    coverage = checks.get("coverage")
    if isinstance(coverage, int | float) and 0 < coverage < 1:
        return FailureCategory.PARTIAL
    return None


def categorize_score(score: PaperScore) -> PaperScore:
    """A copy of `score` whose low and full-mark verdicts all carry a failure category."""
    dims = {}
    for dim, result in score.dimensions.items():
        claims = [v if v.failure_category is not None or (cat := classify_verdict(v, dim)) is None
                  else v.model_copy(update={"failure_category": cat}) for v in result.claims]
        dims[dim] = result.model_copy(update={"claims": claims})
    return score.model_copy(update={"dimensions": dims})


# ---------------------------------------------------------------- the release

# The published taxonomy of the release's 7,034 zero-scored claims (shares of those claims),
# as quoted in issue 3; its remaining share is not broken down in the quote.
PUBLISHED_ZERO: dict[FailureCategory, float] = {
    FailureCategory.MISMATCH: 0.408,
    FailureCategory.STUB: 0.162,
    FailureCategory.EXTERNAL: 0.080,
}

# reference/failure-patterns.md §3, column "all": shares of the 14,980 low (≤ 0.25) verdicts.
FAILURE_PATTERNS_LOW: dict[str, float] = {
    "G1": 0.048, "G2": 0.027, "G3": 0.026, "G4": 0.010, "F1": 0.049, "F2": 0.010,
    "F3": 0.039, "F4": 0.013, "F5": 0.199, "F6": 0.238, "F7": 0.129, "F8": 0.209,
}


def release_verdicts(official_scores_dir: Path) -> list[tuple[str, str, float, str]]:
    """(config, dimension, score, reasoning) of every claim of the official result files.

    Raises:
        ResultFileError: a file that is not a result file (named, with its first problem).
    """
    rows = []
    for path in sorted(Path(official_scores_dir).glob("*/*.json")):
        score = PaperScore.load(path)
        rows += [(path.parent.name, str(dim), claim.score, claim.judge_reasoning)
                 for dim, claim in score.verdicts() if claim.score is not None]
    return rows


def distribution(rows: Iterable[tuple[str, str, float, str]], max_score: float,
                 readings: Mapping[int, Reading] | None = None) -> dict[str, Any]:
    """Modes and categories of the verdicts scoring at most `max_score`, overall and per dim.

    `readings` may hold the reading of each row by position, to classify each text only once.
    """
    modes: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    per_dim: dict[str, Counter[str]] = {}
    external_tags = 0
    for i, (_, dim, score, reasoning) in enumerate(rows):
        if score > max_score:
            continue
        reading = readings[i] if readings is not None else read_reasoning(reasoning, dim)
        modes[reading.mode] += 1
        category = str(reading.category) if reading.category else "unclassified"
        categories[category] += 1
        per_dim.setdefault(dim, Counter())[category] += 1
        external_tags += reading.external
    n = sum(modes.values())
    return {"n": n, "modes": _shares(modes, n), "categories": _shares(categories, n),
            "per_dimension": {d: _shares(c, sum(c.values())) for d, c in sorted(per_dim.items())},
            "external_mentions": external_tags / n if n else 0.0}


def _shares(counter: Counter[str], n: int) -> dict[str, float]:
    return {key: count / n for key, count in counter.most_common()} if n else {}


def release_comparison(official_scores_dir: Path) -> dict[str, Any]:
    """Our reading of the release's zero-scored and low verdicts against published figures.

    Returns:
        `zero` and `low` distributions, `published_zero` (the quoted 40.8 / 16.2 / 8.0),
        `failure_patterns_low` (failure-patterns.md §3), per-item `differences`, and
        `explanation`, a few sentences on where and why the figures differ.
    """
    return comparison(release_verdicts(official_scores_dir))


def comparison(rows: list[tuple[str, str, float, str]]) -> dict[str, Any]:
    """`release_comparison` of any (config, dimension, score, reasoning) rows already loaded."""
    readings = {i: read_reasoning(text, dim) for i, (_, dim, score, text) in enumerate(rows)
                if score <= LOW}
    zero, low = distribution(rows, 0.0, readings), distribution(rows, LOW, readings)
    differences = _published_differences(zero) + _pattern_differences(low)
    return {"zero": zero, "low": low,
            "published_zero": {str(k): v for k, v in PUBLISHED_ZERO.items()},
            "failure_patterns_low": FAILURE_PATTERNS_LOW, "differences": differences,
            "explanation": explain(zero, low)}


def _published_differences(zero: dict[str, Any]) -> list[dict[str, Any]]:
    cats = zero["categories"]
    return [{"against": "published_zero", "item": str(cat), "ours": cats.get(str(cat), 0.0),
             "theirs": share, "delta": cats.get(str(cat), 0.0) - share}
            for cat, share in PUBLISHED_ZERO.items()]


def _pattern_differences(low: dict[str, Any]) -> list[dict[str, Any]]:
    modes = low["modes"]
    return [{"against": "failure_patterns_low", "item": mode, "ours": modes.get(mode, 0.0),
             "theirs": share, "delta": modes.get(mode, 0.0) - share}
            for mode, share in FAILURE_PATTERNS_LOW.items()]


def explain(zero: dict[str, Any], low: dict[str, Any]) -> str:
    """Where our distribution departs from the published ones, and the reasons we see."""
    cats, modes, zmodes = zero["categories"], low["modes"], zero["modes"]
    mismatch = cats.get(str(FailureCategory.MISMATCH), 0.0)
    broad = sum(zmodes.get(m, 0.0) for m in ("F3", "F4", "F6", "F7"))
    gates = sum(zmodes.get(m, 0.0) for m in ("G1", "G2", "G3", "G4"))
    stub = cats.get(str(FailureCategory.STUB), 0.0)
    external = cats.get(str(FailureCategory.EXTERNAL), 0.0)
    published = PUBLISHED_ZERO[FailureCategory.MISMATCH]
    side = "above" if broad > published else "below"
    closeness = ("close to" if abs(broad - published) < 0.05 else
                 f"{abs(broad - published) * 100:.1f} points {side}")
    share_of_gap = ("most of the gap is" if (broad - mismatch) > (published - mismatch) / 2
                    else "only part of the gap is")
    gap = max(FAILURE_PATTERNS_LOW, key=lambda m: abs(modes.get(m, 0) - FAILURE_PATTERNS_LOW[m]))
    return " ".join([
        f"Of {zero['n']:,} zero-scored claims we read {mismatch:.1%} as an implementation "
        f"mismatch, against the published {published:.1%}. Our mismatch needs the reasoning to "
        f"say that the code differs (another value, formula or order); a zero whose reason is "
        f"that the cited code is generic or unrelated, or covers only part of the claim, is "
        f"missing or partial for us. Reading every 'something is there, but not the claimed "
        f"thing' reason as a mismatch (value or mechanism differs, partial, unrelated code) "
        f"gives {broad:.1%}, {closeness} the published share, so {share_of_gap} one of "
        f"definition.",
        f"{gates:.1%} of the zeros are gate texts (retrieval found no usable evidence and the "
        f"LLM never saw the claim); we count them as missing, and they hold no information "
        f"about stubs or mismatches.",
        f"Stubs and placeholders, synthetic stand-in data included: {stub:.1%} against "
        f"{PUBLISHED_ZERO[FailureCategory.STUB]:.1%}. A zero's reason seldom names a stub (the "
        f"judge says 'no implementation' and gives stubs 0.25 more often), so a share that large "
        f"needs a reading of the code itself, as our stub detector does, not of the reason.",
        f"External dependencies: {external:.1%} against "
        f"{PUBLISHED_ZERO[FailureCategory.EXTERNAL]:.1%}. We count a zero as external only when "
        f"the claim is absent and a negated sentence names weights, an API, a simulator or a "
        f"human study; {zero['external_mentions']:.1%} of zero reasons mention such a resource at "
        f"all, so a broader reading of 'external knowledge' (details of baselines or libraries "
        f"the paper does not give) probably lies behind the published figure.",
        f"Over all {low['n']:,} low verdicts our modes reproduce failure-patterns.md's shares "
        f"within {abs(modes.get(gap, 0) - FAILURE_PATTERNS_LOW[gap]) * 100:.1f} points; the "
        f"largest gap is {gap} ({MODE_NAMES[gap]}: {modes.get(gap, 0):.1%} against "
        f"{FAILURE_PATTERNS_LOW[gap]:.1%}), from cue lists that the note gives only abridged.",
    ])
