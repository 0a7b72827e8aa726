"""What the official SA-Bench judge sees: an emulation of its deterministic evidence search.

The official judge does not read the repository. For each claim a fixed, deterministic search
(three rounds of substring and regex greps, a config-key search, then the definitions of the
functions the hits call) collects 8-line windows, ranks them by a hand-made relevance score and
keeps 8. Four gates then give 0 without asking the LLM (no code/config evidence; an
experiment-parameter claim none of whose numbers appears in the code evidence; no strong,
non-stub evidence; a theory-style claim with a single strong item). Otherwise the LLM is shown
the claim and only the first **two** code/config windows.

So the offline judge can do far better by looking where the official judge looked. This module
re-implements that search from the published protocol's facts (queries, limits, relevance
labels, ranking weights, gates), on the repository index and with every grep answered by
`str.find` on one lower-cased text per repository (results cached per query), so that a whole
repository takes a fraction of a second instead of several seconds.

Known differences: the official search visits files in the order of the machine's directory
listing, which is not recorded; here folders are visited top-down in sorted order. This only
matters when a grep hits its match limit (common words).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim, Dimension

WINDOW_BEFORE = 2  # a hit at line n gives the window n-2 .. n+5 (8 lines)
WINDOW_AFTER = 5
KEEP = 8  # windows kept per claim
SHOWN = 2  # code/config windows the LLM is shown

# Folders the official search never enters (beyond what the index skips).
_SKIP_PARTS = {".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", "__pycache__", "node_modules",
               ".venv", "venv", "dist", "build", "result", "results", "outputs"}
_CODE_EXT = (".py", ".js", ".ts", ".tsx", ".jsx", ".cpp", ".cc", ".c", ".h", ".hpp", ".cu", ".jl")
_CONFIG_EXT = (".yaml", ".yml", ".toml", ".ini", ".cfg")
_CONFIG_SEARCH_EXT = {".py", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg"}
_CONFIG_NAME_HINTS = ("config", "arg", "param", "hyper", "train", "setting")

_STOPWORDS = {"the", "and", "for", "with", "from", "that", "this", "where", "which", "into",
              "during", "against", "between", "through", "across", "section", "appendix",
              "table", "figure", "claim", "model", "method", "using", "uses", "used"}
_QUERY_STOPWORDS = _STOPWORDS | {"must", "step"}
_QUERY_SYMBOLS = {"β": "beta", "α": "alpha", "σ": "sigma", "λ": "lambda", "ε": "epsilon",
                  "θ": "theta", "∇": "grad", "×": "x", "−": "-", "–": "-", "—": "-", "²": "2"}
_RANK_SYMBOLS = {"β": "beta", "α": "alpha", "σ": "sigma", "λ": "lambda", "ε": "epsilon",
                 "η": "eta", "θ": "theta", "∇": "grad", "×": "x", "−": "-", "²": "2"}
_HINTS = {
    Dimension.D1: ["lr", "learning_rate", "batch", "epoch", "weight_decay", "beta", "config"],
    Dimension.D2: ["loss", "forward", "norm", "score", "sigma", "drift", "gradient"],
    Dimension.D3: ["dataset", "dataloader", "train", "eval", "metric", "epoch", "augmentation"],
    Dimension.D4: ["pipeline", "phase", "trainer", "runner", "forward", "step", "schedule"],
}
# Round two's dimension regexes, e.g. `(lr|learning[_-]?rate|...)`, as the literal words they
# match: a line matches when it holds any of them (searched without a regex engine).
_HINT_REGEX = {
    Dimension.D1: ("lr", *(f"{a}{sep}{b}" for a, b in (("learning", "rate"), ("batch", "size"),
                                                       ("weight", "decay"))
                          for sep in ("", "_", "-")), "epoch", "seed"),
    Dimension.D2: ("loss", "norm", "sigma", "alpha", "beta", "score", "gradient", "drift",
                   "control"),
    Dimension.D3: ("dataset", "dataloader", "metric", "evaluate", "ablation", "augmentation",
                   "epoch"),
    Dimension.D4: ("pipeline", "phase", "trainer", "runner", "workflow", "schedule", "step"),
}
_FALLBACK = {
    Dimension.D1: [r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", r"(config|args|param|hyper)"],
    Dimension.D2: [r"(loss|forward|sigma|alpha|beta|norm|grad)", r"(torch|numpy|jax)\."],
    Dimension.D3: [r"(train|eval|dataset|metric|epoch)", r"(DataLoader|Trainer|evaluate)"],
    Dimension.D4: [r"(pipeline|phase|runner|trainer|workflow)", r"(class|def)\s+\w+"],
}
_FORMULA_WORDS = ("sigma", "alpha", "beta", "epsilon", "lambda", "score", "norm", "grad")
_MATH_TERMS = {"sqrt", "sigma", "alpha", "beta", "eta", "epsilon", "lambda", "grad", "norm",
               "loss", "mse", "drift", "control", "velocity", "adjoint", "schedule",
               "memoryless", "reward", "guidance", "forward"}
_EXPERIMENT_WORDS = ("experiment", "simulation", "setup", "figure", "appendix c", "state/action",
                     "transition kernel", "reward variance", "training iterations", "run for",
                     "varying state", "varying reward", "varying transition")
_THEORY_WORDS = ("theorem", "lemma", "proof", "convergence", "bound", "smoothness", "sublinear",
                 "exponential", "optimal")
_STUB_MARKERS = ("placeholder", "stub", "todo", "to do", "replace with", "not implemented",
                 "skeleton", "dummy", "pass #", "np.zeros_like", "zeros_like", "return 0",
                 "return none")
# Relevance of a window by the kind of query that found it; a window found twice keeps the
# strongest. `_RANK_BONUS` is what the relevance adds to the window's ranking score.
_STRENGTH = {"direct": 5, "config": 4, "semantic": 3, "supporting": 2, "weak": 1}
_KIND_SCORE = {"code": 20, "config": 16, "docs": -20, "test": -20}
_RANK_BONUS = {"direct": 16, "config": 12, "semantic": 8, "supporting": 4, "weak": 0}
STRONG = {"direct", "config", "semantic"}

_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![A-Za-z])", re.IGNORECASE)
_RESOLUTION = re.compile(r"\b(\d{2,5})\s*[x×]\s*(\d{2,5})\b", re.IGNORECASE)
_PHRASE = re.compile(r"[A-Z][A-Za-z0-9]*(?:[- ][A-Z0-9][A-Za-z0-9]*){1,4}")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{2,}")
_RANK_TOKEN = re.compile(r"[a-z][a-z0-9_+-]{2,}")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_DEF = re.compile(r"\b(def|class)\s+[A-Za-z_][A-Za-z0-9_]*")
_CONTROL = re.compile(r"\b(def|class|for|while|return|if)\b")
_PLAIN_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_DEF_WORD = re.compile(r"\b(def|class)\b")
_OPENS_WITH_PAREN = re.compile(r"\s*\(")
_NO_CALLS: tuple[frozenset[str], bool] = (frozenset(), False)  # a line without `(`
_DEF_AT_END = re.compile(r"\b(def|class)\s*$")  # may be continued on the next line
_WORD_PARTS = re.compile(r"[_+-]+")
_DIGIT = re.compile(r"\d")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_DEF_BEFORE = re.compile(r"(?:def|class)\s+$")
_WORD_CHAR = re.compile(r"\w")
_NOT_LOOKED_UP = frozenset({"range", "print", "super"})  # calls round three never looks up


@lru_cache(maxsize=65536)
def path_kind(path: str) -> str:
    """The official kind of a file: test, code, config, docs or other (by its path only)."""
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    if low.endswith(("_test.py", ".test.py")) or "/tests/" in low or name.startswith("test"):
        return "test"
    if low.endswith(_CODE_EXT):
        return "code"
    if low.endswith(_CONFIG_EXT) or "config" in name or "args" in name:
        return "config"
    if low.endswith((".md", ".rst", ".txt")) or "readme" in name or "docs" in low:
        return "docs"
    return "other"


@dataclass(slots=True)
class Item:
    """One evidence window as the official search keeps it (treat as read-only)."""

    file: str
    start: int
    end: int
    relevance: str
    kind: str
    snippet: str
    stub: bool = field(default=False, repr=False, compare=False)

    @property
    def ref(self) -> str:
        return f"{self.file}:{self.start}-{self.end}"

    @property
    def direct(self) -> bool:
        """Code or config: the only kinds the gates and the LLM look at."""
        return self.kind in ("code", "config")


@dataclass(slots=True, eq=False)  # one object per window and repository: hashed by identity
class _Window:
    """A window's claim-independent facts, computed once per repository."""

    file: str
    start: int
    end: int
    kind: str
    snippet: str
    haystack: str  # normalised path and text, for the ranking's substring tests
    base_score: int  # the ranking score's claim-independent part
    basename: str
    order: tuple[str, str]  # tie-break: file, then "start-end" as text
    calls: frozenset[str] | None = None  # see `OfficialSearch._calls`

    def item(self, relevance: str) -> Item:
        return Item(self.file, self.start, self.end, relevance, self.kind, self.snippet)


