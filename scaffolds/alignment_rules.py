"""Deterministic rules of the alignment check: what makes a claim fail, whatever its score.

Each rule looks at one claim in an indexed repository and returns findings: a reason a repair
can act on, and where (`file:line`). The rules target the failure modes that cost the most
points on SA-Bench (see the project's failure taxonomy), and the drifts a repair loop must see:

- `values` (in `alignment_values`): every value the claim states is set as it says;
- `stub`: the code that best matches the claim is not a stub (`pass`, `raise
  NotImplementedError`, a constant return), no function named after the claim is one, the
  claim's code calls none about it, and no class named after the claim that nothing can
  stand in for raises NotImplementedError where it does its work (`__init__`, `forward`),
  nor does the constructor of a class whose methods carry the claim;
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
from sabench.verifiers.index import Definition, RepoIndex
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import split_identifier, term_set, word_terms
from sabench.verifiers.types import EvidenceKind


@dataclass(frozen=True)
class Finding:
    """Why a claim fails one rule, and where to look."""

    rule: str
    reason: str
    where: str = ""
    fails: bool = True

# ------------------------------------------------------------------------------- shared

#: Words too common in names and claims to say which quantity a name is (`num`, `config`).
GENERIC = frozenset({"size", "number", "rate", "valu", "total", "default", "config", "param",
                      "paramet", "factor", "coefficient", "arg", "args", "kwarg", "hparam",
                      "hparams", "hyperparamet", "setting", "option", "model", "train", "data",
                      "dataset", "self", "cfg", "get", "init", "initial", "num", "max",
                      "maximum", "min", "minimum", "optimizer", "optim", "opt", "experiment"})


def name_terms(name: str) -> frozenset[str]:
    """The terms of an identifier's parts (without the joined form `labelsmoothing`)."""
    return frozenset(t for part in split_identifier(name) for t in word_terms(part))


def covered(term: str, terms: frozenset[str]) -> bool:
    """`term` is in `terms`, or differs from one of them by an ending (`clip` and `clipp`)."""
    if term in terms:
        return True
    return len(term) >= 4 and any(len(t) >= 4 and abs(len(t) - len(term)) <= 3 and (
        t.startswith(term) or term.startswith(t)) for t in terms)


# ------------------------------------------------------------------------------- stubs

_REAL_STUBS = ("empty body", "raises NotImplementedError", "returns zero-filled or random data")
#: The verbs a function's name starts with, which say what it does to the claim's thing, not
#: which thing (`apply_stage_freezing` is the claim's stage freezing).
_DOING = frozenset(t for verb in ("apply", "compute", "calculate", "calc", "run", "build",
                                  "make", "create", "perform", "evaluate", "prepare", "execute",
                                  "handle", "process")
                   for t in name_terms(verb))


def stub_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[Finding]:
    """The best-matching function, or a function named after the claim, does nothing real (an
    empty body, `raise NotImplementedError`, zero-filled data; a constant return may be a real
    accessor), and no function of the same name elsewhere implements it (an abstract base).
    For a method or formula claim, so does any function (not a method: see
    `concrete_stub_findings`) that carries it, has a word of the claim in its name, and says
    outright that it is not implemented (`raise NotImplementedError`): a function around the
    claim's code that returns zeros may be a real initialiser, one that raises never is, and
    a stub that only borders the claim's code (`cosine_lr` beside the label smoothing) is
    another claim's."""
    claim_terms = frozenset(term_set(claim.text)) - GENERIC
    implemented = _implemented_names(index)
    raising_carriers = {d.qualname for d in carriers(index, check) if d.kind == "function"
                        and d.stub == "raises NotImplementedError"} \
        if claim.dimension == Dimension.D2 else set()
    out = []
    for d in index.functions():
        if d.stub not in _REAL_STUBS or d.name in implemented or \
                index.files[d.file].kind == EvidenceKind.TEST:
            continue
        names = name_terms(d.name) - GENERIC - _DOING
        named = bool(names) and all(covered(t, claim_terms) for t in names) and (
            len(names) >= 2 or max(map(len, names)) >= 5)
        unimplemented = d.qualname in raising_carriers and any(
            covered(t, claim_terms) for t in names)
        if d.qualname == check.function or named or unimplemented:
            out.append(Finding("stub", f"{d.qualname} is a stub ({d.stub})",
                               f"{d.file}:{d.start}"))
    return out[:3]


