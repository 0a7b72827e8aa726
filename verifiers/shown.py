"""Facts about the two windows the official LLM judge is shown for a claim.

The official judge scores a claim from its text and the first two code/config windows of its
evidence search (`official_search`), nothing else. These facts describe how well those ~16 lines
carry the claim: its terms (plain, rare in the repository, rare in the paper), its numbers
(present, bound to a name), its phrases written as identifiers (`warmup steps` →
`warmup_steps`), the terms of its title on executable lines, its subscripted symbols as code
names (`W_O` → `w_o`), stub markers, and how much of the windows talks about the claim at all.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from sabench.verifiers.index import RepoIndex
from sabench.verifiers.numbers import distinctive_numbers, number_keys
from sabench.verifiers.official_search import Item, path_kind
from sabench.verifiers.terms import term_set

_STUB_MARKER = re.compile(
    r"placeholder|todo|fixme|not ?implemented|NotImplementedError|dummy|mock|simplif|for now|"
    r"stub|zeros_like|random\.(?:rand|randn)|torch\.rand|np\.random\.rand|^\s*pass\s*$|"
    r"return None\s*$|^\s*\.\.\.\s*$|in practice|would be|assume", re.IGNORECASE | re.MULTILINE)
_ASSIGNMENT = re.compile(r"^\s*[\"']?[A-Za-z_][\w.\-\[\]\"']*[\"']?\s*(?::|=|:=)\s*[^=]")
_TITLE = re.compile(r"^([^:=\n]{3,80}?)(?::|\s[-–—]\s|\()")
_SYMBOL = re.compile(r"\\?([A-Za-z]+)_\{?\\?([A-Za-z0-9]+(?:_\{?[A-Za-z0-9]+\}?)?)\}?")
_WORD = re.compile(r"[a-z][a-z0-9]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_TRAILING_COMMENT = re.compile(r"\s#\s|\s//\s")
_CONFIG_COMMENT = re.compile(r"\s#.*")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_ASSIGNED = re.compile(r"^\s*(?:self\.)?([A-Za-z_][\w.]*)\s*(?:\[[^\]]*\])?\s*(?::[^=]*)?"
                       r"(?:=|\+=|-=|\*=|/=)\s*[^=]")
_CONFIG_KEY = re.compile(r"^\s*[\"']?([A-Za-z_][\w.\-]*)[\"']?\s*:\s*\S")
_DEFINED = re.compile(r"^(.{1,80}?)\s*(?:=|:)\s")  # a claim that defines `name = value`

# The operations a claim can name, with the calls that implement them. Words of up to four
# letters must stand alone (`log`, not `logits`); symbols match as written.
_OPERATIONS: dict[str, tuple[str, ...]] = {
    "exp": ("exp",), "exponential": ("exp",),
    "log": ("log", "log_softmax", "logsumexp", "log1p"), "logarithm": ("log",),
    "softmax": ("softmax", "log_softmax"), "sum": ("sum",), "Σ": ("sum",), "∑": ("sum",),
    "mean": ("mean",), "average": ("mean",), "expectation": ("mean",),
    "max": ("max", "maximum", "amax"), "maximum": ("max", "maximum"),
    "min": ("min", "minimum", "amin"), "minimum": ("min", "minimum"),
    "sqrt": ("sqrt",), "√": ("sqrt",), "norm": ("norm", "normalize"), "||": ("norm",),
    "sigmoid": ("sigmoid",), "σ": ("sigmoid",), "tanh": ("tanh",), "relu": ("relu",),
    "gelu": ("gelu",), "argmax": ("argmax",), "argmin": ("argmin",), "top-k": ("topk",),
    "topk": ("topk",), "concat": ("cat", "concat", "concatenate"),
    "concatenate": ("cat", "concat", "concatenate"),
    "concatenation": ("cat", "concat", "concatenate"), "clip": ("clip", "clamp"),
    "clamp": ("clamp", "clip"), "abs": ("abs",), "sign": ("sign",), "variance": ("var",),
    "std": ("std",), "cosine": ("cos", "cosine_similarity"), "cos": ("cos",), "sin": ("sin",),
    "matmul": ("matmul",), "dropout": ("dropout",), "layernorm": ("layer_norm", "layernorm"),
    "kl": ("kl_div", "kl"), "cross-entropy": ("cross_entropy", "crossentropyloss"),
    "cross entropy": ("cross_entropy", "crossentropyloss"), "mse": ("mse_loss", "mseloss"),
    "cumsum": ("cumsum",), "sort": ("sort", "argsort"), "gather": ("gather",),
    "mask": ("masked_fill", "where"), "interpolat": ("interpolate", "lerp"),
}
_SYMBOLS = ("||", "Σ", "∑", "σ", "√")
_SHORT_WORD = {w: re.compile(rf"(?<![a-z]){re.escape(w)}(?![a-z])")
               for w in _OPERATIONS if len(w) <= 4 and w not in _SYMBOLS}


class ShownWindows(BaseModel):
    """How the two shown windows cover a claim (shares are in [0, 1])."""

    model_config = ConfigDict(frozen=True)

    windows: int = 0
    terms: float = 0.0  # share of the claim's terms in the windows
    repo_rare_terms: float = 0.0  # the same, terms weighted by rarity across repository files
    paper_rare_terms: float = 0.0  # the same, terms weighted by rarity across the paper's claims
    numbers: float = 0.0  # share of the claim's distinctive numbers in the windows
    bound_numbers: float = 0.0  # ... on a `name = value` or `name: value` line
    bigrams: float = 0.0  # share of the claim's word pairs written as one identifier
    title_terms: float = 0.0  # share of the claim title's terms on executable lines
    symbols: float = 0.0  # share of the claim's subscripted symbols named in code
    stub_markers: int = 0
    same_file: bool = False
    density: float = 0.0  # share of non-blank window lines holding a claim term
    operations: float = 0.0  # share of the operations the claim names (exp, softmax, ...) called
    assigned_name: float = 0.0  # how much of the claim's defined name (`lr = ...`) is assigned


@dataclass(frozen=True)
class PaperTerms:
    """How rare each term is among one paper's claims (common words of the paper weigh little).

    Build once per paper with `PaperTerms.of(texts)`.
    """

    idf: dict[str, float]
    unseen: float

    @classmethod
    def of(cls, texts: Sequence[str]) -> PaperTerms:
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(term_set(text))
        n = len(texts)
        return cls({t: math.log((n + 1) / (df + 0.5)) for t, df in counts.items()},
                   math.log(n + 1))

    def weight(self, term: str) -> float:
        return self.idf.get(term, self.unseen)


def repo_file_rarity(index: RepoIndex, term: str) -> float:
    """log((N + 1) / (df + 1)) over the repository's N code and config files."""
    return math.log((len(_code_config_files(index)) + 1) / (_file_count(index, term) + 1))