@dataclass(frozen=True)
class SearchResult:
    """The official judge's view of one claim: kept windows, gate (if any), windows shown."""

    items: tuple[Item, ...]
    gate: str | None  # "no_evidence", "no_numbers", "weak", "theory" or None (LLM judged)

    @property
    def shown(self) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.direct)[:SHOWN]

    @property
    def strong(self) -> tuple[Item, ...]:
        return tuple(i for i in self.items if _strong(i))


# ------------------------------------------------------------------ the searchable text
@dataclass
class _Text:
    """Lower-cased lines of a set of files joined into one string, with line offsets."""

    blob: str
    starts: list[int]  # offset of each global line
    where: list[tuple[str, int]]  # (file, 1-based line) of each global line

    @classmethod
    def of(cls, index: RepoIndex, files: list[str]) -> _Text:
        parts: list[str] = []
        starts: list[int] = []
        where: list[tuple[str, int]] = []
        offset = 0
        for rel in files:
            for n, line in enumerate(index.files[rel].lines, start=1):
                low = line.lower()
                starts.append(offset)
                where.append((rel, n))
                parts.append(low)
                offset += len(low) + 1
        return cls("\n".join(parts), starts, where)

    def line_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def next_line(self, line: int) -> int:
        return self.starts[line + 1] if line + 1 < len(self.starts) else len(self.blob) + 1

    def find(self, needle: str, limit: int) -> list[int]:
        """Global lines holding `needle` (already lower-case), at most `limit`."""
        out: list[int] = []
        if not needle:
            return out
        find, starts = self.blob.find, self.starts  # locals: this loop runs per hit
        last, end = len(starts) - 1, len(self.blob) + 1
        pos = find(needle)
        while pos >= 0 and len(out) < limit:
            line = bisect_right(starts, pos) - 1
            out.append(line)
            pos = find(needle, starts[line + 1] if line < last else end)
        return out

    def find_pair(self, first: str, second: str, limit: int) -> list[int]:
        """Global lines where `second` follows `first` (the official `a.*b` regexes)."""
        out: list[int] = []
        find, starts = self.blob.find, self.starts
        last, blob_end = len(starts) - 1, len(self.blob) + 1
        pos = find(first)
        while pos >= 0 and len(out) < limit:
            line = bisect_right(starts, pos) - 1
            end = (starts[line + 1] if line < last else blob_end) - 1
            if find(second, pos + len(first), end) >= 0:
                out.append(line)
            pos = find(first, end + 1)
        return out

    def find_definition(self, name: str, limit: int) -> list[int]:
        """Global lines matching `(def|class)\\s+name\\b`, found by the name (no regex
        compiled per name: a repository asks for hundreds)."""
        out: list[int] = []
        pos = self.blob.find(name) if name else -1
        while pos >= 0 and len(out) < limit:
            line = self.line_at(pos)
            end = self.next_line(line) - 1
            at = pos
            while 0 <= at < end:
                after = self.blob[at + len(name):at + len(name) + 1]
                if (not after or not _WORD_CHAR.match(after)) and _DEF_BEFORE.search(
                        self.blob, self.starts[line], at):
                    out.append(line)
                    break
                at = self.blob.find(name, at + 1, end)
            pos = self.blob.find(name, end + 1)
        return out

    def find_any(self, needles: list[str], limit: int) -> list[int]:
        """Global lines holding any of `needles` (case-insensitive), first `limit` in order.

        Each of the first `limit` such lines is among the first `limit` lines of a needle it
        holds, so no needle is searched further than that."""
        lines: set[int] = set()
        for needle in needles:
            lines.update(self.find(needle.lower(), limit))
        return sorted(lines)[:limit]

    def search(self, pattern: re.Pattern[str], limit: int) -> list[int]:
        out: list[int] = []
        pos = 0
        while len(out) < limit:
            m = pattern.search(self.blob, pos)
            if m is None:
                break
            line = self.line_at(m.start())
            out.append(line)
            pos = self.next_line(line)
        return out