def concrete_stub_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                           ) -> list[Finding]:
    """A method that only raises NotImplementedError, of a class nothing can stand in for (not
    an abstract base, not subclassed in the repository), where the class is named after the
    claim (`GatingModule.forward` for a gating claim), the method carries it, or another
    method of the class carries it and this one is its constructor or does its work
    (`forward`): such a method that raises makes the claim's code unusable, whatever other
    classes implement methods of the same name."""
    claim_terms = frozenset(term_set(claim.text)) - GENERIC
    carrying = {d.qualname for d in carriers(index, check)}
    # the classes whose methods carry the claim: a constructor of theirs that raises stops
    # every one of those methods
    carrying_classes = {q.rsplit(".", 1)[0] for q in carrying if "." in q}
    shown_classes = _classes_shown(index, check)
    out = []
    for d, owner in _concrete_stubs(index):
        words = name_terms(owner) - GENERIC
        doing = d.name in _WHAT_A_CLASS_DOES or all(
            covered(t, claim_terms) for t in name_terms(d.name) - GENERIC)
        named = bool(words) and all(covered(t, claim_terms) for t in words) and doing
        # a carrying class whose constructor, or whose method that does its work
        # (`forward`), raises: every one of its methods is unusable
        constructs = d.name in _WHAT_A_CLASS_DOES and \
            d.qualname.rsplit(".", 1)[0] in carrying_classes
        # a method of a class the claim's evidence shows (its head and docstring), named
        # with a word of the claim (`NormalizedLinear.normalize_weights` for hypersphere
        # normalization, once its body and docstring are gone)
        # (or its constructor, which no instance gets past: a config's `__post_init__`)
        shown = d.qualname.rsplit(".", 1)[0] in shown_classes and (any(
            covered(t, claim_terms) for t in name_terms(d.name) - GENERIC - _DOING) or
            d.name in _CONSTRUCTORS)
        if named or constructs or shown or d.qualname in carrying:
            out.append(Finding("stub", f"{d.qualname} is a stub ({d.stub}) of a class nothing "
                                       "else implements", f"{d.file}:{d.start}"))
    return out[:3]


def _classes_shown(index: RepoIndex, check: ClaimCheck) -> set[str]:
    """The classes whose head (the lines before their first method: name, docstring, class
    attributes) the claim's code evidence shows."""
    shown = set()
    for c in (d for d in index.definitions if d.kind == "class"):
        methods = [d.start for d in index.definitions_in(c.file)
                   if d.kind == "method" and c.start < d.start <= c.end]
        head_end = min(methods, default=c.end + 1) - 1
        if any(e.kind == EvidenceKind.CODE and e.file == c.file and e.start_line <= head_end
               and e.end_line >= c.start for e in check.evidence):
            shown.add(c.qualname)
    return shown


#: Methods that are what a class does, whatever it is about (`forward` of a gating module).
_WHAT_A_CLASS_DOES = frozenset({"__init__", "__post_init__", "__call__", "forward", "setup",
                                "step", "run", "apply", "compute", "train_step", "sample"})
_CONSTRUCTORS = frozenset({"__init__", "__post_init__"})
_ABSTRACT_BASES = frozenset({"ABC", "ABCMeta", "Protocol", "Generic"})
_ABSTRACT_NAME = re.compile(r"^(?:Base|Abstract)|(?:Base|Interface|Mixin|Protocol)$")


def _concrete_stubs(index: RepoIndex) -> list[tuple[Definition, str]]:
    """(method, class name) for methods outside tests that raise NotImplementedError in a
    class that is not abstract: no abstract base, no `Base`/`Abstract` name, and no class
    of the repository derives from it (cached)."""
    found = index.cache.get("alignment_concrete_stubs")
    if found is None:
        classes = [d for d in index.definitions if d.kind == "class"]
        derived = {base for c in classes for base in c.bases}
        concrete = {c.qualname for c in classes if c.name not in derived and
                    not _ABSTRACT_BASES & set(c.bases) and not _ABSTRACT_NAME.search(c.name)}
        found = index.cache["alignment_concrete_stubs"] = [
            (d, d.qualname.rsplit(".", 2)[-2]) for d in index.functions()
            if d.kind == "method" and d.stub == "raises NotImplementedError" and
            d.qualname.rsplit(".", 1)[0] in concrete and
            index.files[d.file].kind != EvidenceKind.TEST]
    return found


