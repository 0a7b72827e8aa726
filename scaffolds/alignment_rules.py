"""Deterministic rules of the alignment check: what makes a claim fail, whatever its score.

Each rule looks at one claim in an indexed repository and returns findings: a reason a repair
can act on, and where (`file:line`). The rules target the failure modes that cost the most
points on SA-Bench (see the project's failure taxonomy), and the drifts a repair loop must see:

- `values`: every value the claim states (distinctive numbers always, small round numbers when
  the claim assigns them, `tau = 5.0`) is set in code or config, and where a name of the
  claim's quantity (`epochs` for "40 training epochs") is bound, it is bound to that value;
  in particular where the check finds the claim implemented (its best evidence), the
  quantity's own name holds the stated value, whatever copies elsewhere hold;
- `stub`: the code that best matches the claim is not a stub (`pass`, `raise
  NotImplementedError`, a constant return), no function named after the claim is one, the
  claim's code calls none about it, and no class named after the claim that nothing can
  stand in for raises NotImplementedError where it does its work (`__init__`, `forward`);
- `docs_only`: the claim is not only restated in comments, docstrings, docs or tests;
- `entities`: the datasets, baselines and metrics a protocol claim names appear in code;
- `order`: the steps of an ordering claim, located in one function's body, come in the
  stated order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sabench.verifiers.checks import ClaimCheck, claim_steps, view
from sabench.verifiers.evidence import make_query
from sabench.verifiers.index import Assignment, Definition, RepoIndex
from sabench.verifiers.numbers import (
    GROUPED_THOUSANDS,
    Number,
    extract_numbers,
    is_trivial,
    normalise,
    number_keys,
)
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


# ------------------------------------------------------------------------------- values

_ASSIGNED = re.compile(r"(?:=|(?<![\d\s]):|≈)\s*$")  # not a slice or ratio (`[0:3]`, `3:1`)
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


#: A word and a space before an assigned word: that word ends a phrase, it is no identifier.
_PHRASE_END = re.compile(r"[A-Za-z]{2,}\s+$")
#: The bounds of an index range (`vel[0:3]`, `joint positions[12:41]`) are positions.
_SLICE_BEFORE = re.compile(r"\[\s*-?\d*\s*:\s*$")
_SLICE_AFTER = re.compile(r"\s*:\s*-?\d*\s*\]")
#: The rest of a square size after its first side (`×512` of "512×512").
_SQUARE = re.compile(r"\s*[×x]\s*(\d+)(?![\w.])")


@dataclass(frozen=True)
class StatedValue:
    """A value a claim states: its spellings (`20%` is 20 and 0.2), whether it is a small
    round number, and the terms of the quantity it sets."""

    keys: frozenset[str]
    text: str
    trivial: bool
    quantity: frozenset[str]
    symbol: str = ""
    unit: bool = False
    per: bool = False  # "per 1M tokens": the denominator of a rate, not a setting
    head: str = ""  # the noun the words after the value end on ("A100 GPU hours": hour)
    whole: bool = True  # written as a whole number (`5.00` is a price, not a count)
    count: bool = False  # a small round number kept for the noun it counts ("4 GPUs")
    start: int = -1  # where the value is written in the claim


def stated_values(text: str, small: bool = False) -> list[StatedValue]:
    """The values a claim states, each with the terms of the quantity it sets. Numbers inside
    formulas (`sqrt(1 - alpha)`), labels (`Eq. 3`), years, and small round numbers that the
    claim does not assign (`3 layers`, but `tau = 5.0` counts) are left out; so are 0 and 1.
    With `small`, a small round number that a noun follows is kept as a `count` ("4 GPUs",
    "1000 training samples"): not to be looked for everywhere, as it is in most code, but
    to be compared with a name that counts that noun."""
    text = GROUPED_THOUSANDS.sub(lambda m: m.group(0).replace(",", "").ljust(len(m.group(0))), text)
    groups: dict[int, list[Number]] = {}
    for number in extract_numbers(text):
        groups.setdefault(number.start, []).append(number)
    out: list[StatedValue] = []
    for start, numbers in sorted(groups.items()):
        raw = numbers[0].raw
        before, after = text[max(0, start - 24):start], text[start + len(raw):]
        square = _SQUARE.match(after)
        length = len(raw) + (square.end() if square and square.group(1) == raw else 0)
        if length > len(raw):  # "512×512", "256x256 resolution": a size, not a product
            after = after[square.end():]
        elif _LABEL.search(before) or is_year(numbers[0]) or _OPERATOR_BEFORE.search(before) \
                or (_OPERATOR_AFTER.search(after) and not closes_assignment(before, after)
                    and not (raw != "1" and alternatives(before, after))) \
                or _SLICE_BEFORE.search(before) or _SLICE_AFTER.match(after):
            continue
        trivial = all(is_trivial(n.value) for n in numbers)
        loose = trivial and not _ASSIGNED.search(before)
        if trivial and numbers[0].value in (0.0, 1.0) or loose and not (
                small and head_noun(after)):
            continue
        keys = frozenset(normalise(n.value) for n in numbers)
        symbol = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*$", before)
        if symbol and _PHRASE_END.search(before[:symbol.start()]) and \
                len(symbol.group(1)) > 1 and symbol.group(1).isalpha() and \
                symbol.group(1).lower() not in _SYMBOLS:
            symbol = None  # "reverse sampling steps = 50": the last word of a phrase
        out.append(StatedValue(keys, raw, trivial, quantity_terms(text, start, length),
                               symbol.group(1).lower() if symbol else "",
                               bool(re.match(r"[A-Za-z]", after)),
                               per=bool(re.search(r"\bper\s*$", before, re.IGNORECASE)),
                               whole="." not in raw and float(numbers[0].value).is_integer(),
                               head=head_noun(text[start + length:]), count=loose,
                               start=start))
    return out


def closes_assignment(before: str, after: str) -> bool:
    """`(vocab_size=32000)`: the bracket after the value closes an aside that assigns it, not
    a formula the value is an operand of."""
    return bool(re.match(r"\s*\)", after) and re.search(r"[A-Za-z_]\w*\s*[=:]\s*$", before))


def alternatives(before: str, after: str) -> bool:
    """`n_layers=24/36`: an assigned value followed by others for other settings (model
    sizes), not a formula (`h=1/K`); `1/3` is left to the caller as a fraction."""
    return bool(_ASSIGNED.search(before) and re.match(r"(?:\s*/\s*\d+(?:\.\d+)?)+(?![\w.(/*^])",
                                                   after))


def is_year(number: Number) -> bool:
    return number.raw.isdigit() and len(number.raw) == 4 and 1990 <= number.value <= 2030


_LINKS = frozenset({"per", "of", "for", "in", "on", "each", "with", "at", "to", "and", "or",
                    "the", "a", "an", "total"})


def head_noun(tail: str) -> str:
    """The term of the last word of the noun phrase right after a value (up to three words,
    ending before a linking word): what the value counts ("20.7k A100 GPU hours" counts
    hours, not GPUs; "40 for fine-tuning" names no noun)."""
    for word in reversed(_noun_phrase(tail)):
        terms = word_terms(word.lower())
        if terms:
            return terms[0]
    return ""


def quantity_terms(text: str, start: int, length: int) -> frozenset[str]:
    """The terms naming the quantity a value sets: its clause before it ("peak learning rate
    eta_0 ="), else the words right after it ("64 A100 GPUs", "T = 40 training epochs")."""
    before = claim_terms(_CLAUSE.split(text[:start])[-1])
    tail = text[start + length:]
    after: frozenset[str] = frozenset()
    if re.match(r"\s+[A-Za-z]", tail):  # "40 training epochs", not a unit ("5s", "8x")
        after = claim_terms(" ".join(re.split(r"[,;:()\[\].]", tail, maxsplit=1)[0].split()[:3]))
    return before | after


def claim_terms(text: str) -> frozenset[str]:
    """The terms of a claim's text, an acronym's plural read as its singular too ("GPUs" is
    `gpu` as well as `gp` and `us`)."""
    plurals = " ".join(m.group(1).lower() + "s" for m in re.finditer(r"\b([A-Z]{2,})s\b", text))
    return frozenset(term_set(text)) | frozenset(term_set(plurals))


def value_findings(index: RepoIndex, claim: Claim, check: ClaimCheck,
                   paper_numbers: frozenset[str] = frozenset()) -> tuple[list[Finding], bool]:
    """Findings: a stated value bound nowhere while its quantity's own name holds another
    value (failing numerical claims; a reason only for the others); a numerical claim none of
    whose values is set. Also whether every value the claim states is bound to a name of its
    quantity."""
    out, bound = [], []
    values = stated_values(claim.text)
    stated = frozenset(k for v in values for k in v.keys)
    context = claim_context(claim.text)
    everywhere = _bound_numbers(index)
    for value in values:
        quantity = quantity_of(value, values, context)
        if not quantity and not value.symbol:
            continue
        related = [*related_assignments(index, quantity), *symbol_assignments(index, value)]
        bound.append(any(a.numbers & value.keys for a in related) or counts_items(related, value))
        if bound[-1] or value.unit or (not value.trivial and value.keys & everywhere):
            continue  # bound, or set under another name: not a contradiction to report
        others = [a for a in related if not a.numbers & stated and scalar(a) and in_namespace(
            a, context.terms) and (a.name.lower() == value.symbol or strongly_related(
                a, quantity, context.terms))]
        if others:
            a = others[0]
            out.append(Finding("value_conflict", f"{a.path} = {shown(a)} at {a.file}:{a.line}, "
                                                 f"but the claim states {value.text}",
                               f"{a.file}:{a.line}", fails=claim.dimension == Dimension.D1))
    seen = {f.where for f in out}
    out += [f for f in evidence_conflicts(index, claim, check, values, context, paper_numbers)
            if f.where not in seen]
    # The values the claim states (not its labels, years or model names): none set in code.
    if claim.dimension == Dimension.D1 and values and \
            not any(v.keys & view(index).code_numbers for v in values):
        out.append(Finding("values_absent", "none of the claim's values "
                                            f"({', '.join(v.text for v in values)}) is set in "
                                            "code or config"))
    return out, bool(bound) and all(bound)


def quantity_of(value: StatedValue, values: list[StatedValue], context: ClaimContext,
                any_value: bool = False) -> frozenset[str]:
    """The value's quantity terms; a claim's only value named by a symbol alone takes its
    head's words ("Effective batch size: 40", "Label smoothing: eps = 0.1"), and so does any
    such value with `any_value` ("Chunk and condition lengths: l=16, P_max=49"), as does a
    claim's only value however named ("Frequency of the inner loop: every 10,000 steps")."""
    if len(values) == 1 and any_value or not value.quantity - _SYMBOLS - _GENERIC and (
            len(values) == 1 or any_value):
        return value.quantity | context.head
    return value.quantity


def mentioned_numbers(text: str) -> frozenset[str]:
    """Every number a text mentions, normalised, with 1024 for "1k" (a "1k" context is 1024
    tokens as often as 1000) and each share of another number ("10% warmup" of "100k
    steps" is 10,000 steps)."""
    numbers = extract_numbers(text)
    shares = [n.value / 100 for n in numbers if n.percent]
    return frozenset(normalise(n.value) for n in numbers) | {
        normalise(n.value * 1.024) for n in numbers if n.raw[-1:] in "kK"} | {
        normalise(share * n.value) for share in shares for n in numbers
        if not n.raw.endswith("%")}


def evidence_conflicts(index: RepoIndex, claim: Claim, check: ClaimCheck,
                       values: list[StatedValue], context: ClaimContext,
                       paper_numbers: frozenset[str] = frozenset()) -> list[Finding]:
    """Where the check finds the claim (its two best evidence windows), the name of a stated
    value's quantity is bound to a value the claim does not state: the code that implements
    the claim sets the value otherwise, whatever other places hold the stated one. No
    conflict when an assignment of that very name in the same file holds the stated value
    and this one holds a number the paper states elsewhere (`paper_numbers`: a second
    configuration, stage or model size side by side), when the name's namespace is another
    stage's, or when the name holds any number the claim mentions (`8` of "6 (B) / 8
    (L)")."""
    windows = [(e.file, e.start_line, e.end_line) for e in check.evidence[:2]]
    near = [a for a, _ in _name_terms(index) if any(
        a.file == f and start <= a.line <= end for f, start, end in windows)]
    near += lookup_defaults(index, windows)
    mentioned = mentioned_numbers(claim.text)
    out = list_conflicts(claim, near, values, context, mentioned)
    values = stated_values(claim.text, small=True)
    ones = [a for a in near if _is_one(a)]
    near = [a for a in near if scalar(a) or config_scalar(a)]
    for value in values:
        if value.unit or value.per:
            continue
        # Names are only looked at where the claim is found and must hold a number the claim
        # never mentions, so a symbol may take the head's words even beside other values.
        quantity = quantity_of(value, values, context, any_value=True)
        # a fraction's quantity set to 1 is a value, not a flag or a counter's start
        candidates = near + ones if not value.whole else near
        taken = taken_by_others(value, values, claim.text)
        wrong = [a for a in candidates if not a.numbers & mentioned and
                 (in_namespace(a, context.terms) or a.name.lower() == value.symbol or
                  in_settings(a) or a.source == "default" and len(a.name) > 2) and
                 not numbered_elsewhere(a, claim.text) and
                 names_quantity(a, value, quantity, context, taken) and
                 not (holds_elsewhere(index, a, value) and a.numbers & paper_numbers)]
        if wrong:
            a = wrong[0]
            out.append(Finding("value_conflict", f"{a.path} = {shown(a)} at {a.file}:{a.line}, "
                                                 "where the claim is implemented, but the claim "
                                                 f"states {value.text}", f"{a.file}:{a.line}",
                               fails=claim.dimension == Dimension.D1))
    return out


#: A key read with a default in place (`cfg.get("sampling_steps", 50)`, `getattr(args,
#: "lr", 1e-4)`, `kwargs.pop("tau", 0.1)`): the default is what runs when nothing sets it.
_LOOKUP_DEFAULT = re.compile(r"(?:\.get|\.pop|\bgetattr)\(\s*(?:[\w.]+\s*,\s*)?[\"'](\w+)[\"']"
                             r"\s*,\s*(-?\d[\d_]*\.?\d*(?:[eE][-+]?\d+)?)\s*\)")


def lookup_defaults(index: RepoIndex, windows: list[tuple[str, int, int]]
                    ) -> list[Assignment]:
    """The keys read with a numeric default in the windows, as assignments of the default."""
    out = []
    for file, start, end in windows:
        entry = index.files.get(file)
        if entry is None or entry.lang != "python":
            continue
        for number in range(start, min(end, len(entry.lines)) + 1):
            for found in _LOOKUP_DEFAULT.finditer(entry.lines[number - 1]):
                text = found.group(2).replace("_", "")
                value = float(text) if re.search(r"[.eE]", text) else int(text)
                out.append(Assignment(found.group(1), found.group(1), value, file, number,
                                      "default", frozenset(number_keys(text))))
    return out


#: Nouns a size is counted in, not what it sizes ("128 units", "48 dims", "512 neurons").
_SIZE_UNITS = frozenset({"unit", "dim", "dimension", "ele", "neuron"})
#: Words of a name that say how values are held, not which (`hidden_shape`, `lr_list`).
_CONTAINERS = frozenset({"shape", "list", "tuple", "size", "choic"})


def list_conflicts(claim: Claim, near: list[Assignment], values: list[StatedValue],
                   context: ClaimContext, mentioned: frozenset[str]) -> list[Finding]:
    """A list of numbers named as a stated value's quantity (`hidden_shape = [1280, 128,
    128]` for "3 hidden layers of 128 units") that holds a value the claim states beside one
    it never mentions: the claim's list with an element changed."""
    out = []
    for a in near:
        if not isinstance(a.value, (list, tuple)) or len(a.value) < 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in a.value):
            continue
        hits, misses = a.numbers & mentioned - {"0", "1"}, a.numbers - mentioned
        named = [v for v in values if v.keys & hits and names_quantity(
            a, v, quantity_of(v, values, context, any_value=True), context)]
        if hits and misses and named:
            out.append(Finding("value_conflict", f"{a.path} = {shown(a)} at {a.file}:{a.line}, "
                                                 "where the claim is implemented, holds "
                                                 f"{', '.join(sorted(misses))}, but the claim "
                                                 f"states {named[0].text}",
                               f"{a.file}:{a.line}", fails=claim.dimension == Dimension.D1))
    return out