def _walk_key(path: str) -> tuple[tuple[int, str], ...]:
    """Top-down walk order: a folder's files before its subfolders, names sorted."""
    parts = path.split("/")
    return tuple((1, p) for p in parts[:-1]) + ((0, parts[-1]),)


# ------------------------------------------------------------------ queries
def _query_text(text: str) -> str:
    for src, dst in _QUERY_SYMBOLS.items():
        text = text.replace(src, dst)
    return text


def _rank_text(text: str) -> str:
    if text.isascii():  # the symbols are all non-ASCII: most windows need no replacing
        return text.lower()
    for src, dst in _RANK_SYMBOLS.items():
        text = text.replace(src, dst)
    return text.lower()


def _long_numbers(text: str) -> list[str]:
    return [n for n in _NUMBER.findall(text) if len(n) > 1]


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    """Claim words, longest and most code-like first (capitals +4, `_`/`-` +3)."""
    scored = []
    for token in _TOKEN.findall(text):
        low = token.lower().strip("_")
        if low in _QUERY_STOPWORDS or len(low) < 3:
            continue
        bonus = 4 * any(ch.isupper() for ch in token) + 3 * ("_" in token or "-" in token)
        scored.append((len(low) + bonus, low))
    return tuple(token for _, token in sorted(scored, reverse=True))


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in (i.strip() for i in items):
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def exact_queries(claim: Claim, limit: int = 12) -> list[str]:
    """Substring queries: resolutions, numbers, capitalised phrases, long words, hints."""
    return list(_exact_queries(claim, limit))