def stub_call_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[Finding]:
    """The code that carries the claim (the functions around its evidence, and its best
    function) calls a stub about the claim (a word of its name is the claim's) that no
    function of the same name implements elsewhere: the claim's code delegates its work to
    something that does nothing."""
    claim_terms = frozenset(term_set(claim.text)) - GENERIC
    stubs = {name: d for name, d in _stub_functions(index).items()
             if any(covered(t, claim_terms) for t in name_terms(name) - GENERIC)}
    if not stubs:
        return []
    out = []
    for caller in carriers(index, check):
        for name, line in caller.calls:
            stub = stubs.get(name.rsplit(".", 1)[-1])
            if stub is not None and stub.qualname != caller.qualname:
                out.append(Finding("stub", f"{caller.qualname} calls {stub.qualname} at "
                                           f"{caller.file}:{line}, a stub ({stub.stub})",
                                   f"{stub.file}:{stub.start}"))
    return out[:3]


def carriers(index: RepoIndex, check: ClaimCheck) -> list[Definition]:
    """The functions that carry the claim: its best function and those around its code
    evidence."""
    # keyed by file too: a fallback class of the same name in another file (`except
    # ImportError: class GatedAttention: ...`) must not hide the one the evidence is in
    found = {(d.file, d.qualname): d for d in index.functions() if d.qualname == check.function}
    for e in check.evidence:
        if e.kind == EvidenceKind.CODE:
            for line in range(e.start_line, e.end_line + 1):
                owner = index.enclosing(e.file, line)
                if owner is not None:
                    found.setdefault((owner.file, owner.qualname), owner)
    return list(found.values())


def _stub_functions(index: RepoIndex) -> dict[str, Definition]:
    """Stubs outside tests, by name, that no function of the same name implements."""
    found = index.cache.get("alignment_stubs")
    if found is None:
        implemented = _implemented_names(index)
        found = index.cache["alignment_stubs"] = {
            d.name: d for d in index.functions() if d.stub in _REAL_STUBS and
            d.name not in implemented and index.files[d.file].kind != EvidenceKind.TEST}
    return found


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
    wanted = frozenset(term_set(claim.text)) - GENERIC
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
    """The datasets, baselines and metrics a protocol claim names, absent from the code (not
    the claim's own labels such as `P4` or `G5`, nor generic words such as `GPUs`)."""
    if check.dimension != Dimension.D3:
        return []
    missing = [e for e in check.entities if e not in check.entities_in_code and
               not _LABEL_ENTITY.match(e) and e.lower().rstrip("s") not in _GENERIC_ENTITIES]
    return [Finding("entities", f"{', '.join(missing)} named by the claim but absent from the "
                                "code")] if missing else []


_LABEL_ENTITY = re.compile(r"^(?!F1$|R2$)[A-Z]{1,2}\d{1,2}$")
_GENERIC_ENTITIES = frozenset({"api", "gpu", "cpu", "tpu", "llm", "sota", "ml", "ai", "nlp",
                               "cv", "rl"})


# ------------------------------------------------------------------------------- operations

# Operations a formula claim may name, and how code spells them.
OPERATIONS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    name: (re.compile(claim, re.IGNORECASE), re.compile(code, re.IGNORECASE)) for name, (
        claim, code) in {
        "log": (r"\blog\b|\\log|logarithm|log-likelihood|cross-entropy|cross entropy",
                r"\blog(?:1p|2|10|_softmax|_prob|sumexp)?\s*\(|cross_?entropy|nll|bce"),
        "exp": (r"\bexp\b|\\exp|exponential",
                r"\bexp(?:m1)?\s*\(|softmax|logsumexp|sigmoid|expit"),
        "sqrt": (r"sqrt|√|square root",
                 r"\bsqrt\s*\(|\*\*\s*0?\.5|\bstd\s*\(|\bnorm\s*\(|rsqrt"),
        "softmax": (r"softmax", r"softmax"),
        "sigmoid": (r"sigmoid", r"sigmoid|expit|logistic|\bsilu|SiLU|swish"),
        "cos": (r"\bcos\b|\\cos|cosine",
                r"\bcos\s*\(|CosineAnnealing|cosine_similarity|CosineSimilarity"),
        "sin": (r"\bsin\b|\\sin|sinusoid", r"\bsin\s*\("),
        "tanh": (r"tanh", r"\btanh\s*\(|Tanh"),
        # A Gaussian KL is often written in closed form, into a variable named after it.
        "kl": (r"\bKL\b|kullback", r"kl_div|KLDiv|\bkld?\w*\s*[(=]|kullback"),
    }.items()}