#: Generic words that still tell two quantities apart (`min_lr` and `max_lr`).
_QUALIFIERS = frozenset({"min", "minimum", "max", "maximum", "init", "initial"})
#: Parts of an identifier that make it a count (`n_layers`, `num_models`).
_COUNTS = frozenset({"n", "num", "nb", "number", "count"})
#: Parts of an identifier that say nothing of its quantity (`num_steps` is `steps`).
_NO_QUANTITY = frozenset({"num", "n", "nb", "number", "count", "total", "cfg", "config", "args",
                          "self", "default", "hparams", "param", "params"})


def names_quantity(a: Assignment, value: StatedValue, quantity: frozenset[str],
                   claim: ClaimContext, taken: frozenset[str] = frozenset()) -> bool:
    """`a` is named as the value's quantity: the identifier the claim binds it to, in the same
    parts (`num_inference_steps` for `inference_steps=100`, not `min_lr` for `max_lr` nor
    `beta2` for `beta1`), or, when the claim gives no identifier longer than a letter, that
    letter (`N` for "N = 20") or a name whose every part is a word of the quantity, of the
    claim or generic, one at least the quantity's (`max_steps` is not "sampling steps",
    `weight_decay_t2i` not "weight decay", but `downstream_epochs` is "Downstream task: 500
    epochs"). A claim's word that names another of its values (`taken`: "warmup" of "1000
    epochs (200 warmup)") does not make the name this value's (`warmup_epochs`)."""
    if a.name.lower() == value.symbol:
        return True
    if len(value.symbol) > 1:
        parts, own = _name_parts(a.name, claim), _parts(value.symbol)
        # the claim's identifier with words of the claim before or after it (`fno_modes` for
        # "FNO baseline: modes=16"), none of them a qualifier or another value's word
        return bool(parts) and own <= parts and all(
            p not in _QUALIFIERS and any(covered(t, claim.terms - taken) for t in word_terms(p))
            for p in parts - own)
    if _COUNTS & {p.lower() for p in split_identifier(a.name)} and not value.whole:
        return False  # `n_models` counts models: it is not "models at $5.00"
    if value.count and not counts_noun(a.name, value.head):
        return False  # "5 seeds" is no `seed = 42`
    if value.head and value.head not in _SIZE_UNITS and not any(
            covered(value.head, frozenset(word_terms(p))) for p in _parts(a.name)):
        return False  # `gpus` is not "GPU hours"
    named = False
    for part in _name_parts(a.name, claim):
        words = frozenset(word_terms(part))
        if not words and part in _LINKS:
            continue  # `queries_per_prompt`
        if not words:  # a digit or a letter the quantity's words cannot vouch for
            return False
        if words <= (_GENERIC | _CONTAINERS | _SIZE_UNITS) - _QUALIFIERS:
            continue
        of_quantity = any(covered(t, quantity) for t in words)
        # Another word of the claim may say whose quantity it is (`downstream_epochs` for
        # "Downstream task: 500 epochs"); a qualifier must be the quantity's own.
        if not of_quantity and (words <= _QUALIFIERS or not any(
                covered(t, claim.terms - taken) for t in words)):
            return False
        named = named or (of_quantity and bool(words - _QUALIFIERS))
    return named


