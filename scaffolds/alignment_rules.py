"""Deterministic rules of the alignment check: what makes a claim fail, whatever its score.

Each rule looks at one claim in an indexed repository and returns findings: a reason a repair
can act on, and where (`file:line`). The rules target the failure modes that cost the most
points on SA-Bench (see the project's failure taxonomy), and the drifts a repair loop must see:

- `values`: every value the claim states (distinctive numbers always, small round numbers when
  the claim assigns them, `tau = 5.0`) is set in code or config, and where a name of the
  claim's quantity (`epochs` for "40 training epochs") is bound, it is bound to that value;
- `stub`: the code that best matches the claim is not a stub (`pass`, `raise
  NotImplementedError`, a constant return), and no function named after the claim is one;
- `docs_only`: the claim is not only restated in comments, docstrings, docs or tests;
- `entities`: the datasets, baselines and metrics a protocol claim names appear in code;
- `order`: the steps of an ordering claim, located in one function's body, come in the
  stated order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sabench.verifiers.checks import ClaimCheck, claim_steps
from sabench.verifiers.evidence import make_query
from sabench.verifiers.index import Assignment, Definition, RepoIndex
from sabench.verifiers.numbers import Number, extract_numbers, is_trivial, normalise
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import split_identifier, term_set, word_terms
from sabench.verifiers.types import EvidenceKind


@dataclass(frozen=True)
class Finding:
    """Why a claim fails one rule, and where to look."""

    rule: str
    reason: str
    where: str = ""


# ------------------------------------------------------------------------------- values

_ASSIGNED = re.compile(r"(?:=|:|≈)\s*$")
_LABEL = re.compile(r"(?:eq\.?|equation|eqs\.?|section|sec\.?|table|tab\.?|figure|fig\.?|"
                    r"appendix|algorithm|alg\.?|theorem|lemma|step|phase|stage|proposition|"
                    r"corollary|definition|line|top|rank|row|p|g)\s*[\(\[]?-?$", re.IGNORECASE)
_OPERATOR_BEFORE = re.compile(r"[-+*/^×·√(|_{]\s*$|\\[a-z]+\s*\{?\s*$")
_OPERATOR_AFTER = re.compile(r"^\s*[-+*/^×·)|}_]|^\s*\\(?:cdot|times)")
_CLAUSE = re.compile(r"[,;:()\[\]]|\band\b|\bwith\b|\bwhile\b|\bthen\b", re.IGNORECASE)
_GENERIC = frozenset({"size", "number", "rate", "valu", "total", "default", "config", "param",
                      "paramet", "factor", "coefficient", "arg", "args", "kwarg", "hparam",
                      "hparams", "hyperparamet", "setting", "option", "model", "train", "data",
                      "dataset", "self", "cfg", "get", "init", "initial", "num", "max",
                      "maximum", "min", "minimum", "optimizer", "optim", "opt", "experiment"})
# Symbols a claim names a quantity by (`eta_0 = 0.1`); alone they do not say which quantity.
_SYMBOLS = frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "eps", "zeta", "eta",
                      "theta", "kappa", "lambda", "lam", "lmbda", "lambd", "mu", "nu", "xi",
                      "pi", "rho", "sigma", "sig", "tau", "phi", "chi", "psi", "omega",
                      "temperature", "mean", "std", "lr", "discount", "params", "alph"})


@dataclass(frozen=True)
class StatedValue:
    """A value a claim states: its spellings (`20%` is 20 and 0.2), whether it is a small
    round number, and the terms of the quantity it sets."""

    keys: frozenset[str]
    text: str
    trivial: bool
    quantity: frozenset[str]


def stated_values(text: str) -> list[StatedValue]:
    """The values a claim states, each with the terms of the quantity it sets. Numbers inside
    formulas (`sqrt(1 - alpha)`), labels (`Eq. 3`), years, and small round numbers that the
    claim does not assign (`3 layers`, but `tau = 5.0` counts) are left out; so are 0 and 1."""
    groups: dict[int, list[Number]] = {}
    for number in extract_numbers(text):
        groups.setdefault(number.start, []).append(number)
    out: list[StatedValue] = []
    for start, numbers in sorted(groups.items()):
        raw = numbers[0].raw
        before, after = text[max(0, start - 24):start], text[start + len(raw):]
        if _LABEL.search(before) or is_year(numbers[0]) or _OPERATOR_BEFORE.search(before) \
                or _OPERATOR_AFTER.search(after):
            continue
        trivial = all(is_trivial(n.value) for n in numbers)
        if trivial and (not _ASSIGNED.search(before) or numbers[0].value in (0.0, 1.0)):
            continue
        keys = frozenset(normalise(n.value) for n in numbers)
        out.append(StatedValue(keys, raw, trivial, quantity_terms(text, start, len(raw))))
    return out


def is_year(number: Number) -> bool:
    return number.raw.isdigit() and len(number.raw) == 4 and 1990 <= number.value <= 2030


def quantity_terms(text: str, start: int, length: int) -> frozenset[str]:
    """The terms naming the quantity a value sets: its clause before it ("peak learning rate
    eta_0 ="), else the words right after it ("64 A100 GPUs", "T = 40 training epochs")."""
    before = term_set(_CLAUSE.split(text[:start])[-1])
    tail = text[start + length:]
    after = set()
    if re.match(r"\s+[A-Za-z]", tail):  # "40 training epochs", not a unit ("5s", "8x")
        after = term_set(" ".join(re.split(r"[,;:()\[\].]", tail, maxsplit=1)[0].split()[:2]))
    return frozenset(before | after)


def value_findings(index: RepoIndex, claim: Claim, check: ClaimCheck,
                   code_numbers: set[str]) -> tuple[list[Finding], bool]:
    """Findings: a stated value whose quantity's own name is bound to another value (and the
    value is bound to no name of the claim); a numerical claim none of whose values is set.
    Also whether the claim states values and every one is bound to a name of its quantity."""
    out, bound = [], []
    values = stated_values(claim.text)
    stated = frozenset(k for v in values for k in v.keys)
    context = claim_context(claim.text)
    for value in values:
        quantity = value.quantity if value.quantity - _SYMBOLS - _GENERIC else \
            value.quantity | context.head
        if not quantity:
            continue
        related = related_assignments(index, quantity)
        holding = [a for a in related if a.numbers & value.keys]
        bound.append(bool(holding) or counts_items(related, value))
        if bound[-1] or (not value.trivial and value.keys & code_numbers):
            continue  # bound, or set somewhere under another name: not a contradiction
        others = [a for a in related if strongly_related(a, quantity, context.terms)
                  and not a.numbers & stated]
        if others:
            a = others[0]
            out.append(Finding("value_conflict", f"{a.path} = {shown(a)} at {a.file}:{a.line}, "
                                                 f"but the claim states {value.text}",
                               f"{a.file}:{a.line}"))
    if check.dimension == Dimension.D1 and check.numbers and not check.numbers_in_code:
        out.append(Finding("values_absent", "none of the claim's values "
                                            f"({', '.join(check.numbers)}) is set in code or "
                                            "config"))
    return out, bool(bound) and all(bound)


@dataclass(frozen=True)
class ClaimContext:
    """The terms of a whole claim, and of its head (`Label smoothing coefficient: ...`)."""

    terms: frozenset[str]
    head: frozenset[str]


def claim_context(text: str) -> ClaimContext:
    head = text.split(":", 1)[0] if ":" in text[:100] else ""
    return ClaimContext(frozenset(term_set(text)), frozenset(term_set(head)))


def shown(a: Assignment) -> str:
    return str(a.value)[:60]


def related_assignments(index: RepoIndex, terms: frozenset[str]) -> list[Assignment]:
    """Assignments outside tests whose name (its last part) shares a specific term with
    `terms`, or a stem (`clip_norm` for "clipping")."""
    specific = terms - _GENERIC or terms
    return [a for a, names in _name_terms(index) if any(covered(t, specific) for t in names)]


def _name_terms(index: RepoIndex) -> list[tuple[Assignment, frozenset[str]]]:
    found = index.cache.get("alignment_name_terms")
    if found is None:
        found = index.cache["alignment_name_terms"] = [
            (a, name_terms(a.name) - _GENERIC) for a in index.assignments
            if index.files[a.file].kind != EvidenceKind.TEST]
    return found


def strongly_related(a: Assignment, quantity: frozenset[str], claim: frozenset[str]) -> bool:
    """A scalar (not a 0/1 initialisation or flag) bound to a name made of the quantity's own
    words (`epochs` for "40 training epochs", `label_smoothing` for "label smoothing ... =
    0.1"), in a namespace the claim names or a generic one (`TrainConfig`, `args`, `optim`)."""
    if isinstance(a.value, bool) or not isinstance(a.value, (int, float)) or \
            abs(a.value) in (0, 1):
        return False
    specific = name_terms(a.name) - _GENERIC
    if not specific or max(map(len, specific)) < 3 or \
            not all(covered(t, quantity) for t in specific):
        return False
    space = frozenset(t for part in a.path.split(".")[:-1] for t in name_terms(part))
    return all(covered(t, claim) for t in space - _GENERIC)


def name_terms(name: str) -> frozenset[str]:
    """The terms of an identifier's parts (without the joined form `labelsmoothing`)."""
    return frozenset(t for part in split_identifier(name) for t in word_terms(part))


def covered(term: str, terms: frozenset[str]) -> bool:
    """`term` is in `terms`, or differs from one of them by an ending (`clip` and `clipp`)."""
    if term in terms:
        return True
    return len(term) >= 4 and any(len(t) >= 4 and abs(len(t) - len(term)) <= 2 and (
        t.startswith(term) or term.startswith(t)) for t in terms)


def counts_items(related: list[Assignment], value: StatedValue) -> bool:
    """`5 seeds` is satisfied by `seeds = (0, 1, 2, 3, 4)`: the count of a listed quantity."""
    for a in related:
        if isinstance(a.value, (list, tuple)) and normalise(float(len(a.value))) in value.keys:
            return True
    return False


# ------------------------------------------------------------------------------- stubs

_REAL_STUBS = ("empty body", "raises NotImplementedError", "returns zero-filled or random data")


def stub_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[Finding]:
    """The best-matching function, or a function named after the claim, does nothing real (an
    empty body, `raise NotImplementedError`, zero-filled data; a constant return may be a real
    accessor), and no function of the same name elsewhere implements it (an abstract base)."""
    claim_terms = frozenset(term_set(claim.text)) - _GENERIC
    implemented = _implemented_names(index)
    out = []
    for d in index.functions():
        if d.stub not in _REAL_STUBS or d.name in implemented or \
                index.files[d.file].kind == EvidenceKind.TEST:
            continue
        names = name_terms(d.name) - _GENERIC
        named = bool(names) and all(covered(t, claim_terms) for t in names) and (
            len(names) >= 2 or max(map(len, names)) >= 5)
        if d.qualname == check.function or named:
            out.append(Finding("stub", f"{d.qualname} is a stub ({d.stub})",
                               f"{d.file}:{d.start}"))
    return out[:3]


def _implemented_names(index: RepoIndex) -> frozenset[str]:
    found = index.cache.get("alignment_implemented")
    if found is None:
        found = index.cache["alignment_implemented"] = frozenset(
            d.name for d in index.functions() if d.stub is None)
    return found


# ------------------------------------------------------------------------------- docs only


def docs_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """The claim is restated in a comment or docstring block (most of its specific terms
    there) while the code holds less than half as much of it."""
    wanted = frozenset(term_set(claim.text)) - _GENERIC
    if len(wanted) < 3:
        return []
    best, where = 0.0, ""
    for file, start, terms in _doc_blocks(index):
        share = sum(t in terms for t in wanted) / len(wanted)
        if share > best:
            best, where = share, f"{file}:{start}"
    if best < 0.6:
        return []
    code = _code_terms(index)
    in_code = sum(code.covers(t) for t in wanted) / len(wanted)
    if in_code >= 0.5 * best:
        return []
    return [Finding("docs_only", f"the claim is restated in comments or docstrings ({where}) "
                                 f"but {in_code:.0%} of its terms are in code", where)]


class _TermSet:
    """A set of terms that also answers for stems (`clipping` for `clip`)."""

    def __init__(self, terms: set[str]) -> None:
        self.terms = terms
        self.prefixes = {t[:k] for t in terms for k in range(4, len(t))}

    def covers(self, term: str) -> bool:
        return term in self.terms or (len(term) >= 4 and (
            term in self.prefixes or any(term[:k] in self.terms for k in range(4, len(term)))))


def _code_terms(index: RepoIndex) -> _TermSet:
    found = index.cache.get("alignment_code_terms")
    if found is None:
        terms: set[str] = set()
        for rel, entry in index.files.items():
            if entry.kind != EvidenceKind.TEST:
                for role, line_terms in zip(entry.roles, index.line_terms[rel], strict=True):
                    if role in ("code", "config"):
                        terms |= line_terms
        found = index.cache["alignment_code_terms"] = _TermSet(terms)
    return found


def _doc_blocks(index: RepoIndex) -> list[tuple[str, int, set[str]]]:
    """Runs of comment or docstring lines of Python files, with their terms."""
    found = index.cache.get("alignment_doc_blocks")
    if found is None:
        found = []
        for rel, entry in index.files.items():
            if entry.lang != "python":
                continue
            block_start, terms = 0, set()
            for no, role in enumerate([*entry.roles, "code"], 1):
                if role in ("comment", "docstring"):
                    block_start = block_start or no
                    terms |= index.line_terms[rel][no - 1]
                elif role != "blank" and block_start:
                    found.append((rel, block_start, terms))
                    block_start, terms = 0, set()
        index.cache["alignment_doc_blocks"] = found
    return found


# ------------------------------------------------------------------------------- entities


def entity_findings(check: ClaimCheck) -> list[Finding]:
    if check.dimension != Dimension.D3:
        return []
    missing = [e for e in check.entities if e not in check.entities_in_code]
    return [Finding("entities", f"{', '.join(missing)} named by the claim but absent from the "
                                "code")] if missing else []


# ------------------------------------------------------------------------------- order


def order_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """The stated steps must come in the stated order in the code's static execution order
    (`execution_trace`): each step at the line that holds most of it, later than the step
    before it."""
    if claim.dimension != Dimension.D4:
        return []
    weights = make_query(index, claim).weights
    steps = [{t: weights[t] for t in term_set(s) if t in weights} for s in claim_steps(claim.text)]
    trace = execution_trace(index)
    located = []
    for number, step in enumerate(steps, 1):
        total = sum(step.values())
        if not total:
            continue
        best, where = 0.0, None
        for position, (file, line) in enumerate(trace):
            share = sum(w for t, w in step.items() if t in index.line_terms[file][line - 1])
            if share > best:
                best, where = share, position
        if where is not None and best >= 0.5 * total:
            located.append((number, where))
    for (i, a), (j, b) in zip(located, located[1:], strict=False):
        if b < a:
            file, line = trace[b]
            earlier = "{}:{}".format(*trace[a])
            return [Finding("order", f"step {j} of the claim ({file}:{line}) runs before step "
                                     f"{i} ({earlier})", f"{file}:{line}")]
    return []


def execution_trace(index: RepoIndex) -> list[tuple[str, int]]:
    """Code lines in a static execution order: the module-level lines of entry-point files and
    the bodies of `main` functions, each called function's body inserted at its first call
    (once); functions never reached follow, in index order."""
    found = index.cache.get("alignment_trace")
    if found is not None:
        return found
    by_name: dict[str, list[Definition]] = {}
    calls: dict[tuple[str, int], list[str]] = {}
    for d in index.functions():
        if index.files[d.file].kind != EvidenceKind.TEST:
            by_name.setdefault(d.name, []).append(d)
            for name, line in d.calls:
                calls.setdefault((d.file, line), []).append(name)
    for file, name, line in index.module_calls:
        calls.setdefault((file, line), []).append(name)
    trace: list[tuple[str, int]] = []
    seen: set[str] = set()

    def walk(file: str, lines: list[int], depth: int) -> None:
        for line in lines:
            trace.append((file, line))
            for name in calls.get((file, line), ()) if depth < 40 else ():
                callee = next((d for d in by_name.get(name, ()) if d.file == file),
                              (by_name.get(name) or [None])[0])
                if callee is not None and callee.qualname not in seen:
                    seen.add(callee.qualname)
                    walk(callee.file, body_lines(index, callee), depth + 1)

    for rel, entry in index.files.items():
        if entry.entry_point and entry.lang == "python" and entry.kind != EvidenceKind.TEST:
            walk(rel, [no for no, role in enumerate(entry.roles, 1)
                       if role == "code" and index.enclosing(rel, no) is None], 0)
    for d in [*by_name.get("main", ()), *(d for ds in by_name.values() for d in ds)]:
        if d.qualname not in seen:
            seen.add(d.qualname)
            walk(d.file, body_lines(index, d), 0)
    index.cache["alignment_trace"] = trace
    return trace


def body_lines(index: RepoIndex, d: Definition) -> list[int]:
    entry = index.files[d.file]
    return [no for no in range(d.start + 1, min(d.end, len(entry.roles)) + 1)
            if entry.roles[no - 1] == "code"]