def operation_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """A formula claim naming an operation (log, exp, sqrt, cos, ...) that no code of the
    repository performs."""
    if claim.dimension != Dimension.D2:
        return []
    code = _code_text(index)
    missing = [name for name, (said, done) in OPERATIONS.items()
               if said.search(claim.text) and not done.search(code)]
    return [Finding("operations", f"the claim's formula uses {', '.join(missing)}, which no "
                                  "code computes")] if missing else []


def _code_text(index: RepoIndex) -> str:
    found = index.cache.get("alignment_code_text")
    if found is None:
        found = index.cache["alignment_code_text"] = "\n".join(
            line.split("#", 1)[0] for entry in index.files.values()
            if entry.kind != EvidenceKind.TEST and entry.lang == "python"
            for line, role in zip(entry.lines, entry.roles, strict=True) if role == "code")
    return found


# ------------------------------------------------------------------------------- order


def order_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """The stated steps must come in the stated order in the code's static execution order
    (`execution_trace`): each step at the line holding most of its terms that occur in code,
    later than the step before it. A step none of whose terms occurs in code is missing."""
    if claim.dimension != Dimension.D4:
        return []
    steps = claim_steps(strip_head(claim.text))
    if not 2 <= len(steps) <= MAX_STEPS or max(len(term_set(s)) for s in steps) > MAX_STEP_TERMS:
        return []  # long prose pipelines cannot be located step by step reliably
    weights = make_query(index, claim).weights
    code = _code_terms(index)
    trace = execution_trace(index)
    located, missing, previous = [], [], -1
    for number, text in enumerate(steps, 1):
        step = {t: weights[t] for t in term_set(text) if t in weights and t in code.terms}
        total = sum(step.values())
        if not total:
            missing.append(number)
            continue
        shares = [(sum(w for t, w in step.items() if t in index.line_terms[file][line - 1]),
                   position) for position, (file, line) in enumerate(trace)]
        hits = [(share, position) for share, position in shares if share >= total / 3]
        if not hits:
            continue
        later = [hit for hit in hits if hit[1] > previous]
        if not later:
            file, line = trace[max(hits)[1]]
            return [Finding("order", f"step {number} of the claim ({file}:{line}) runs before "
                                     f"the step before it ({'{}:{}'.format(*trace[previous])})",
                            f"{file}:{line}")]
        previous = later[0][1]  # the first place it can happen: only a true inversion fails
        located.append(number)
    if missing and located:
        return [Finding("steps", f"step{'s' if len(missing) > 1 else ''} "
                                 f"{', '.join(map(str, missing))} of the claim not found in code",
                        fails=False)]  # a reason for repair; wording differs too often to fail
    return []


MAX_STEPS, MAX_STEP_TERMS = 6, 8


def strip_head(text: str) -> str:
    """The claim without its title (`Data pipeline per seed: ...`)."""
    head, sep, rest = text.partition(":")
    return rest if sep and len(head) <= 80 and "->" not in head and "→" not in head else text


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
                       if role == "code" and index.enclosing(rel, no) is None and
                       not _IMPORT.match(entry.lines[no - 1])], 0)
    for d in [*by_name.get("main", ()), *(d for ds in by_name.values() for d in ds)]:
        if d.qualname not in seen:
            seen.add(d.qualname)
            walk(d.file, body_lines(index, d), 0)
    index.cache["alignment_trace"] = trace
    return trace


_IMPORT = re.compile(r"\s*(?:import|from)\s+[\w.]+")


def body_lines(index: RepoIndex, d: Definition) -> list[int]:
    entry = index.files[d.file]
    return [no for no in range(d.start + 1, min(d.end, len(entry.roles)) + 1)
            if entry.roles[no - 1] == "code" and not _IMPORT.match(entry.lines[no - 1])]