def taken_by_others(value: StatedValue, values: list[StatedValue], text: str
                    ) -> frozenset[str]:
    """The words naming the claim's other values' quantities, or what its other numbers
    count ("(200 warmup)"), and not this value's quantity."""
    others = set().union(*(v.quantity for v in values if v is not value))
    for number in extract_numbers(text):
        if number.start != value.start:
            others |= term_set(" ".join(_noun_phrase(text[number.start + len(number.raw):])))
    return frozenset(others) - value.quantity


def _noun_phrase(tail: str) -> list[str]:
    """The (up to three) words right after a value, up to a linking word or a stop."""
    if not re.match(r"\s+[A-Za-z]", tail):
        return []
    phrase = []
    for word in re.split(r"[,;:()\[\].]", tail, maxsplit=1)[0].split()[:3]:
        if word.lower() in _LINKS:
            break
        phrase.append(word)
    return phrase


def counts_noun(name: str, noun: str) -> bool:
    """The name counts `noun`: it has a count word beside the noun (`n_gpus`, `num_layer`),
    or the noun in the plural after a word that says which (`train_samples`,
    `convlstm_layers`; a bare `epochs` may count any epochs of the system)."""
    parts = [p.lower() for p in split_identifier(name)]
    has_noun = [p for p in parts if covered(noun, frozenset(word_terms(p)))]
    return bool(has_noun) and (bool(_COUNTS & set(parts)) or len(parts) > 1 and any(
        p.endswith("s") for p in has_noun))