def in_repo_code(index: RepoIndex, term: str) -> bool:
    """Whether any code or config file of the repository holds `term`."""
    return _file_count(index, term) > 0


def _file_count(index: RepoIndex, term: str) -> int:
    """In how many code and config files of the repository `term` occurs (cached)."""
    cache = index.cache.setdefault("term_file_count", {})
    count = cache.get(term)
    if count is None:
        files = _code_config_files(index)
        owner = index.global_file
        count = cache[term] = len({owner[g] for g in index.term_lines.get(term, ())} & files)
    return count


def _code_config_files(index: RepoIndex) -> frozenset[str]:
    files = index.cache.get("code_config_files")
    if files is None:
        files = index.cache["code_config_files"] = frozenset(
            f for f in index.files if path_kind(f) in ("code", "config"))
    return files


def shown_windows(index: RepoIndex, text: str, shown: Sequence[Item],
                  paper: PaperTerms | None = None) -> ShownWindows:
    """The facts of the windows `shown` for the claim `text` (see `ShownWindows`)."""
    if not shown:
        return ShownWindows()
    facts = [_window_facts(index, item) for item in shown]
    joined = "\n".join(item.snippet for item in shown)
    claim_terms = term_set(text)
    window_terms = set().union(*(term_set(item.snippet) for item in shown))
    matched = claim_terms & window_terms
    executable = "\n".join(f.executable for f in facts)
    keys = _claim_numbers(text)
    window_numbers = set().union(*(_numbers(item.snippet) for item in shown))
    paper = paper or PaperTerms.of([text])
    return ShownWindows(
        windows=len(shown),
        terms=_share(len(matched), len(claim_terms)),
        repo_rare_terms=_weighted(claim_terms, matched, lambda t: repo_file_rarity(index, t)),
        paper_rare_terms=_weighted(claim_terms, matched, paper.weight),
        numbers=_share(len(keys & window_numbers), len(keys)),
        bound_numbers=_share(len(_bound(joined, keys)), len(keys)),
        bigrams=_bigrams(text, "".join(f.flat for f in facts)),
        title_terms=_title_terms(text, frozenset().union(*(f.terms for f in facts))),
        symbols=_symbols(text, set().union(*(f.names for f in facts))),
        stub_markers=sum(f.stub_markers for f in facts),
        same_file=len(shown) == 2 and shown[0].file == shown[1].file,
        density=_density(joined, claim_terms),
        operations=_operations_called(text, _calls(facts, executable)),
        assigned_name=_assigned_name(text, executable))