@lru_cache(maxsize=4096)  # a paper's claims are searched in every run of the paper
def _exact_queries(claim: Claim, limit: int) -> tuple[str, ...]:
    text = _query_text(claim.text)
    out: list[str] = []
    for w, h in _RESOLUTION.findall(claim.text):
        out += [f"{w}x{h}", f"{w}×{h}", w, h]
    for number in _long_numbers(text):
        out.append(number)
        if "e-" in number.lower():
            out.append(str(float(number)))
    out += [p.strip() for p in _PHRASE.findall(text) if len(p) <= 80]
    out += list(_tokens(text)[:10])
    if claim.dimension == Dimension.D2:
        out += [w for w in _FORMULA_WORDS if w in text.lower()]
    out += _HINTS[claim.dimension]
    return tuple(_unique(out)[:limit])


def regex_queries(claim: Claim, limit: int = 8) -> list[tuple[str, ...]]:
    """Round-two regexes, as ("pair", a, b) for `a.*b`, ("literal", s), or ("any", *words)
    for the dimension's hint regex (a line holding any of the words)."""
    return list(_regex_queries(claim, limit))


@lru_cache(maxsize=4096)
def _regex_queries(claim: Claim, limit: int) -> tuple[tuple[str, ...], ...]:
    tokens = _tokens(_query_text(claim.text))
    out: list[tuple[str, ...]] = [("pair", w, h) for w, h in _RESOLUTION.findall(claim.text)]
    out += [("pair", tokens[i], tokens[i + 1]) for i in range(min(4, len(tokens) - 1))]
    out += [("literal", n.lower()) for n in _long_numbers(claim.text)]
    out.append(("any", *_HINT_REGEX[claim.dimension]))
    seen: set[tuple[str, ...]] = set()
    unique = []
    for q in out:
        if q not in seen:
            seen.add(q)
            unique.append(q)
    return tuple(unique[:limit])


# ------------------------------------------------------------------ ranking and gates
def stub_like(snippet: str) -> bool:
    """A window the official gates do not count as strong: stub markers or little code."""
    low = snippet.lower()
    if any(marker in low for marker in _STUB_MARKERS):
        return True
    code = _code_lines(low)
    if len(code) <= 1 and any(_DEF_WORD.search(line) for line in code):
        return True
    return len(code) <= 3 and sum(bool(_CONTROL.search(line)) for line in code) <= 1


def _code_lines(text: str) -> list[str]:
    """Non-blank lines outside comments and (roughly tracked) docstrings."""
    out: list[str] = []
    in_doc = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        quotes = line.count('"""') + line.count("'''")
        if quotes:
            if quotes % 2:
                in_doc = not in_doc
            if line.startswith(('"""', "'''")) or line.endswith(('"""', "'''")):
                continue
        if not in_doc:
            out.append(line)
    return out