def _parts(name: str) -> frozenset[str]:
    return frozenset(p.lower() for p in split_identifier(name)) - _NO_QUANTITY


def _name_parts(name: str, claim: ClaimContext) -> frozenset[str]:
    """The parts of a name, a piece of it with a digit kept whole when the claim writes it so
    (`p2vae` for "P2VAE training", `stage3` for "Stage 3"): the claim's word, not a letter
    and a digit."""
    parts: set[str] = set()
    for piece in re.split(r"[_\W]+", name.lower()):
        if re.search(r"\d", piece) and piece in claim.joined:
            parts.add(piece)
        else:
            parts.update(split_identifier(piece))
    return frozenset(parts) - _NO_QUANTITY


def holds_elsewhere(index: RepoIndex, near: Assignment, value: StatedValue) -> bool:
    """Another assignment of exactly this name in the same file holds the stated value."""
    return any(a.name == near.name and a.file == near.file and a.numbers & value.keys
               for a, _ in _name_terms(index))


def symbol_assignments(index: RepoIndex, value: StatedValue) -> list[Assignment]:
    """Assignments to the very name the claim binds the value to (`h=0.025`, `mlp_dim=512`)."""
    if not value.symbol:
        return []
    return [a for a, _ in _name_terms(index) if a.name.lower() == value.symbol]