@dataclass(frozen=True)
class _WindowFacts:
    """The claim-independent facts of one shown window (computed once per repository: the
    same windows are shown for many claims)."""

    executable: str  # code without comments and docstrings, config values without comments
    terms: frozenset[str]  # terms of the executable text
    names: frozenset[str]  # identifiers of the executable text, underscores dropped
    calls: frozenset[str]  # names called in the executable text, lower-case
    flat: str  # the snippet lower-cased with everything but letters and digits dropped
    stub_markers: int


def snippet_terms(index: RepoIndex, items: Sequence[Item]) -> set[str]:
    """The terms of the snippets of items from this index's search, from its per-line term sets
    (a term never spans two lines, and such a snippet is its file's lines `start`..`end`)."""
    return set().union(*(line for item in items
                         for line in index.line_terms[item.file][item.start - 1:item.end]))


def _window_facts(index: RepoIndex, item: Item) -> _WindowFacts:
    cache = index.cache.setdefault("shown_window_facts", {})
    key = (item.file, item.kind, item.snippet)  # the snippet itself: exact for any caller
    facts = cache.get(key)
    if facts is None:
        executable = _executable(item)
        facts = cache[key] = _WindowFacts(
            executable=executable,
            terms=term_set(executable) if executable else frozenset(),
            names=frozenset(t.replace("_", "") for t in _IDENTIFIER.findall(executable.lower())),
            calls=frozenset(name.lower() for name in _CALL.findall(executable)),
            flat=_NOT_ALNUM.sub("", item.snippet.lower()),
            stub_markers=len(_STUB_MARKER.findall(item.snippet)))
    return facts


def _calls(facts: list[_WindowFacts], executable: str) -> frozenset[str]:
    """The names the windows call; a call split across the two windows (`name` ending one,
    `(` starting the next) is only seen in the joined text."""
    if any(f.executable.lstrip().startswith("(") for f in facts[1:]):
        return frozenset(name.lower() for name in _CALL.findall(executable))
    return frozenset().union(*(f.calls for f in facts))


@lru_cache(maxsize=4096)
def _claim_numbers(text: str) -> frozenset[str]:
    return frozenset(n.key for n in distinctive_numbers(text))


@lru_cache(maxsize=50_000)
def _numbers(text: str) -> frozenset[str]:
    """Number keys of a window or line (cached: windows recur across claims)."""
    return frozenset(number_keys(text))


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _weighted(terms: frozenset[str], matched: set[str], weight) -> float:
    """The share of the terms' total weight that `matched` (a subset of them) carries. fsum is
    exactly rounded, so the result does not depend on set order (hash seed)."""
    weights = {t: weight(t) for t in terms}
    total = math.fsum(weights.values())
    return math.fsum(weights[t] for t in matched) / total if total else 0.0