@dataclass
class _ClaimTerms:
    terms: set[str]
    numbers: list[str]
    math: set[str]

    @classmethod
    @lru_cache(maxsize=4096)
    def of(cls, claim: Claim) -> _ClaimTerms:
        norm = _rank_text(claim.text)
        words = {t for t in _RANK_TOKEN.findall(norm) if t not in _STOPWORDS}
        terms = set(words)
        for word in words:
            terms.update(p for p in _WORD_PARTS.split(word) if len(p) >= 3)
        numbers = [n.lower() for n in _NUMBER.findall(claim.text)]
        return cls(terms, numbers, {t for t in _MATH_TERMS if t in norm})


def _called(text: str) -> frozenset[str]:
    """Names called in `text` that round three looks up."""
    return frozenset(n for n in _CALLED.findall(text) if len(n) >= 4 and n not in _NOT_LOOKED_UP)


def window_score(file: str, kind: str, snippet: str, defines: bool) -> tuple[str, int]:
    """The claim-independent part of a window's ranking score, and its normalised text
    (`defines`: the snippet holds a `def`/`class` statement, see `OfficialSearch._defines`)."""
    hay = _rank_text(f"{file}\n{snippet}")
    score = _KIND_SCORE.get(kind, 0)
    if defines:
        score += 8
    if "pass" in hay or "placeholder" in hay or "todo" in hay:
        score -= 12
    return hay, score


def rank_scores(ct: _ClaimTerms, items: list[tuple[_Window, str]]) -> list[int]:
    """The official relevance score of each window for a claim (higher is shown first).

    Each term counts once per window it occurs in; the windows are searched together (one
    joined text, found positions mapped back to windows) rather than term by window.
    """
    texts = _Joined([w.haystack for w, _ in items])
    terms, numbers = texts.holding(ct.terms), texts.holding(ct.numbers)
    math = texts.holding(ct.math)
    in_name = {name: sum(t in name for t in ct.terms) for name in {w.basename for w, _ in items}}
    return [w.base_score + _RANK_BONUS.get(relevance, 2) + min(40, 4 * terms[i])
            + min(24, 6 * numbers[i]) + min(30, 5 * math[i]) + min(20, 5 * in_name[w.basename])
            for i, (w, relevance) in enumerate(items)]


class _Joined:
    """Texts joined with NUL separators, to count in one search which texts hold a needle."""

    def __init__(self, texts: list[str]) -> None:
        self.text = "\0".join(texts)
        self.n = len(texts)
        self.bounds: list[int] = []  # offset of each separator
        offset = -1
        for t in texts[:-1]:
            offset += len(t) + 1
            self.bounds.append(offset)

    def holding(self, needles: Iterable[str]) -> list[int]:
        """For each text, how many needles it contains (a needle listed twice counts twice)."""
        counts = [0] * self.n
        find, bounds = self.text.find, self.bounds  # locals: this loop runs per hit
        last = len(bounds)
        for needle in needles:
            pos = find(needle)
            while pos >= 0:
                i = bisect_right(bounds, pos)
                counts[i] += 1
                if i >= last:
                    break
                pos = find(needle, bounds[i] + 1)
        return counts


def _strong(item: Item) -> bool:
    """Code or config found by a direct, config or semantic query, and not stub-like."""
    return item.direct and item.relevance in STRONG and not item.stub


def _gate(claim: Claim, items: tuple[Item, ...], strong: int) -> str | None:
    direct = [i for i in items if i.direct]
    if not direct:
        return "no_evidence"
    context = f"{claim.text} {claim.source}".lower()
    if any(w in context for w in _EXPERIMENT_WORDS):
        numbers = {n for n in _PLAIN_NUMBER.findall(f"{claim.text} {claim.source}")
                   if len(n) > 1 or n not in {"1", "2"}}
        hay = [f"{i.file} {i.start}-{i.end} {i.snippet}".lower() for i in direct]
        if numbers and not any(n in h for n in numbers for h in hay):
            return "no_numbers"
    if not strong:
        return "weak"
    if any(w in claim.text.lower() for w in _THEORY_WORDS) and strong < 2:
        return "theory"
    return None