def _bound_numbers(index: RepoIndex) -> set[str]:
    """Every number some name is bound to (comments and free literals left out)."""
    found = index.cache.get("alignment_bound_numbers")
    if found is None:
        found = index.cache["alignment_bound_numbers"] = {
            k for a, _ in _name_terms(index) for k in a.numbers}
    return found


def _is_one(a: Assignment) -> bool:
    return isinstance(a.value, (int, float)) and not isinstance(a.value, bool) and \
        abs(a.value) == 1


def scalar(a: Assignment) -> bool:
    """A number that is neither a flag nor a 0/1 initialisation."""
    return isinstance(a.value, (int, float)) and not isinstance(a.value, bool) and \
        abs(a.value) not in (0, 1)


def config_scalar(a: Assignment) -> bool:
    """A configuration file's number (`timesteps: 40` is read as the text `40`)."""
    if a.source != "config" or not isinstance(a.value, str) or len(a.numbers) != 1:
        return False
    try:
        return abs(float(a.value)) not in (0.0, 1.0)
    except ValueError:
        return False


#: The last word of a class that holds settings (`DiffusionConfig`, `TrainArgs`).
_SETTINGS = re.compile(r"(?:config|configuration|args|arguments|params|parameters|settings|"
                       r"hparams|hyperparameters|options|cfg)$", re.IGNORECASE)