def _bound(text: str, keys: frozenset[str]) -> set[str]:
    bound: set[str] = set()
    if not keys:
        return bound
    for line in text.split("\n"):
        if _ASSIGNMENT.match(line):
            bound |= keys & _numbers(line)
    return bound


def _bigrams(text: str, window: str) -> float:
    """Share of the claim's adjacent word pairs that the windows write as one identifier."""
    words = _WORD.findall(text.lower())
    pairs = {(a, b) for a, b in zip(words, words[1:], strict=False) if len(a) > 2 and len(b) > 2}
    if not pairs:
        return 0.0
    flat = _NOT_ALNUM.sub("", window.lower())
    return sum((a + b) in flat for a, b in pairs) / len(pairs)


def _title_terms(text: str, executable_terms: frozenset[str]) -> float:
    """Share of the terms of the claim's title (its text before `:`, ` - ` or `(`, else its
    first six words) found on executable lines of the windows."""
    m = _TITLE.match(text)
    title = term_set(m.group(1) if m else " ".join(text.split()[:6]))
    return _share(len(title & executable_terms), len(title))


def _symbols(text: str, names: set[str]) -> float:
    """Share of the claim's subscripted symbols (`W_{O}`, `s_z`) named in executable code,
    underscores and braces dropped (`W_O` → `wo` matches `w_o`); `names` are the code's
    identifiers with underscores dropped."""
    symbols = {(a + b).replace("_", "").replace("{", "").replace("}", "").lower()
               for a, b in _SYMBOL.findall(text)}
    symbols = {s for s in symbols if len(s) >= 2}
    if not symbols:
        return 0.0
    return sum(s in names for s in symbols) / len(symbols)


@lru_cache(maxsize=4096)
def claim_operations(text: str) -> frozenset[tuple[str, ...]]:
    """The operations `text` names, each as the call names that would implement it."""
    low = text.lower()
    found = set()
    for word, calls in _OPERATIONS.items():
        if word in _SYMBOLS:
            hit = word in text
        elif word in _SHORT_WORD:
            hit = _SHORT_WORD[word].search(low) is not None
        else:
            hit = word in low
        if hit:
            found.add(calls)
    return frozenset(found)


def _operations_called(text: str, calls: frozenset[str]) -> float:
    """Share of the operations the claim names that the windows' code calls (`calls`,
    lower-case)."""
    operations = claim_operations(text)
    if not operations:
        return 0.0
    return sum(any(c in calls for c in group) for group in operations) / len(operations)


def _assigned_name(text: str, executable: str) -> float:
    """For a claim that defines a name (`learning rate = 3e-4`, `Loss: ...`), the best share
    of that name's terms on the left of one assignment or config key in the windows."""
    m = _DEFINED.match(text)
    name = term_set(m.group(1)) if m else frozenset()
    best = 0.0
    if not name:
        return best
    for line in executable.split("\n"):
        target = _ASSIGNED.match(line) or _CONFIG_KEY.match(line)
        if target:
            terms = term_set(target.group(1))
            if terms:
                best = max(best, len(name & terms) / len(name))
    return best


def _density(text: str, claim_terms: frozenset[str]) -> float:
    lines = [line for line in text.split("\n") if line.strip()]
    return _share(sum(bool(term_set(line) & claim_terms) for line in lines), len(lines))


def _executable(item: Item) -> str:
    """The window's executable text: code without comments and docstrings; config values
    without comments."""
    if item.kind == "config" and not item.file.endswith(".py"):
        return _CONFIG_COMMENT.sub("", item.snippet)
    out: list[str] = []
    in_doc = False
    for raw in item.snippet.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if in_doc:
            in_doc = '"""' not in line and "'''" not in line
            continue
        if line.startswith(('"""', "'''", 'r"""')):
            quote = '"""' if '"""' in line else "'''"
            in_doc = line.count(quote) == 1
            continue
        if line.startswith(("#", "//", "/*", "*", "--")):
            continue
        m = _TRAILING_COMMENT.search(raw)
        out.append(raw[:m.start()] if m else raw)
    return "\n".join(out)