# ------------------------------------------------------------------ the search
@dataclass
class OfficialSearch:
    """The official evidence search over one repository (build once, query per claim)."""

    index: RepoIndex
    _all: _Text = field(init=False)
    _config: _Text = field(init=False)
    _cache: dict[tuple, tuple[int, list[tuple[str, int]]]] = field(default_factory=dict,
                                                                    init=False)
    _absent: set[str] = field(default_factory=set, init=False)  # needles no line holds
    _stubs: dict[tuple[str, int, int], bool] = field(default_factory=dict, init=False)
    _windows: dict[tuple[str, int, int], _Window] = field(default_factory=dict, init=False)
    _hit_windows: dict[tuple, list[_Window]] = field(default_factory=dict, init=False)
    _files: dict[str, tuple[str, str]] = field(default_factory=dict, init=False)
    _def_marks: dict[str, list[int]] = field(default_factory=dict, init=False)
    _call_marks: dict[str, list[tuple[frozenset[str], bool] | None]] = field(
        default_factory=dict, init=False)

    def __post_init__(self) -> None:
        files = sorted((f for f in self.index.files
                        if not _SKIP_PARTS.intersection(f.split("/")[:-1])), key=_walk_key)
        self._all = _Text.of(self.index, files)
        self._config = _Text.of(self.index, [f for f in files if _config_searchable(f)])

    def grep(self, query: tuple[str, ...], limit: int) -> list[tuple[str, int]]:
        """(file, line) hits of a query: ("exact", s), ("pair", a, b), ("literal", s),
        ("any", *words), ("regex", r), ("definition", name) or ("config", key), in walk order,
        at most `limit`."""
        # Every kind returns its first hits in walk order, so one answer serves any smaller
        # limit, and an answer short of its limit (all there is) serves any limit.
        cached = self._cache.get(query)
        if cached is not None and (limit <= cached[0] or len(cached[1]) < cached[0]):
            return cached[1][:limit]
        hits = self._grep(query, limit)
        self._cache[query] = (limit, hits)
        return hits

    def _grep(self, query: tuple[str, ...], limit: int) -> list[tuple[str, int]]:
        kind, arg = query[0], query[1]
        if kind in ("exact", "literal"):
            lines = self._all.find(arg.lower(), limit)
            if not lines and arg:
                self._absent.add(arg.lower())
        elif kind == "pair":
            first, second = arg.lower(), query[2].lower()
            lines = [] if first in self._absent or second in self._absent else (
                self._all.find_pair(first, second, limit))
        elif kind == "definition":
            lines = self._all.find_definition(arg.lower(), limit)
        elif kind == "any":
            lines = self._all.find_any(list(query[1:]), limit)
        elif kind == "config":
            parts = [p for p in _NOT_ALNUM.split(arg) if len(p) >= 2] or [arg]
            return [self._config.where[n] for n in self._config.find_any(parts, limit)]
        else:
            lines = self._all.search(re.compile(arg, re.IGNORECASE), limit)
        return [self._all.where[n] for n in lines]

    def collect(self, claim: Claim) -> SearchResult:
        """The windows the official search keeps for `claim`, and its gate."""
        found: dict[_Window, str] = {}  # window -> strongest relevance that found it
        queries = exact_queries(claim)
        for q in queries[:5]:
            strong = bool(_DIGIT.search(q)) or len(q.split()) >= 2
            self._add(found, ("exact", q), 30, "direct" if strong else "supporting")
        for q in queries[:4]:
            self._add(found, ("config", q), 20, "config")
        for rq in regex_queries(claim):
            self._add(found, rq, 30, "semantic")
        for q in queries[5:10]:
            self._add(found, ("exact", q), 20, "supporting")
        if not found:
            for rx in _FALLBACK[claim.dimension]:
                self._add(found, ("regex", rx), 25, "weak")
                if found:
                    break
        self._add_definitions(found)
        items = select(claim, list(found.items()))
        for item in items:  # only kept windows need the (costlier) stub check
            item.stub = self._stub(item)
        strong = sum(1 for i in items if _strong(i))
        return SearchResult(items, _gate(claim, items, strong))

    def _add(self, found: dict[_Window, str], query: tuple[str, ...], limit: int,
             relevance: str) -> None:
        """Record the windows around the query's hits (docs and tests left out)."""
        strength = _STRENGTH[relevance]
        for window in self._query_windows(query, limit):
            old = found.get(window)
            if old is None or strength > _STRENGTH[old]:
                found[window] = relevance

    def _query_windows(self, query: tuple[str, ...], limit: int) -> list[_Window]:
        key = (*query, limit)
        windows = self._hit_windows.get(key)
        if windows is None:
            windows = self._hit_windows[key] = [
                self._window(file, line) for file, line in self.grep(query, limit)
                if self._file_facts(file)[0] not in ("docs", "test")]
        return windows

    def _stub(self, item: Item) -> bool:
        key = (item.file, item.start, item.end)
        if key not in self._stubs:
            self._stubs[key] = stub_like(item.snippet)
        return self._stubs[key]

    def _window(self, file: str, line: int) -> _Window:
        start, end = max(1, line - WINDOW_BEFORE), line + WINDOW_AFTER
        window = self._windows.get((file, start, end))
        if window is None:
            kind, basename = self._file_facts(file)
            snippet = "\n".join(self.index.files[file].lines[start - 1:end])
            hay, base_score = window_score(file, kind, snippet,
                                           self._defines(file, start, end, snippet))
            window = self._windows[(file, start, end)] = _Window(
                file, start, end, kind, snippet, hay, base_score, basename,
                (file, f"{start}-{end}"))
        return window

    def _defines(self, file: str, start: int, end: int, snippet: str) -> bool:
        """Whether `_DEF` matches the window's snippet, from per-line marks made once per file
        (windows overlap: most lines are in several)."""
        marks = self._def_marks.get(file)
        if marks is None:
            marks = self._def_marks[file] = [
                1 if _DEF.search(line) else 2 if _DEF_AT_END.search(line) else 0
                for line in self.index.files[file].lines]
        in_window = marks[start - 1:end]
        if 1 in in_window:
            return True
        # `\s+` crosses lines: a `def` ending a line may name its function on the next one.
        return 2 in in_window[:-1] and _DEF.search(snippet) is not None

    def _calls(self, window: _Window) -> frozenset[str]:
        """The names a window calls that round three looks up: read on first use (windows
        only round three finds never need them), from per-line names kept per file (windows
        overlap: most lines are in several)."""
        if window.calls is None:
            lines = self.index.files[window.file].lines
            marks = self._call_marks.setdefault(window.file, [None] * len(lines))
            names: set[str] = set()
            for i in range(window.start - 1, min(window.end, len(lines))):
                if marks[i] is None:
                    line = lines[i]
                    marks[i] = _NO_CALLS if "(" not in line else (
                        _called(line), bool(_OPENS_WITH_PAREN.match(line)))
                line_names, opens_with_paren = marks[i]
                if opens_with_paren and i > window.start - 1:
                    # `\s*\(` crosses lines: a call may name its function on an earlier line.
                    names = set(_called(window.snippet))
                    break
                names |= line_names
            window.calls = frozenset(names)
        return window.calls

    def _file_facts(self, file: str) -> tuple[str, str]:
        """A file's official kind and its name as the ranking reads it (cached per file)."""
        facts = self._files.get(file)
        if facts is None:
            facts = self._files[file] = (
                path_kind(file), PurePosixPath(file).stem.lower().replace("_", " "))
        return facts

    def _add_definitions(self, found: dict[_Window, str]) -> None:
        """Round three: the definitions of functions the windows call (relevance direct)."""
        # Known calls read inline: this runs for every window found for every claim.
        names = set().union(*(window.calls if window.calls is not None else self._calls(window)
                              for window in found))
        for name in sorted(names)[:6]:
            self._add(found, ("definition", name), 10, "direct")


def select(claim: Claim, found: list[tuple[_Window, str]]) -> tuple[Item, ...]:
    """Rank windows by the official score, drop ones overlapping a better window, keep 8."""
    scores = rank_scores(_ClaimTerms.of(claim), found)
    order = sorted(range(len(found)), key=lambda i: (-scores[i], found[i][0].order))
    kept: list[Item] = []
    for i in order:
        window, relevance = found[i]
        if not any(k.file == window.file and window.start <= k.end and k.start <= window.end
                   for k in kept):
            kept.append(window.item(relevance))
        if len(kept) == KEEP:
            break
    return tuple(kept)


def _config_searchable(path: str) -> bool:
    p = PurePosixPath(path)
    suffix = p.suffix.lower()
    if suffix not in _CONFIG_SEARCH_EXT:
        return False
    return suffix != ".py" or any(h in p.name.lower() for h in _CONFIG_NAME_HINTS)