def numbered_elsewhere(a: Assignment, text: str) -> bool:
    """The name's namespace is numbered (`stage1`, `phase_2`) and the claim gives that word
    another number ("Stage 2 training"): another stage's setting."""
    for part in a.path.lower().split(".")[:-1]:
        found = re.fullmatch(r"([a-z]+)_?(\d+)", part)
        if found:
            given = re.findall(rf"\b{found.group(1)}\s*(\d+)", text.lower())
            if given and found.group(2) not in given:
                return True
    return False


def in_settings(a: Assignment) -> bool:
    """A field of a settings class, or a key of a configuration file: its container names the
    part of the system it configures (`DiffusionConfig`), which a claim about one of its
    values need not name."""
    parts = [p for p in a.path.split(".")[:-1] if p not in ("__init__", "__post_init__")]
    return a.source == "config" or (len(parts) == 1 and bool(_SETTINGS.search(parts[0])))


def in_namespace(a: Assignment, claim: frozenset[str]) -> bool:
    """The name's namespace (`TrainConfig`, `optimizer`, `scatter`) is generic or named by
    the claim: `scatter.s` is not the claim's `s`."""
    space = frozenset(t for part in a.path.split(".")[:-1] for t in name_terms(part))
    return all(covered(t, claim) for t in space - _GENERIC)


@dataclass(frozen=True)
class ClaimContext:
    """The terms of a whole claim, and of its head (`Label smoothing coefficient: ...`)."""

    terms: frozenset[str]
    head: frozenset[str]
    joined: frozenset[str] = frozenset()  # words with digits, as names write them: `stage3`


def claim_context(text: str) -> ClaimContext:
    head = text.split(":", 1)[0] if ":" in text[:100] else ""
    joined = {m.group(0).lower() for m in re.finditer(r"\b[A-Za-z]+\d\w*", text)} | {
        (m.group(1) + m.group(2)).lower()
        for m in re.finditer(r"\b([A-Za-z]+)[\s_-]?(\d+)\b", text)}
    # "fine-tuning" is `finetune` in code as often as `fine_tuning`
    hyphenated = {t for m in re.finditer(r"\b([A-Za-z]+)-([A-Za-z]+)\b", text)
                  for t in word_terms((m.group(1) + m.group(2)).lower())}
    return ClaimContext(claim_terms(text) | hyphenated, claim_terms(head),
                        frozenset(joined))


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
    """A name made of the quantity's own words (`epochs` for "40 training epochs",
    `label_smoothing` for "Label smoothing coefficient: epsilon = 0.1"): every part named by
    the claim, one at least by the quantity."""
    specific = name_terms(a.name) - _GENERIC
    return bool(specific) and max(map(len, specific)) >= 3 and \
        any(covered(t, quantity) for t in specific) and \
        all(covered(t, quantity | claim) for t in specific)


def name_terms(name: str) -> frozenset[str]:
    """The terms of an identifier's parts (without the joined form `labelsmoothing`)."""
    return frozenset(t for part in split_identifier(name) for t in word_terms(part))


def covered(term: str, terms: frozenset[str]) -> bool:
    """`term` is in `terms`, or differs from one of them by an ending (`clip` and `clipp`)."""
    if term in terms:
        return True
    return len(term) >= 4 and any(len(t) >= 4 and abs(len(t) - len(term)) <= 3 and (
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


def concrete_stub_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                           ) -> list[Finding]:
    """A method that only raises NotImplementedError, of a class nothing can stand in for (not
    an abstract base, not subclassed in the repository), where the class is named after the
    claim (`GatingModule.forward` for a gating claim) or the method carries it: a constructor
    or `forward` of that class that raises makes the claim's code unusable, whatever other
    classes implement methods of the same name."""
    claim_terms = frozenset(term_set(claim.text)) - _GENERIC
    carrying = {d.qualname for d in carriers(index, check)}
    # the classes whose methods carry the claim: a constructor of theirs that raises stops
    # every one of those methods
    carrying_classes = {q.rsplit(".", 1)[0] for q in carrying if "." in q}
    out = []
    for d, owner in _concrete_stubs(index):
        words = name_terms(owner) - _GENERIC
        doing = d.name in _WHAT_A_CLASS_DOES or all(
            covered(t, claim_terms) for t in name_terms(d.name) - _GENERIC)
        named = bool(words) and all(covered(t, claim_terms) for t in words) and doing
        constructs = d.name in ("__init__", "setup") and \
            d.qualname.rsplit(".", 1)[0] in carrying_classes
        if named or constructs or d.qualname in carrying:
            out.append(Finding("stub", f"{d.qualname} is a stub ({d.stub}) of a class nothing "
                                       "else implements", f"{d.file}:{d.start}"))
    return out[:3]


#: Methods that are what a class does, whatever it is about (`forward` of a gating module).
_WHAT_A_CLASS_DOES = frozenset({"__init__", "__post_init__", "__call__", "forward", "setup",
                                "step", "run", "apply", "compute", "train_step", "sample"})
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
    claim_terms = frozenset(term_set(claim.text)) - _GENERIC
    stubs = {name: d for name, d in _stub_functions(index).items()
             if any(covered(t, claim_terms) for t in name_terms(name) - _GENERIC)}
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
    found = {d.qualname: d for d in index.functions() if d.qualname == check.function}
    for e in check.evidence:
        if e.kind == EvidenceKind.CODE:
            for line in range(e.start_line, e.end_line + 1):
                owner = index.enclosing(e.file, line)
                if owner is not None:
                    found.setdefault(owner.qualname, owner)
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
