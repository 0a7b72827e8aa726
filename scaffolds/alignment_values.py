"""The alignment check's value rule: is every value a claim states set as the claim says?

Every value the claim states (distinctive numbers always, small round numbers when the claim
assigns them, `tau = 5.0`) is set in code or config, and where a name of the claim's quantity
(`epochs` for "40 training epochs") is bound, it is bound to that value. In particular, where
the check finds the claim implemented (its best evidence windows), the quantity's own name
holds the stated value, whatever copies elsewhere hold: a name counts as the quantity's when
it is the identifier the claim uses, or when all its words are the quantity's or the claim's
(`downstream_epochs` for "Downstream task: 500 epochs"); a key read with a default
(`cfg.get("steps", 50)`) and a list of the claim's values (`[128, 128, 128]`) count too, and
indexed symbols are read as one list (`betas=(0.9, 0.95)` for "beta1=0.9, beta2=0.95").
A parameter default that every call of its function keeps is what runs, as a setting is
(`default_conflicts`). Sections of one configuration may set a quantity per stage, but where
one holds the claim's value, a sibling of the same name holds a value of the paper's too,
not one the paper states nowhere (`sibling_conflicts`). Where the claim is implemented, the
functions that hold its evidence initialise as the claim says: a normal initialisation takes
the claim's standard deviation (`normal_std_conflicts`), and a setting named in the claim's own
terms holds a number the paper writes somewhere, in its text or its claims
(`unwritten_conflicts`); a setting there holding a number the paper never writes, where a
setting of the very same name holds the claim's value, is a copy that departs from the paper
(`copy_conflicts`), and so is such a setting anywhere in the claim's evidence whose copy with
the claim's value is in another file (a configuration file against a code default).
In every evidence window, whatever value the claim states, a setting no model can run with
fails a numerical claim: a fraction its name names outside its bounds (`hidden_dropout_prob =
1`, `ema_decay = 9.999`: `impossible_fractions`), or a head count that does not divide the
width beside it (`unsplit_widths`; a claim about heads reads every head count).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from sabench.scaffolds.alignment_formulas import GREEK, python_module
from sabench.scaffolds.alignment_rules import GENERIC, Finding, covered, name_terms
from sabench.verifiers.checks import ClaimCheck, view
from sabench.verifiers.index import Assignment, RepoIndex, const_value, parse_python
from sabench.verifiers.numbers import (
    GROUPED_THOUSANDS,
    Number,
    extract_numbers,
    is_trivial,
    normalise,
    number_keys,
)
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.stubs import call_name
from sabench.verifiers.terms import split_identifier, term_set, word_terms
from sabench.verifiers.types import EvidenceKind

_ASSIGNED = re.compile(r"(?:=|(?<![\d\s]):|≈)\s*$")  # not a slice or ratio (`[0:3]`, `3:1`)
_LABEL = re.compile(r"(?:eq\.?|equation|eqs\.?|section|sec\.?|table|tab\.?|figure|fig\.?|"
                    r"appendix|algorithm|alg\.?|theorem|lemma|step|phase|stage|proposition|"
                    r"corollary|definition|line|top|rank|row|p|g)\s*[\(\[]?-?$", re.IGNORECASE)
_OPERATOR_BEFORE = re.compile(r"[-+*/^×·√(|_{]\s*$|\\[a-z]+\s*\{?\s*$")
_OPERATOR_AFTER = re.compile(r"^\s*[-+*/^×·)|}_]|^\s*\\(?:cdot|times)")
_CLAUSE = re.compile(r"[,;:()\[\]]|\band\b|\bwith\b|\bwhile\b|\bthen\b", re.IGNORECASE)
# Symbols a claim names a quantity by (`eta_0 = 0.1`); alone they do not say which quantity.
_SYMBOLS = frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "eps", "zeta", "eta",
                      "theta", "kappa", "lambda", "lam", "lmbda", "lambd", "mu", "nu", "xi",
                      "pi", "rho", "sigma", "sig", "tau", "phi", "chi", "psi", "omega",
                      "temperature", "mean", "std", "lr", "discount", "params", "alph"})


#: Greek letters spelt out: a claim's `gamma=0.97` is notation, `discount_rate` may hold it.
_GREEK_NAMES = frozenset(name.rstrip("_") for name in GREEK.values())

#: A word and a space before an assigned word: that word ends a phrase, it is no identifier.
_PHRASE_END = re.compile(r"[A-Za-z]{2,}\s+$")
#: The bounds of an index range (`vel[0:3]`, `joint positions[12:41]`) are positions.
_SLICE_BEFORE = re.compile(r"\[\s*-?\d*\s*:\s*$")
_SLICE_AFTER = re.compile(r"\s*:\s*-?\d*\s*\]")
#: The hyphen of a compound modifier: a number and a word joined (`32-frame`, `2-layer`).
_COMPOUND = re.compile(r"(?<=\d)-(?=[A-Za-z]{3,}\b)")
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
    every: bool = False  # "every 10,000 steps": a period (`eval_interval`), not a count
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
    text = _COMPOUND.sub(" ", text)  # "a 32-frame clip" counts frames: no subtraction
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
        elif _LABEL.search(before) or is_year(numbers[0]) and not _ASSIGNED.search(before) \
                or _OPERATOR_BEFORE.search(before) \
                or (_OPERATOR_AFTER.search(after) and not closes_assignment(before, after)
                    and not (raw != "1" and alternatives(before, after))) \
                or _SLICE_BEFORE.search(before) or _SLICE_AFTER.match(after):
            continue
        trivial = all(is_trivial(n.value) for n in numbers)
        # a price ("$5.00 per 1M tokens") is stated as surely as an assigned value
        loose = trivial and not _ASSIGNED.search(before) and not re.search(r"[$€£]\s*$", before)
        if trivial and numbers[0].value in (0.0, 1.0) or loose and not (
                small and head_noun(after)):
            continue
        keys = frozenset(normalise(n.value) for n in numbers)
        spelt = spelt_out(before)  # "β1=0.9" names `beta1`
        symbol = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*$", spelt)
        if symbol and _PHRASE_END.search(spelt[:symbol.start()]) and \
                len(symbol.group(1)) > 1 and symbol.group(1).isalpha() and \
                symbol.group(1).lower() not in _SYMBOLS:
            symbol = None  # "reverse sampling steps = 50": the last word of a phrase
        out.append(StatedValue(keys, raw, trivial, quantity_terms(text, start, length),
                               symbol.group(1).lower() if symbol else "",
                               bool(re.match(r"[A-Za-z]", after)),
                               per=bool(re.search(r"\bper\s*$", before, re.IGNORECASE)),
                               every=bool(re.search(r"\bevery\s*$", before, re.IGNORECASE)),
                               whole="." not in raw and float(numbers[0].value).is_integer(),
                               head=head_noun(text[start + length:]), count=loose,
                               start=start))
    return out


def spelt_out(text: str, apart: bool = False) -> str:
    """Greek letters and subscript digits as an identifier spells them (`β₁` is `beta1`);
    with `apart`, each letter between underscores, a part of its own (`wωz`: `w_omega_z`)."""
    for letter, name in GREEK.items():
        text = text.replace(letter, f"_{name.rstrip('_')}_" if apart else name.rstrip("_"))
    return text.translate(_SUBSCRIPTS)


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
    hours, not GPUs; "40 for fine-tuning" names no noun). A hyphenated word's head is its
    last part, as in any English compound ("4 mini-batches" counts batches)."""
    for word in reversed(_noun_phrase(tail)):
        terms = word_terms(word.lower().rsplit("-", 1)[-1])
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
        words = re.split(r"[,;:()\[\].]", tail, maxsplit=1)[0].split()[:3]
        # "1,000 queries per prompt", not the next value's name ("0.1 and warmup_steps=20")
        cut = next((i for i, w in enumerate(words) if _CLAUSE.fullmatch(w) or "=" in w),
                   len(words))
        after = claim_terms(" ".join(words[:cut]))
    return before | after


def claim_terms(text: str) -> frozenset[str]:
    """The terms of a claim's text, an acronym's plural read as its singular too ("GPUs" is
    `gpu` as well as `gp` and `us`)."""
    plurals = " ".join(m.group(1).lower() + "s" for m in re.finditer(r"\b([A-Z]{2,})s\b", text))
    return frozenset(term_set(text)) | frozenset(term_set(plurals))


def value_findings(index: RepoIndex, claim: Claim, check: ClaimCheck,
                   paper: PaperValues | None = None) -> tuple[list[Finding], bool]:
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
        # a fraction's quantity set to 1 is a value, not a flag or a counter's start
        others = [a for a in related if not a.numbers & stated and (
            scalar(a) or fraction(value) and _is_one(a)) and in_namespace(
            a, context.terms) and (a.name.lower() == value.symbol or strongly_related(
                a, quantity, context.terms))]
        if others:
            a = others[0]
            out.append(conflict(claim, a, f", but the claim states {value.text}"))
    out += settings_conflicts(index, claim, context, paper)
    out += default_conflicts(index, claim, context, paper)
    seen = {f.where for f in out}
    out += [f for f in evidence_conflicts(index, claim, check, values, context, paper)
            if f.where not in seen]
    seen = {f.where for f in out}
    out += [f for f in sibling_conflicts(index, claim, context, paper) if f.where not in seen]
    # The values the claim states (not its labels, years or model names): none set in code.
    if claim.dimension == Dimension.D1 and values and \
            not any(v.keys & view(index).code_numbers for v in values):
        out.append(Finding("values_absent", "none of the claim's values "
                                            f"({', '.join(v.text for v in values)}) is set in "
                                            "code or config"))
    return out, bool(bound) and all(bound)


def settings_conflicts(index: RepoIndex, claim: Claim, context: ClaimContext,
                       paper: PaperValues | None = None) -> list[Finding]:
    """The settings (config files and classes, command-line defaults) that bind the very
    identifier the claim gives a value (`rope_base=10000`), or that count the noun a small
    number counts ("1,000 classes": `num_classes`), hold none of the claim's numbers, but
    another: what runs is the setting, whatever default some function keeps."""
    out = []
    mentioned = mentioned_numbers(claim.text)
    counted = stated_values(claim.text, small=True)
    for value in counted:
        settings = [a for a in _settings(index) if _configures(a, value, counted, claim,
                                                               context)]
        holders = settings
        if not settings and not (value.trivial or value.unit or value.per):
            # a setting named with the quantity's words alone (`test_pairs`), unless another
            # named with them and the claim's (`eco_memory_size`, `training_steps_code`)
            # holds the value
            settings = [a for a in _settings(index) if spells_quantity(a.name, value)]
            holders = settings + [a for a in _settings(index) if strongly_related(
                a, value.quantity, context.terms)]
        if any(a.numbers & mentioned - {"0", "1"} for a in holders):
            continue  # one holds it (any section: `VPConfig` for "video prediction"); 0 and 1
            # are unset or switched off, a `coco.num_classes = 0` holds no number of a claim
        wrong = [a for a in settings if (scalar(a) or config_scalar(a) or
                                         fraction(value) and _is_one(a)) and
                 in_namespace(a, context.terms) and not numbered_elsewhere(a, claim.text)
                 and not (scoped(a, value) and stated_for(a, paper or {}))]
        if wrong:
            a = wrong[0]
            out.append(conflict(claim, a, " is the setting of what the claim states as "
                                          f"{value.text}"))
    return out


def sibling_conflicts(index: RepoIndex, claim: Claim, context: ClaimContext,
                      paper: PaperValues | None = None) -> list[Finding]:
    """A setting of the claim's quantity holds the claim's value in one place and, under the
    same name in another, a number that no claim of the paper states: the sections of a
    configuration may set a quantity for each stage or task the paper describes, each to the
    paper's value for it (which `settings_conflicts` accepts wherever one holds the claim's),
    but a value the paper gives nowhere is no stage's; it departs from the paper."""
    out = []
    stated_anywhere = frozenset(paper or ()) | mentioned_numbers(claim.text) | {"0", "1"}
    paper_terms = frozenset(t for held in (paper or {}).values() for _, _, c in held
                            for t in c.terms)
    counted = stated_values(claim.text, small=True)
    # names that hold a number no claim states: the rule reads nothing else (cheap to test)
    unstated = {a.name for a in _settings(index) if _unstated(a, stated_anywhere)}
    for value in counted:
        if value.trivial or value.unit or value.per or not unstated & {
                a.name for a in _settings(index) if a.numbers & value.keys}:
            continue
        # the quantity read with the claim's head ("Learning rate schedule: max = 4e-4")
        headed = replace(value, quantity=value.quantity | context.head)
        settings = [a for a in _settings(index) if _configures(a, value, counted, claim,
                                                               context)] or \
            [a for a in _settings(index) if spells_quantity(a.name, headed)]
        names = {a.name for a in settings if a.numbers & value.keys}
        odd = [a for a in settings if a.name in names and _unstated(a, stated_anywhere) and
               in_namespace(a, context.terms) and not numbered_otherwise(a, context) and
               not another_configuration(index, a, context.terms, paper_terms)]
        if odd:
            out.append(conflict(claim, odd[0], f", which no claim of the paper states, while "
                                               f"another {odd[0].name} holds {value.text}"))
    return out


def _unstated(a: Assignment, stated: frozenset[str]) -> bool:
    """`a` sets one number, and not one of `stated`."""
    return (scalar(a) or config_scalar(a)) and not a.numbers & stated


def numbered_otherwise(a: Assignment, context: ClaimContext) -> bool:
    """A section above `a` is a numbered label the claim does not write (`stage1.lr` for a
    claim about stage 2): another stage's setting."""
    return any(f"{word}{number}" not in context.joined for section in a.path.split(".")[:-1]
               for word, number in re.findall(r"([a-z]+)_?(\d+)", section.lower()))


def another_configuration(index: RepoIndex, a: Assignment, claim: frozenset[str],
                          paper: frozenset[str]) -> bool:
    """`a` is set in a function named for something else the paper describes and the claim
    does not (`get_dense_400b_config` for a claim about the MoE model)."""
    owner = index.enclosing(a.file, a.line)
    return owner is not None and any(covered(t, paper) and not covered(t, claim)
                                     for t in name_terms(owner.name) - GENERIC)


def scoped(a: Assignment, value: StatedValue) -> bool:
    """`a` qualifies the claim's identifier with a scope (`global_batch_size` for
    "batch_size=384"): one setting in force for every stage, which may hold the value the
    paper states for another stage."""
    return bool(quantity_parts(a.name) & _SCOPES) and not quantity_parts(value.symbol) & _SCOPES


def _settings(index: RepoIndex) -> list[Assignment]:
    """The repository's settings: config files and classes, command-line defaults (cached)."""
    found = index.cache.get("alignment_settings")
    if found is None:
        found = [a for a, _ in _name_terms(index) if in_settings(a) or a.source == "argparse"]
        index.cache["alignment_settings"] = found
    return found


def _configures(a: Assignment, value: StatedValue, values: list[StatedValue], claim: Claim,
                context: ClaimContext) -> bool:
    """`a` is named as the claim's own identifier for the value, or counts the noun the
    value counts, in words of the claim."""
    if len(value.symbol) > 1 and not _math_symbol(value.symbol):
        own, parts = identifier_parts(value.symbol, a.name, context)
        return bool(own) and own <= parts and names_quantity(a, value, value.quantity, context)
    return value.count and bool(value.head) and counts_noun(a.name, value.head) and \
        names_quantity(a, value, quantity_of(value, values, context, any_value=True), context,
                       taken_by_others(value, values, claim.text))


def spells_quantity(name: str, value: StatedValue) -> bool:
    """The name is the words of the value's quantity and nothing else, two of them at least,
    the noun the value is of among them (`test_pairs` for "250 test pairs", not
    `learning_rate` for "eigen learning rates for the 1B model"): the setting of that very
    quantity, whatever stage it is in."""
    parts = [frozenset(word_terms(p)) for p in quantity_parts(name)]
    return len(parts) >= 2 and all(words and any(covered(t, value.quantity) for t in words)
                                   for words in parts) and \
        (not value.head or any(covered(value.head, words) for words in parts))


def quantity_of(value: StatedValue, values: list[StatedValue], context: ClaimContext,
                any_value: bool = False) -> frozenset[str]:
    """The value's quantity terms; a claim's only value named by a symbol alone takes its
    head's words ("Effective batch size: 40", "Label smoothing: eps = 0.1"), and so does any
    such value with `any_value` ("Chunk and condition lengths: l=16, P_max=49"), as does a
    claim's only value however named ("Frequency of the inner loop: every 10,000 steps")."""
    symbol_only = not value.quantity - _SYMBOLS - GENERIC
    alone = len(values) == 1
    if alone and (any_value or symbol_only) or symbol_only and any_value:
        return value.quantity | context.head
    return value.quantity


def mentioned_numbers(text: str) -> frozenset[str]:
    """Every number a text mentions, normalised, with 1024 for "1k" (a "1k" context is 1024
    tokens as often as 1000) and each share of another number that counts ("10% warmup" of
    "100k steps" is 10,000 steps; 10% of a weight decay of 0.01 is nothing the text says)."""
    numbers = extract_numbers(text)
    shares = [n.value / 100 for n in numbers if n.percent]
    return frozenset(normalise(n.value) for n in numbers) | {
        normalise(n.value * 1.024) for n in numbers if n.raw[-1:] in "kK"} | {
        normalise(share * n.value) for share in shares for n in numbers
        if not n.raw.endswith("%") and float(n.value).is_integer() and n.value > 1}


def evidence_conflicts(index: RepoIndex, claim: Claim, check: ClaimCheck,
                       values: list[StatedValue], context: ClaimContext,
                       paper: PaperValues | None = None) -> list[Finding]:
    """Where the check finds the claim (its two best evidence windows), the name of a stated
    value's quantity is bound to a value the claim does not state: the code that implements
    the claim sets the value otherwise, whatever other places hold the stated one. No
    conflict when an assignment of that very name in the same file holds the stated value
    and this one holds a value the paper states for a quantity of this name (`paper`: a
    second configuration, stage or model size side by side; a learning rate of 0.02 is not
    excused by an initialisation std of 0.02), when the name's namespace is another stage's,
    or when the name holds any number the claim mentions (`8` of "6 (B) / 8 (L)")."""
    every_window = [(e.file, e.start_line, e.end_line) for e in check.evidence]
    windows = every_window[:2]
    near = in_windows(index, windows)
    near += lookup_defaults(index, windows)
    near += constructed_values(index, near)
    near += [labelled for a in near if (labelled := under_label(a, context)) is not None]
    near += [branch for a in near for branch in branch_values(index, a)]
    mentioned = mentioned_numbers(claim.text)
    out = list_conflicts(claim, near, values, context, mentioned)
    # a fraction out of [0, 1] is no other stage's value, nor any setting's: every name that
    # says it is the claim's kind of fraction counts, wherever it is (and a name that says
    # which fraction it is without the claim's words, in any window of the claim)
    in_any_window = in_windows(index, every_window)
    anywhere = in_any_window + lookup_defaults(index, every_window)
    out += fraction_conflicts(claim, near + anywhere + fraction_settings(index), values)
    out += [f for f in impossible_fractions(claim, anywhere)
            if f.where not in {g.where for g in out}]
    # a claim about heads has every head count of the repository in it
    counts = head_counts(index) if "head" in claim_terms(claim.text) else []
    out += [f for f in unsplit_widths(index, claim, anywhere + counts)
            if f.where not in {g.where for g in out}]
    out += index_range_conflicts(claim, near)
    out += [f for f in drifted_list_conflicts(index, claim, near, context, mentioned)
            if f.where not in {g.where for g in out}]  # a long list both list rules read
    out += range_conflicts(claim, near, context, windows)
    out += [f for f in bound_setting_conflicts(index, claim, context, windows)
            if f.where not in {g.where for g in out}]
    out += normal_std_conflicts(index, claim, near, windows, mentioned)
    if paper is not None and paper.written:
        written = paper.written | frozenset(paper) | mentioned
        out += unwritten_conflicts(claim, near, context, written)
        out += [f for f in copy_conflicts(index, claim, near, values, context, written)
                if f.where not in {g.where for g in out}]
        # in any window of the claim, where the check's localisation is weaker, only a copy
        # in another file counts: a configuration file against a code default
        out += [f for f in copy_conflicts(index, claim, in_any_window, values, context,
                                          written, other_files=True)
                if f.where not in {g.where for g in out}]
    out += shared_stem_conflicts(claim, near, values, mentioned)
    out += indexed_conflicts(index, claim, near + _settings(index), context)
    counted = stated_values(claim.text, small=True)  # "4 GPUs" too, compared by name only
    out += count_conflicts(index, claim, near, windows, counted, context, paper)
    ones = [a for a in near if _is_one(a)]
    near = [a for a in near if scalar(a) or config_scalar(a)]
    for value in counted:
        if value.unit or value.per:
            continue
        # Names are only looked at where the claim is found and must hold a number the claim
        # never mentions, so a symbol may take the head's words even beside other values.
        quantity = quantity_of(value, counted, context, any_value=True)
        # a fraction's quantity set to 1 is a value, not a flag or a counter's start
        candidates = near + ones if fraction(value) else near
        taken = taken_by_others(value, counted, claim.text)
        wrong = [a for a in candidates if not a.numbers & value.keys and
                 not excused(a, mentioned, counted, context) and
                 (in_namespace(a, context.terms) or a.name.lower() == value.symbol or
                  in_settings(a) or a.source == "default" and len(a.name) > 2 or
                  a.source == "kwarg" and (written_in(a.name, claim.text) or
                                           owner_named(a, context.terms))) and
                 not numbered_elsewhere(a, claim.text) and
                 names_quantity(a, value, quantity, context, taken) and
                 not (holds_elsewhere(index, a, value, context.terms) and
                      stated_for(a, paper or {}))]
        if wrong:
            a = wrong[0]
            out.append(conflict(claim, a, ", where the claim is implemented, but the claim "
                                          f"states {value.text}"))
    return out


def count_conflicts(index: RepoIndex, claim: Claim, near: list[Assignment],
                    windows: list[tuple[str, int, int]], values: list[StatedValue],
                    context: ClaimContext, paper: PaperValues | None) -> list[Finding]:
    """Where the check finds a numerical claim, a setting counts the noun one of its values
    counts ("64 tokens": `num_tokens_small`) but holds a number no claim of the paper states,
    and the window it stands in writes that value nowhere: the count where the claim is
    implemented is another, whatever other places write the claim's number for other
    reasons. A value named by an identifier is left to the identifier's own rules; a name
    with a word of the claim's other values is theirs."""
    if claim.dimension != Dimension.D1 or paper is None:
        return []
    mentioned = mentioned_numbers(claim.text)
    for value in values:
        if value.unit or value.per or value.symbol or not value.head:
            continue
        taken = taken_by_others(value, values, claim.text)
        foreign = [a for a in near if (scalar(a) or config_scalar(a)) and
                   not a.numbers & (mentioned | paper.keys()) and
                   counts_noun(a.name, value.head) and
                   not any(covered(t, taken) for t in name_terms(a.name) - GENERIC) and
                   not numbered_elsewhere(a, claim.text) and
                   not value.keys & window_numbers(index, [w for w in windows if w[0] == a.file
                                                           and w[1] <= a.line <= w[2]])]
        if foreign:
            return [conflict(claim, foreign[0], ", where the claim is implemented, which "
                                                f"writes no {value.text}")]
    return []


def window_numbers(index: RepoIndex, windows: list[tuple[str, int, int]]) -> set[str]:
    """The numbers the code (comments left out) of the evidence windows writes."""
    out: set[str] = set()
    for file, start, end in windows:
        entry = index.files.get(file)
        for line in entry.lines[max(0, start - 1):end] if entry else ():
            out |= number_keys(line.split("#", 1)[0])
    return out


@dataclass(frozen=True)
class Fraction:
    """A quantity that lies in [0, 1] whatever its setting: the words a claim names it by,
    and the word sets of which a name must hold one (`ema_decay` holds {ema, decay})."""

    label: str
    claim_words: frozenset[str]
    name_words: tuple[frozenset[str], ...]
    #: when set, the only other words the name may hold, generic ones aside (`adam_betas`,
    #: not `kl_beta`)
    companions: frozenset[str] | None = None
    #: 1 is out too: a dropout rate of 1 zeroes everything it applies to
    below_one: bool = False
    #: (bare names, section words): a name that is only one of the bare words is this
    #: quantity's in a section named with one of the section words (`EMAModel`'s `decay`)
    in_section: tuple[frozenset[str], frozenset[str]] | None = None

    def names(self, parts: set[str]) -> bool:
        """A name of these parts (lower case) is this quantity's."""
        if not any(group <= parts for group in self.name_words):
            return False
        return self.companions is None or not parts - GENERIC - self.companions - \
            frozenset().union(*self.name_words)

    def names_setting(self, a: Assignment) -> bool:
        """The setting `a` is this quantity's, by its name or by its name and section."""
        parts = set(split_identifier(a.name))
        if self.names(parts):
            return True
        if self.in_section is None or not parts or not parts <= self.in_section[0]:
            return False
        sections = {p for part in _sections(a) for p in split_identifier(part)}
        return bool(sections & self.in_section[1])

    def impossible(self, number: float) -> bool:
        return not 0 <= number <= 1 or self.below_one and number == 1


#: A probability (`uncond_prob`), a dropout or drop-path rate, a momentum (`ema_momentum`,
#: BatchNorm's), an exponential moving average's decay, and Adam's betas.
FRACTIONS = (
    Fraction("a probability", frozenset({"probability", "prob", "chance"}),
             (frozenset({"prob"}), frozenset({"probs"}), frozenset({"probability"}))),
    Fraction("a dropout rate", frozenset({"dropout", "drop"}),
             (frozenset({"dropout"}), frozenset({"drop", "path"}), frozenset({"drop", "rate"})),
             below_one=True),
    Fraction("a momentum", frozenset({"momentum"}), (frozenset({"momentum"}),)),
    Fraction("a moving average's decay", frozenset({"ema", "exponential"}),
             (frozenset({"ema", "decay"}),),
             in_section=(frozenset({"decay", "rate", "beta"}), frozenset({"ema"}))),
    Fraction("an Adam beta", frozenset({"adam", "adamw", "betas"}),
             (frozenset({"beta"}), frozenset({"betas"})),
             companions=frozenset({"adam", "adamw", "optimizer", "optim", "1", "2"})),
)
#: The fraction whose names are also other quantities' (a noise schedule's `beta`, a KL
#: weight's): it is Adam's only where its optimizer is named.
_AMBIGUOUS_FRACTION = FRACTIONS[-1]


def fraction_conflicts(claim: Claim, near: list[Assignment], values: list[StatedValue]
                       ) -> list[Finding]:
    """Where a claim that states a fraction of a quantity that is always one (a probability,
    a momentum, a moving average's decay, Adam's betas) is implemented, a name that says it
    is that quantity holds a number outside [0, 1] (`uncond_prob: 2.5` for "probability of
    dropping the condition: 0.25", `ema_momentum = 9.999`, `betas: [9, 0.95]`): no such
    quantity can be that, whatever setting the name is."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", claim.text)}
    if not any(fraction(v) for v in values):
        return []
    for kind in FRACTIONS:
        if words & kind.claim_words:
            for a in near:
                if kind.names_setting(a) and _holds_impossible(a, kind):
                    return [_impossible(claim, a, kind)]
    return []


def impossible_fractions(claim: Claim, near: list[Assignment]) -> list[Finding]:
    """Where a numerical claim is found (`near`: the settings of all its evidence windows), a
    setting whose name alone says which fraction it is holds a number no such fraction can
    (`hidden_dropout_prob = 1`, `decay: float = 9.999` in an `EMAModel`, `beta2=c.get("beta2",
    9.5)` of an AdamW): the code the claim is found in cannot train as any paper means,
    whatever value the claim states. A bare `beta` is Adam's only under an optimizer's name."""
    if claim.dimension != Dimension.D1:
        return []
    for a in near:
        for kind in FRACTIONS:
            if kind.names_setting(a) and _ends_with_fraction(a, kind) and \
                    _holds_impossible(a, kind) and (
                    kind is not _AMBIGUOUS_FRACTION or _under_optimizer(a)):
                return [_impossible(claim, a, kind)]
    return []


#: The words a fraction's name may end with after the fraction's own (`dropout_prob`).
_FRACTION_ENDINGS = frozenset({"rate", "prob", "p", "value"})


def _ends_with_fraction(a: Assignment, kind: Fraction) -> bool:
    """The name's last word (digits aside) is the fraction's: `ema_decay` and `beta2` are the
    fractions, `ema_decay_steps` and `momentum_encoder_dim` are what they count or size."""
    words = [w for w in split_identifier(a.name) if not w.isdigit()]
    return bool(words) and words[-1] in _FRACTION_ENDINGS.union(*kind.name_words)


def _holds_impossible(a: Assignment, kind: Fraction) -> bool:
    parts = split_identifier(a.name)
    # a log-probability (`log_prob`) is at most 0: its numbers are no drift
    held = _numbers_held(a) or ([1.0] if _is_one(a) else [])  # a scalar setting is no 1
    return not any(p.startswith("log") for p in parts) and \
        any(kind.impossible(number) for number in held)


def _under_optimizer(a: Assignment) -> bool:
    return bool(_path_words(a) & (_OPTIMIZER_WORDS | _AMBIGUOUS_FRACTION.claim_words - {"betas"}))


def _path_words(a: Assignment) -> set[str]:
    """The words of a setting's name and of every section above it."""
    return {p for part in a.path.split(".") for p in split_identifier(part)}


def _impossible(claim: Claim, a: Assignment, kind: Fraction) -> Finding:
    bounds = "[0, 1)" if kind.below_one else "[0, 1]"
    return conflict(claim, a, f" is {kind.label} outside {bounds}: no setting of it can be")


#: The last word of a head count's name (`num_attention_heads`, `n_head`, `nhead`), and the
#: words that only say it counts (`num_`) or which heads (`attention_`).
_HEAD_COUNTS = frozenset({"heads", "head", "nhead", "nheads"})
_COUNTING = frozenset({"num", "n", "number", "attention", "attn"})
#: The words that end the name of the width a layer's heads split (`hidden_size`, `d_model`,
#: `n_embd`, `attention_dim`).
_WIDTHS = tuple(frozenset(w.split()) for w in (
    "hidden size", "hidden dim", "d model", "model dim", "embed dim", "embedding dim",
    "emb dim", "n embd", "dim", "width", "hidden"))
#: The words that end the name of a head's own size: heads that are given one as a number
#: need not split the width (`inner_dim = heads * dim_head`).
_HEAD_SIZES = tuple(frozenset(w.split()) for w in ("head dim", "head size", "d head", "d k"))


def unsplit_widths(index: RepoIndex, claim: Claim, near: list[Assignment]) -> list[Finding]:
    """Where a numerical claim is found (`near`), a head count that does not divide the width
    set beside it (`n_heads = 160` under `d_model = 1024`): attention splits the width among
    its heads, so no model of any paper has 6.4 dimensions a head. The width is the nearest
    one in the same section whose name says the same block (`encoder_heads` and
    `encoder_dim`), within ten lines; heads given a size of their own are left alone."""
    if claim.dimension != Dimension.D1:
        return []
    for heads in near:
        words = _head_count_words(heads)
        count = _whole(heads)
        if words is None or count is None or count < 2:
            continue
        section = [a for a in _section_of(index, heads) if abs(a.line - heads.line) <= 10]
        if any(_ending(a, _HEAD_SIZES) == words and _whole(a) is not None for a in section):
            continue  # `d_k = d_model // n_heads` is the split, `d_head = 64` a size of its own
        widths = sorted((a for a in section if _ending(a, _WIDTHS) == words and
                         _whole(a) is not None), key=lambda a: abs(a.line - heads.line))
        if widths and _whole(widths[0]) % count:
            width = widths[0]
            return [conflict(claim, heads, f" does not divide {width.path} = {shown(width)} at "
                                           f"{width.file}:{width.line}: no attention splits a "
                                           "width among that many heads")]
    return []


def head_counts(index: RepoIndex) -> list[Assignment]:
    """The repository's head counts, outside tests (cached)."""
    found = index.cache.get("alignment_head_counts")
    if found is None:
        found = index.cache["alignment_head_counts"] = [
            a for a, _ in _name_terms(index) if _head_count_words(a) is not None]
    return found


def _whole(a: Assignment) -> int | None:
    """The whole number a scalar setting holds (a configuration file's `16` too)."""
    number = held_number(a)
    if number is None or isinstance(number, (list, tuple)) or \
            not (a.source == "config" or isinstance(number, int)):
        return None
    return int(number) if float(number).is_integer() else None


def _head_count_words(a: Assignment) -> frozenset[str] | None:
    """The words of a head count's name that say which heads (None: no head count); a bare
    `head` counts nothing (`diff_head`)."""
    words = split_identifier(a.name)
    if not words or words[-1] not in _HEAD_COUNTS or \
            words[-1] == "head" and not set(words) & {"num", "n", "number"}:
        return None
    return frozenset(words[:-1]) - _COUNTING


def _ending(a: Assignment, endings: tuple[frozenset[str], ...]) -> frozenset[str] | None:
    """The words of `a`'s name before the first of `endings` that ends it (None: none does)."""
    words = split_identifier(a.name)
    for ending in endings:
        if len(words) >= len(ending) and set(words[-len(ending):]) == ending:
            return frozenset(words[:-len(ending)]) - _COUNTING
    return None


def _section_of(index: RepoIndex, a: Assignment) -> list[Assignment]:
    """The settings of `a`'s file under the same section as `a`."""
    section = a.path.rpartition(".")[0]
    return [b for _, b in _numbered_by_file(index).get(a.file, ())
            if b.path.rpartition(".")[0] == section]


def unwritten_conflicts(claim: Claim, near: list[Assignment], context: ClaimContext,
                        written: frozenset[str]) -> list[Finding]:
    """Where a numerical claim is implemented, a setting named in the claim's own terms
    (`gpu_count` for "128 A100 GPUs") holds a number the paper never writes (`written`: the
    keys of the numbers of the paper's text and of its claims): the paper gives that setting
    no such value, so the code sets what the claim is about otherwise than the paper says,
    whichever stage or copy the setting is. Names with a word the claim lacks (`min_lr` for
    "max_lr=4e-3") may be another quantity, which the paper leaves to the code."""
    if claim.dimension != Dimension.D1:
        return []
    for a in near:
        if (scalar(a) or config_scalar(a)) and a.numbers and not a.numbers & written and \
                _in_claim_words(a.name, context):
            return [conflict(claim, a, ", a number the paper never writes, where the claim is "
                                       "implemented")]
    return []


def in_windows(index: RepoIndex, windows: list[tuple[str, int, int]]) -> list[Assignment]:
    """The settings on the lines of the evidence `windows` (file, first line, last line), in
    the repository's order."""
    by_file = _numbered_by_file(index)
    found = {at: a for f in {f for f, _, _ in windows} for at, a in by_file.get(f, ())
             if any(f == file and start <= a.line <= end for file, start, end in windows)}
    return [found[at] for at in sorted(found)]


def _numbered_by_file(index: RepoIndex) -> dict[str, list[tuple[int, Assignment]]]:
    """The settings of each file, each with its place in the repository's order (cached)."""
    by_file = index.cache.get("alignment_numbered_by_file")
    if by_file is None:
        by_file = index.cache["alignment_numbered_by_file"] = {}
        for at, (a, _) in enumerate(_name_terms(index)):
            by_file.setdefault(a.file, []).append((at, a))
    return by_file


def copy_conflicts(index: RepoIndex, claim: Claim, near: list[Assignment],
                   values: list[StatedValue], context: ClaimContext,
                   written: frozenset[str], other_files: bool = False) -> list[Finding]:
    """Where a numerical claim is implemented, a setting holds a number the paper never writes
    (`written`), while another setting of the very same name holds a value the claim states:
    the two copies disagree, and the one in the claim's code departs from the paper. The value
    says which setting is the claim's, whatever its name's words (`early_t_max: 7.25` beside
    a default `early_t_max = 0.725` for "t in [0, 0.725]"); a copy in another stage's section
    is that stage's (`numbered_otherwise`). With `other_files`, only a copy in another file
    counts: one file that sets a name under several sections configures several cases
    (`burgers.ddim_steps: 50` beside `navier_stokes.ddim_steps: 850`)."""
    stated = [v for v in values if not v.trivial]
    if claim.dimension != Dimension.D1 or not stated:
        return []
    odd: dict[str, Assignment] = {}  # by name, the first in the claim's windows
    for a in near:
        if (scalar(a) or config_scalar(a)) and a.numbers and not a.numbers & written and \
                not numbered_otherwise(a, context):
            odd.setdefault(a.name, a)
    if not odd:
        return []
    copies = [b for b, _ in _name_terms(index) if b.name in odd]
    for value in stated:
        for name, a in odd.items():
            copy = next((b for b in copies if b.name == name and b.numbers & value.keys and
                         not (other_files and b.file == a.file)), None)
            if copy is not None:
                return [conflict(claim, a, f", a number the paper never writes, where the "
                                           f"claim is implemented, while {copy.name} at "
                                           f"{copy.file}:{copy.line} holds {value.text}")]
    return []


#: Parts of a name whose value is the code's own choice whatever the paper says: a random
#: seed (`seed = 42` beside "5 random seeds"), an identifier, a port.
_ARBITRARY = frozenset({"seed", "seeds", "id", "ids", "idx", "port"})


def _in_claim_words(name: str, context: ClaimContext) -> bool:
    """Every part of `name` is, as written, a term of the claim (`gpu_count` for "128 A100
    GPUs", `eps` for "ε=1e-6"); a part the claim has only in another form (`epochs`,
    `lr` for "learning rate") is not enough for a rule that reads no quantity."""
    parts = _name_parts(name, context)
    return bool(parts) and parts <= context.terms and not parts & _ARBITRARY


def fraction_settings(index: RepoIndex) -> list[Assignment]:
    """The assignments whose name and sections say which fraction they set, wherever they
    are (`ema_momentum`, `optimizer.betas`, `uncond_prob`; not a noise schedule's bare
    `beta`, which is no Adam beta) (cached)."""
    found = index.cache.get("alignment_fractions")
    if found is None:
        found = index.cache["alignment_fractions"] = [
            a for a, _ in _name_terms(index) if any(
                kind.names_setting(a) and _path_words(a) &
                (kind.claim_words | _OPTIMIZER_WORDS) for kind in FRACTIONS)]
    return found


#: Words of a name's sections that make its beta an optimizer's.
_OPTIMIZER_WORDS = frozenset({"optimizer", "optim", "opt"})


def _numbers_held(a: Assignment) -> list[float]:
    """The number a scalar setting holds, or each number of a list of numbers."""
    number = held_number(a)
    if number is not None:
        return [number]
    value = a.value
    if a.source == "config" and isinstance(value, str) and value.startswith("["):
        try:  # a configuration file's flow list (`[0.9, 0.95]`) is Python's literal too
            value = ast.literal_eval(parse_python(value, mode="eval").body)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return []
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return []


#: An end of a range a claim states: a number or a fraction (`1/3`).
RANGE_END = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?"
#: A range a claim gives a quantity, in words or brackets: "ranging from 0 to 5", "between
#: 0.1 and 0.5", "sampled from [0.7, 1.0]", "w ∈ [0, 10]" (not a pair of settings).
_STATED_RANGES = (
    re.compile(rf"\b(?:from|between)\s+({RANGE_END})\s+(?:to|and)\s+({RANGE_END})"
               r"(?![\w.]|\s*[%×x*])"),
    re.compile(rf"(?:\brange|\bfrom|\bin|\bwithin|∈)\s*[\[(]\s*({RANGE_END})\s*,\s*"
               rf"({RANGE_END})\s*[\])]"))


def bounded_quantities(text: str) -> list[tuple[float, float, frozenset[str]]]:
    """The ranges a claim states: low and high end, and the terms of the quantity they bound
    (the clause before the range)."""
    out = []
    for pattern in _STATED_RANGES:
        for m in pattern.finditer(text):
            ends = sorted(range_end(m.group(i)) for i in (1, 2))
            out.append((ends[0], ends[1], claim_terms(_CLAUSE.split(text[:m.start()])[-1])))
    return out


def range_end(text: str) -> float:
    """The value of a `RANGE_END` (`1/3` is 0.333...)."""
    top, _, bottom = text.partition("/")
    return float(top) / float(bottom) if bottom else float(top)


def range_conflicts(claim: Claim, near: list[Assignment], context: ClaimContext,
                    windows: Iterable[tuple[str, int, int]] = (),
                    place: str = "where the claim is implemented") -> list[Finding]:
    """Where the claim is implemented, a name of a quantity the claim bounds holds a number
    outside its range (`THINKING_STEPS = 50` for "thinking steps ranging from 0 to 5"): every
    word of the name but generic ones is the range's quantity's or the claim's head's, and its
    section is the claim's (a `RobustnessConfig` has its own learning rate) or bears the name
    of a module that holds the evidence `windows` (a `dynamics` section for the code of
    `training_dynamics.py`: the repository's own name for what implements the claim)."""
    owners = context.terms | frozenset(t for f, _, _ in windows if f.endswith(".py")
                                       for t in name_terms(PurePosixPath(f).stem))
    for low, high, quantity in bounded_quantities(claim.text):
        words = quantity | context.head
        for a in near:
            parts = name_terms(a.name) - GENERIC
            if not parts or not all(covered(t, words) for t in parts) or \
                    numbered_elsewhere(a, claim.text):
                continue
            number = held_number(a)
            if number is not None and not low <= number <= high and \
                    _section_is_claims(a, owners):
                return [conflict(claim, a, f", {place}, is outside the range "
                                           f"[{low:g}, {high:g}] the claim states")]
            # a pair that keeps one end of the claim's range and is no range at all is the
            # claim's range drifted, in any section
            if number is None and _emptied(_numbers_held(a), low, high):
                return [conflict(claim, a, ", where the claim is implemented, keeps one end "
                                           f"of the range [{low:g}, {high:g}] the claim "
                                           "states but is empty")]
    return []


#: A normal distribution with its variance written as a square: `N(0, 0.02^2)`, `N(0, σ²=0.02²)`,
#: `Normal(0, 0.02**2)`; the square's base is the standard deviation.
_NORMAL = re.compile(r"(?<![\w.])(?:N|Normal|Gaussian)\s*\(\s*-?[\d.]+\s*,\s*(?:[\w\\]+\s*=\s*)?"
                     r"(\d+(?:\.\d+)?(?:[eE]-?\d+)?)\s*(?:\^\s*\{?2\}?|\*\*\s*2|²)\s*\)")
#: Names of a normal distribution's standard deviation (`std`, `init_std`, `initializer_range`
#: as Hugging Face calls the initialiser's).
_STD_NAMES = frozenset({"std", "stddev", "sigma", "initializer_range"})


#: Words that make a setting one end of a quantity's range (`masking_ratio_min`).
_BOUND_WORDS = frozenset({"min", "max", "minimum", "maximum", "low", "high", "lower", "upper"})


def bound_setting_conflicts(index: RepoIndex, claim: Claim, context: ClaimContext,
                            windows: Iterable[tuple[str, int, int]] = ()) -> list[Finding]:
    """A setting named as one end of a quantity the claim bounds (`masking_ratio_phase1_min`
    for "Masking ratio: Phase 1 uniformly sampled from [0.7, 1.0]") holds a number outside
    the range, wherever it is set: that end of the range is not the paper's. The name is read
    as `range_conflicts` reads one where the claim is implemented (every word but generic
    ones the range's quantity's or the claim's head's, in a section that is the claim's);
    the word for an end is what makes a setting elsewhere the range's, not another
    quantity's that shares its words (`num_train_timesteps` is no bound of a timestep range)."""
    ends = [a for a in _settings(index) if (scalar(a) or config_scalar(a)) and
            quantity_parts(a.name) & _BOUND_WORDS]
    return range_conflicts(claim, ends, context, windows, place="a setting of one end")


def normal_std_conflicts(index: RepoIndex, claim: Claim, near: list[Assignment],
                         windows: list[tuple[str, int, int]], mentioned: frozenset[str]
                         ) -> list[Finding]:
    """Where a claim that draws from a normal distribution written with its variance as a
    square (`N(0, 0.02^2)`) is implemented (near the evidence `windows`, or in the functions
    that hold them), a standard deviation (`std=0.2`, `init_std`) holds a number the claim
    never mentions: the square's base is that deviation, whatever the claim calls it."""
    stds = {normalise(float(m.group(1))) for m in _NORMAL.finditer(claim.text)}
    if not stds:
        return []
    for a in near + in_functions(index, windows):
        parts = {p.lower() for p in split_identifier(a.name)}
        if a.name.lower() not in _STD_NAMES and not parts & {"std", "stddev"}:
            continue
        number = held_number(a)
        if number is not None and number > 0 and normalise(number) not in mentioned | stds:
            return [conflict(claim, a, ", where the claim is implemented, is the standard "
                                       f"deviation of the claim's normal distribution, "
                                       f"{' or '.join(sorted(stds))}")]
    return []


def in_functions(index: RepoIndex, windows: list[tuple[str, int, int]]) -> list[Assignment]:
    """The assignments of the functions that the windows show lines of: the code that
    implements a claim is a function, of which a window shows a few lines (a branch of an
    initialisation may lie below the window that shows the other)."""
    spans = function_spans(index, windows)
    return [a for a in index.assignments
            if any(a.file == f and start <= a.line <= end for f, start, end in spans)]


def function_spans(index: RepoIndex, windows: list[tuple[str, int, int]]
                   ) -> set[tuple[str, int, int]]:
    """(file, first line, last line) of each function that the windows show a line of."""
    return {(d.file, d.start, d.end) for f, start, end in windows
            for line in range(start, end + 1) if (d := index.enclosing(f, line)) is not None}


def _emptied(pair: list[float], low: float, high: float) -> bool:
    """A pair that holds one end of the range but not the other, and whose start is not
    below its end (`[7, 1.0]` for [0.7, 1.0], `[0.01, 0.01]` for [0.001, 0.01]): the range
    with one end drifted past the other. A real range of another setting that shares an end
    (`[1e-3, 1e-2]` beside [5e-4, 1e-3]) is not one."""
    ends = {low, high}
    return len(pair) == 2 and bool(set(pair) & ends) and set(pair) != ends and \
        pair[0] >= pair[1]


def _section_is_claims(a: Assignment, terms: frozenset[str]) -> bool:
    """Each word of the name's sections is generic, the claim's, or cut short from one of the
    claim's words (`EvalConfig` for a claim that says "evaluate")."""
    space = frozenset(t for part in _sections(a) for t in name_terms(part)) - GENERIC
    return all(covered(t, terms) or _shortens(t, terms) for t in space)


def shared_stem_conflicts(claim: Claim, near: list[Assignment], values: list[StatedValue],
                          mentioned: frozenset[str]) -> list[Finding]:
    """Where the claim is implemented, a name that is the stem every identifier of a group of
    the claim's shares (`sigma` of "sigma_v_xy=0.25, sigma_omega_z=0.25"), holding a number
    none of them states: whichever of them it is, the claim gives it another value."""
    groups: dict[str, list[StatedValue]] = {}
    for value in values:
        stem, _, rest = value.symbol.partition("_")
        if len(stem) >= 2 and rest:
            groups.setdefault(stem, []).append(value)
    for stem, group in groups.items():
        keys = group[0].keys
        if len(group) < 2 or any(v.keys != keys for v in group):
            continue
        for a in near:
            if a.name.lower() == stem and scalar(a) and not a.numbers & mentioned:
                return [conflict(claim, a, ", where the claim is implemented, but the claim "
                                           f"states {group[0].text} for every {stem}_*")]
    return []


#: An index range a claim states: `joint positions[12:24]`.
_INDEX_RANGE = re.compile(r"\[\s*(\d+)\s*:\s*(\d+)\s*\]")


def index_range_conflicts(claim: Claim, near: list[Assignment]) -> list[Finding]:
    """Where a claim that states index ranges (`velocity[24:36]`) is implemented, a (start,
    end) pair that keeps one end of a stated range and puts its start past its end
    (`'q_vel': (240, 36)`): a range no slice can take anything from."""
    ranges = [(int(m.group(1)), int(m.group(2))) for m in _INDEX_RANGE.finditer(claim.text)]
    if not ranges:
        return []
    for a in near:
        pair = a.value
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in pair)):
            continue
        start, end = pair
        if start > end and any(start == x or end == y for x, y in ranges):
            return [conflict(claim, a, " is an empty index range, where the claim is "
                                       "implemented with ranges such as "
                                       f"[{ranges[0][0]}:{ranges[0][1]}]")]
    return []


class PaperValues(dict[str, list[tuple[StatedValue, list[StatedValue], "ClaimContext"]]]):
    """The values each claim of a paper states, by number: each with the claim's other values
    and context, to read which quantity the paper states it for. `written` holds the key of
    every number the paper's text writes (empty when the text is not at hand)."""

    written: frozenset[str] = frozenset()


def paper_values(texts: Iterable[str], markdown: str = "") -> PaperValues:
    """The values the paper's claims (`texts`) state, by each of their keys, and the numbers
    its text (`markdown`) writes."""
    out = PaperValues()
    out.written = written_numbers(markdown)
    for text in texts:
        counted = stated_values(text, small=True)
        context = claim_context(text)
        for value in counted:
            for key in value.keys:
                out.setdefault(key, []).append((value, counted, context))
    return out


#: Inline or display mathematics of a paper's markdown.
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.DOTALL)

#: Numbers a paper writes as words ("eight GPUs", "half of the batch").
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "sixteen": 16,
                 "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100, "thousand": 1000,
                 "million": 1e6, "billion": 1e9, "half": 0.5, "quarter": 0.25, "twice": 2,
                 "double": 2, "single": 1}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def written_numbers(markdown: str) -> frozenset[str]:
    """The keys of every number a paper's text writes, in digits or as a word. Spaces inside
    its mathematics are dropped first, as LaTeX drops them: converted papers space out every
    character (`$0 . 9 5$`, `$1 0 ^ { - 4 }$`), which would read as single digits."""
    text = _MATH.sub(lambda m: " " + re.sub(r"\s+", "", m.group(1) or m.group(2)) + " ",
                     markdown)
    words = {normalise(_NUMBER_WORDS[w.lower()]) for w in _NUMBER_WORD.findall(text)}
    return frozenset(number_keys(text)) | words


def stated_for(a: Assignment, paper: PaperValues) -> bool:
    """The paper states a number `a` holds as the value of a quantity `a` names: `a` is
    that quantity set for another configuration, stage or model size the paper describes."""
    return any(names_quantity(a, _unqualified(value),
                              quantity_of(value, counted, context, any_value=True), context)
               for number in a.numbers for value, counted, context in paper.get(number, ()))


def _unqualified(value: StatedValue) -> StatedValue:
    """A value whose symbol is a generic word ("Learning rate schedule: max = 4e-4") read by
    its quantity's words: the word bounds the quantity, it is no identifier of its own."""
    return replace(value, symbol="") if value.symbol in GENERIC else value


def written_in(name: str, text: str) -> bool:
    """The claim writes the name as the code does (`ell` of "masked latent tokens ell = 11"):
    a keyword argument so named sets the claim's value, whatever function takes it."""
    return len(name) > 1 and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", text,
                                       re.IGNORECASE) is not None


def excused(a: Assignment, mentioned: frozenset[str], values: list[StatedValue],
            context: ClaimContext) -> bool:
    """`a` holds a number the claim mentions (`8` of "6 (B) / 8 (L)"), and not as the value
    the claim gives another identifier: `learning_rate = 1e-3` is no alternative learning
    rate for a claim whose "KL weight beta=1e-3" it is."""
    for number in a.numbers & mentioned:
        owners = [v for v in values if number in v.keys and len(v.symbol) > 1]
        if not owners or any(names_quantity(
                a, v, quantity_of(v, values, context, any_value=True), context) for v in owners):
            return True
    return False


def under_label(a: Assignment, context: ClaimContext) -> Assignment | None:
    """A config key that is only a label the claim writes (`phase1` of "Phase 1 uses 32
    steps", `t2v`), read with the section above it, which names the quantity
    (`inference_steps.phase1` is `inference_steps_phase1`)."""
    parts = a.path.split(".")
    labels = _name_parts(a.name, context)
    if a.source != "config" or len(parts) < 2 or not labels or not labels <= context.joined:
        return None
    return replace(a, name=f"{parts[-2]}_{a.name}")


#: A key read with a default in place (`cfg.get("sampling_steps", 50)`, `getattr(args,
#: "lr", 1e-4)`, `kwargs.pop("tau", 0.1)`): the default is what runs when nothing sets it.
_LOOKUP_DEFAULT = re.compile(r"(?:\.get|\.pop|\bgetattr)\(\s*(?:[\w.]+\s*,\s*)?"
                             r"[\"']((?:\w+\.)*\w+)[\"']"  # a dotted key: `vae.resolution`
                             r"\s*,\s*(-?\d[\d_]*\.?\d*(?:[eE][-+]?\d+)?)\s*\)")


def branch_values(index: RepoIndex, a: Assignment) -> list[Assignment]:
    """The numbers a conditional setting takes, one per branch (`weight_decay = 0.0 if
    is_ngpt else 0.1` sets 0.0 and 0.1): each is a value the name holds in some run."""
    entry = index.files.get(a.file)
    if a.value is not None or a.source != "assign" or entry is None or \
            not 0 < a.line <= len(entry.lines) or " if " not in entry.lines[a.line - 1]:
        return []
    try:
        statement = parse_python(entry.lines[a.line - 1].strip()).body[0]
    except (SyntaxError, IndexError, ValueError):
        return []
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or \
            not isinstance(statement.value, ast.IfExp):
        return []
    out = []
    for branch in (statement.value.body, statement.value.orelse):
        if isinstance(branch, ast.Constant) and isinstance(branch.value, (int, float)) and \
                not isinstance(branch.value, bool):
            out.append(replace(a, value=branch.value,
                               numbers=frozenset(number_keys(str(branch.value)))))
    return out


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
                key = found.group(1)
                out.append(Assignment(key.rpartition(".")[2], key, value, file, number,
                                      "default", frozenset(number_keys(text))))
    return out


def constructed_values(index: RepoIndex, near: list[Assignment]) -> list[Assignment]:
    """The values among `near` that a constructor holds, as settings of them: a tensor
    filled with one number (`self.alpha = nn.Parameter(torch.full((d,), 0.05))`, `0.5 *
    torch.ones(d)`) under the name and under the name's initial value (`alpha_init`), for a
    learnable quantity's initial value is the constant it is made of, which a claim writes as
    `alpha_init=0.05`; and the numbers a constructor takes alone (`np.array([0.5, 0.3])`,
    `list_field([0.9, 0.999])`), which the name holds as surely as a literal."""
    out = []
    for a in near:
        if a.value is not None or a.source not in ("assign", "field"):
            continue
        node = _assigned_at(index, a)
        number = _filled_with(node)
        if number is not None:
            keys = frozenset(number_keys(repr(number)))
            out += [replace(a, value=number, numbers=keys),
                    replace(a, name=f"{a.name}_init", value=number, numbers=keys)]
        elif (items := _taken_alone(node)) is not None:
            out.append(replace(a, value=items, numbers=frozenset(
                k for x in items for k in number_keys(repr(x)))))
    return out


#: Keyword arguments that say how a constructor holds numbers, not which.
_HOW_HELD = frozenset({"dtype", "device", "requires_grad"})


def _taken_alone(node: ast.expr | None) -> list[float] | None:
    """The numbers of a literal list or tuple that a call takes as its only argument."""
    if not isinstance(node, ast.Call) or len(node.args) != 1 or \
            any(k.arg not in _HOW_HELD for k in node.keywords) or \
            not isinstance(node.args[0], (ast.List, ast.Tuple)):
        return None
    items = [_literal(element) for element in node.args[0].elts]
    numbers = [x for x in items if x is not None]
    return numbers if items and len(numbers) == len(items) else None


def _assigned_at(index: RepoIndex, a: Assignment) -> ast.expr | None:
    """The expression assigned on `a`'s line of its Python file (each file's assignments
    read once per index)."""
    by_file = index.cache.setdefault("alignment_assigned", {})
    if a.file not in by_file:
        module = python_module(index, a.file, tests=False)
        by_file[a.file] = {node.lineno: node.value for node in (
            ast.walk(module) if module is not None else ())
            if isinstance(node, (ast.Assign, ast.AnnAssign))}
    return by_file[a.file].get(a.line)


#: Constructors of a tensor of one shape, each element 1 (`ones`) or the value given (`full`).
_ONES = frozenset({"ones", "ones_like"})
_FULL = frozenset({"full", "full_like"})


def _filled_with(node: ast.expr | None) -> float | None:
    """The number a tensor is filled with: `torch.full(shape, v)`, `v * torch.ones(shape)`
    (either side), `torch.tensor(v)`, each maybe wrapped in `nn.Parameter`."""
    while isinstance(node, ast.Call) and call_name(node).endswith("Parameter") and node.args:
        node = node.args[0]
    if isinstance(node, ast.Call) and call_name(node) in _FULL and len(node.args) >= 2:
        return _literal(node.args[1])
    if isinstance(node, ast.Call) and call_name(node) == "tensor" and node.args:
        return _literal(node.args[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for factor, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Call) and call_name(other) in _ONES:
                return _literal(factor)
    return None


def _literal(node: ast.expr) -> float | None:
    """A number written as a constant (maybe negative, maybe the only item of a list)."""
    value = const_value(node)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


#: Nouns a size is counted in, not what it sizes ("128 units", "48 dims", "512 neurons").
_SIZE_UNITS = frozenset({"unit", "dim", "dimension", "ele", "neuron"})
#: Words of a name that say how values are held, not which (`hidden_shape`, `lr_list`).
_CONTAINERS = frozenset({"shape", "list", "tuple", "size", "choic"})


def list_conflicts(claim: Claim, near: list[Assignment], values: list[StatedValue],
                   context: ClaimContext, mentioned: frozenset[str]) -> list[Finding]:
    """A list of numbers named as the quantity of a list the claim states, with one of its
    elements changed (`scale_factors: [0.1, 0.1, 1, 10]` for "scale_factor range [0.01, 0.1,
    1, 10]"); or a Python list named as a stated value's quantity (`hidden_shape = [1280,
    128, 128]` for "3 hidden layers of 128 units") that holds a value the claim states beside
    one it never mentions."""
    out = []
    lists = stated_lists(claim.text)
    for a in near:
        numbers = number_list(a)
        # a config class holds the system's settings; a config file's section not named by
        # the claim is another dataset's or method's (`training.vtab.learning_rate`)
        settings_class = in_settings(a) and a.source != "config"
        if numbers is None or len(numbers) < 2 or not (
                in_namespace(a, context.terms) or owner_named(a, context.terms) or
                settings_class) or numbered_elsewhere(a, claim.text):
            continue  # not the claim's, or another stage's (`stage1_betas`, Stage 3 claim)
        moved = _one_moved(numbers, lists)
        if moved is not None:
            out.append(conflict(claim, a, ", where the claim is implemented, is the claim's "
                                          f"{moved.text} with one element changed"))
            continue
        # a list named by a symbol alone takes the claim's head ("Guidance weights: w ∈
        # [0.0, 1.0, 4.0]")
        changed = [(v, e) for v, e in lists if (one_changed(numbers, e) or repeats_one(
            numbers, e)) and names_quantity(a, v, quantity_of(
                v, [u for u, _ in lists], context, any_value=True), context,
            list_taken(v, lists, values, claim.text))]
        if changed:
            value, _ = changed[0]
            out.append(conflict(claim, a, ", where the claim is implemented, but the claim "
                                          f"states {value.text}"))
            continue
        if not isinstance(a.value, (list, tuple)):
            continue
        hits, misses = a.numbers & mentioned - {"0", "1"}, a.numbers - mentioned
        named = [v for v in values if v.keys & hits and names_quantity(
            a, v, quantity_of(v, values, context, any_value=True), context)]
        if hits and misses and named:
            out.append(conflict(claim, a, ", where the claim is implemented, holds "
                                          f"{', '.join(sorted(misses))}, but the claim states "
                                          f"{named[0].text}"))
    return out


def drifted_list_conflicts(index: RepoIndex, claim: Claim, near: list[Assignment],
                           context: ClaimContext, mentioned: frozenset[str]) -> list[Finding]:
    """Where the claim is implemented, a list that repeats a list of three numbers or more
    the claim states, or part of it, in order but for one element, a number the claim never
    mentions: the claim's list with one value changed, whatever its name or section
    (`fine_tuning.lambda_values: [10000, 2500, 12500]` for "λ values: [1000, 2500, 12500]").
    Unless a section the claim names holds the stated list: then the list one element off is
    another's (LoRA's bottlenecks beside the Pfeiffer adapter's)."""
    lists = [(value, stated) for value, stated in stated_lists(claim.text) if len(stated) >= 3]
    if not lists:
        return []
    held = {tuple(normalise(x) for x in numbers) for a, _ in _name_terms(index)
            if owner_named(a, context.terms) and (numbers := number_list(a))}
    for a in near:
        numbers = number_list(a)
        if not numbers or numbered_elsewhere(a, claim.text):
            continue
        code = [normalise(x) for x in numbers]
        for value, stated in lists:
            odd = odd_element(code, stated) or odd_in_sweep(code, stated)
            if odd is not None and odd not in mentioned and tuple(stated) not in held:
                return [conflict(claim, a, ", where the claim is implemented, is the claim's "
                                           f"{value.text} with one element changed")]
    return []


#: An indexed symbol given a value: `beta1=0.9`, `beta_2 = 0.95`, `β₂: 0.999`.
_INDEXED = re.compile(r"\b([A-Za-z]{2,}?)_?\{?([1-9])\}?\s*[=:]\s*"
                      r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.]\d)")
_SUBSCRIPTS = str.maketrans("₁₂₃₄₅₆₇₈₉", "123456789")


def indexed_values(text: str) -> dict[str, dict[int, str]]:
    """The values the claim gives indexed symbols, by stem and index: {"beta": {1: "0.9",
    2: "0.95"}} for "beta1=0.9, beta2=0.95"."""
    found: dict[str, dict[int, str]] = {}
    for m in _INDEXED.finditer(spelt_out(text)):
        found.setdefault(m.group(1).lower(), {})[int(m.group(2))] = normalise(float(
            m.group(3)))
    return found


def indexed_conflicts(index: RepoIndex, claim: Claim, near: list[Assignment],
                      context: ClaimContext) -> list[Finding]:
    """Indexed symbols are one list in code: "beta1=0.9, beta2=0.95" is `betas=(0.9, 0.95)`.
    A list named after the stem (`betas`, `adam_betas`; its other words the claim's) where the
    claim is implemented or in the settings, whose element at an index the claim gives is
    another number, fails the claim, unless some list of that name in the repository holds
    every stated element (a second optimiser may keep its own)."""
    out = []
    for stem, stated in indexed_values(claim.text).items():
        if len(stated) < 2:
            continue  # one indexed value is as likely a label (`layer_1: 512`)
        # another stage's list (`stage3.betas` for a Stage 2 claim) neither excuses nor fails
        named = [a for a in near if _names_stem(a, stem, context) and
                 not numbered_elsewhere(a, claim.text)]
        everywhere = [a for a, _ in _name_terms(index) if _names_stem(a, stem, context) and
                      not numbered_elsewhere(a, claim.text)]
        if any(_holds(a, stated) is True for a in everywhere):
            continue
        wrong = [a for a in named if _holds(a, stated) is False]
        if wrong:
            shown_values = ", ".join(f"{stem}{i}={v}" for i, v in sorted(stated.items()))
            out.append(conflict(claim, wrong[0], f", but the claim states {shown_values}"))
    return out


def _names_stem(a: Assignment, stem: str, context: ClaimContext) -> bool:
    """`a` is named after the stem (`betas`), its other words the claim's or a number
    (`stage3_betas`: which stage is `numbered_elsewhere`'s to say)."""
    parts = [p.lower() for p in split_identifier(a.name)]
    return bool(parts) and parts[-1] in (stem, f"{stem}s") and all(
        p in GENERIC or p.isdigit() or any(covered(t, context.terms) for t in word_terms(p))
        for p in parts[:-1]) and in_namespace(a, context.terms)


def _holds(a: Assignment, stated: dict[int, str]) -> bool | None:
    """Whether the list `a` holds has each stated value at its index (None: not a list, or
    too short to say)."""
    numbers = number_list(a)
    if numbers is None or len(numbers) < max(stated):
        return None
    return all(normalise(numbers[i - 1]) == value for i, value in stated.items())


#: A bracketed list of numbers in a claim (`range [0.01, 0.1, 1, 10]`, `dims={1,2,4,8}`).
_STATED_LIST = re.compile(r"[\[{(]\s*(-?\d[\d.]*(?:[eE]-?\d+)?(?:\s*,\s*-?\d[\d.]*(?:[eE]-?\d+)?)+)"
                          r"\s*[\]})]")


def stated_lists(text: str) -> list[tuple[StatedValue, list[str]]]:
    """The lists of numbers a claim states, each as a value (its text, the identifier before
    it, the terms of its clause) and its elements, normalised."""
    out = []
    for found in _STATED_LIST.finditer(text):
        before = text[:found.start()]
        symbol = re.search(r"([A-Za-z_]\w*)\s*[=:]\s*$", before)
        numbers = [float(x) for x in found.group(1).split(",")]
        elements = [normalise(x) for x in numbers]
        value = StatedValue(frozenset(elements), found.group(0),
                            all(is_trivial(x) for x in numbers),
                            claim_terms(_CLAUSE.split(before)[-1]),
                            symbol.group(1).lower() if symbol else "", start=found.start())
        out.append((value, elements))
    return out


_CONFIG_LIST = re.compile(r"\[\s*-?\d[\d.eE+-]*(?:\s*,\s*-?\d[\d.eE+-]*)*\s*\]")


def number_list(a: Assignment) -> list[float] | None:
    """The numbers of a list `a` holds (a Python list or tuple, or a config's `[1, 2, 4]`)."""
    value = a.value
    if isinstance(value, str) and _CONFIG_LIST.fullmatch(value.strip()):
        try:
            return [float(x) for x in value.strip()[1:-1].split(",")]
        except ValueError:
            return None
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def list_taken(value: StatedValue, lists: list[tuple[StatedValue, list[str]]],
               values: list[StatedValue], text: str) -> frozenset[str]:
    """The words naming the claim's other values and lists, not this list's: "downsampling"
    of "downsampling kernel=(1,4,4)" does not make `downsample_padding` the claim's
    "padding=(1,1,1)"."""
    others = frozenset().union(*(v.quantity | quantity_parts(v.symbol) for v, _ in lists
                                 if v is not value))
    return (others | taken_by_others(value, values, text)) - value.quantity - \
        quantity_parts(value.symbol)


def _one_moved(numbers: list[float] | None, lists: list[tuple[StatedValue, list[str]]]
               ) -> StatedValue | None:
    """The stated list of four numbers or more that `numbers` repeats in order but for one
    element, whatever the name holding it (in a section that is the claim's: LoRA's
    `bottlenecks: [1, 8, 16, 32]` is no Pfeiffer adapter's [4, 8, 16, 32]): so long a
    sequence, equal but in one place, is the claim's list drifted, not another quantity's."""
    if not numbers or len(numbers) < 4:
        return None
    code = [normalise(x) for x in numbers]
    if any(code == stated for _, stated in lists):
        return None
    for value, stated in lists:
        if odd_element(code, stated) is not None:
            return value
    return None


def odd_element(code: list[str], stated: list[str]) -> str | None:
    """The one element of `code` that differs from `stated`, the lists being as long and
    equal in order everywhere else (None: no such element)."""
    if len(code) != len(stated):
        return None
    odd = [x for x, y in zip(code, stated, strict=True) if x != y]
    return odd[0] if len(odd) == 1 else None


def odd_in_sweep(code: list[str], stated: list[str]) -> str | None:
    """The one element of a sweep (three distinct numbers or more) that is not the claim's,
    the others being some of the claim's in its order (`bottlenecks: [8, 16, 320]` for "rank
    range [1, 8, 16, 32]"): the code runs part of the claim's sweep with one value changed."""
    if len(code) < 3 or len(set(code)) < len(code) or len(code) > len(stated):
        return None
    odd = [x for x in code if x not in stated]
    kept = [x for x in code if x in stated]
    in_order = kept == [x for x in stated if x in kept]
    return odd[0] if len(odd) == 1 and in_order else None


def repeats_one(code: list | tuple, stated: list[str]) -> bool:
    """The code's list holds a number twice where the claim's (three or more) holds each of
    its numbers once: the settings a sweep runs are distinct, so one of the claim's was
    overwritten (`[0.1, 0.1, 1, 10]` for "scale_factor range [0.01, 0.1, 1, 10, 100]")."""
    held = [normalise(float(x)) for x in code]
    return len(stated) >= 3 and len(set(stated)) == len(stated) and \
        len(set(held)) < len(held)


def one_changed(code: list | tuple, stated: list[str]) -> bool:
    """The code's list is the claim's with one element changed: as long, all but one of its
    elements the claim's (as often as the claim has them)."""
    if len(code) != len(stated):
        return False
    left = list(stated)
    for element in map(normalise, map(float, code)):
        if element in left:
            left.remove(element)
    return len(left) == 1


#: Generic words that still tell two quantities apart (`min_lr` and `max_lr`).
_QUALIFIERS = frozenset({"min", "minimum", "max", "maximum", "init", "initial"})
#: Words that say which setting of a quantity is the one in force, not another quantity:
#: `global_batch_size` is the batch size, `base_lr` the learning rate, `lct_value` the LCT.
_SCOPES = frozenset({"global", "total", "effective", "overall", "default", "base", "value"})
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
    epochs"), as may a name that shares no part with the claim's identifier when the claim
    names no other quantity (`transformer_hidden_size_B` for "hidden size: d_model=768 (B)").
    A claim's word that names another of its values (`taken`: "warmup" of "1000
    epochs (200 warmup)") does not make the name this value's (`warmup_epochs`). A word of
    scope beside the identifier keeps the quantity (`global_batch_size` is "batch_size")."""
    if a.name.lower() == value.symbol:
        return True
    indexed = re.fullmatch(r"([a-z]{2,}?)_?(\d)", value.symbol)
    if indexed and isinstance(a.value, (list, tuple)) and _names_stem(a, indexed.group(1), claim):
        return True  # `stage3_betas = (0.9, 0.95)` holds the claim's beta1 and beta2
    if len(value.symbol) > 1 and not _math_symbol(value.symbol):
        own, parts = identifier_parts(value.symbol, a.name, claim)
        if not own <= parts and (qualified := _class_qualified(a)):
            # the class says the rest of the identifier: `Attention.__init__`'s `heads` is
            # "attn_heads"
            own_in_class, parts_in_class = identifier_parts(value.symbol, qualified, claim)
            if own_in_class <= parts_in_class:
                own, parts = own_in_class, parts_in_class
        # the claim's identifier with words of the claim before or after it (`fno_modes` for
        # "FNO baseline: modes=16"), or words saying how it is measured (`chunk_len` for
        # "chunk=16"), none of them a qualifier or another value's word; a word may be cut
        # short (`batch_size_video_pred` for "video prediction ... batch_size=8")
        words = claim.terms - taken
        if own <= parts or taken or _stems(_name_parts(value.symbol, claim)) & _stems(parts):
            return bool(parts) and own <= parts and all(
                p not in _QUALIFIERS and (p in _MEASURES | _SCOPES or p in claim.labels or any(
                    covered(t, words) for t in word_terms(p)) or len(p) >= 4 and any(
                    w.startswith(p) for w in words))
                for p in parts - own)
        # a name in none of the identifier's parts may still be the quantity in the claim's
        # words (`transformer_hidden_size_B` for "Transformer hidden size: d_model=768 (B)"),
        # where the claim names no other quantity (each of "attn_dim=32, attn_heads=4" is
        # named by its own identifier only)
    if _COUNTS & {p.lower() for p in split_identifier(a.name)} and not value.whole:
        return False  # `n_models` counts models: it is not "models at $5.00"
    if value.count and not counts_noun(a.name, value.head, owner_named(a, claim.terms) or
                                       settings_named(a, claim.terms)):
        return False  # "5 seeds" is no `seed = 42`
    # `gpus` is not "GPU hours"; but a symbol's value ("L=2048 tokens") is in its unit, and
    # a period ("every 10,000 steps") is named as one (`inner_loop_frequency`)
    if value.head and not value.symbol and value.head not in _SIZE_UNITS and not any(
            covered(value.head, frozenset(word_terms(p))) or
            value.every and p.lower() in _PERIODS for p in quantity_parts(a.name)):
        return False
    named, qualified, of_quantity_parts = False, False, 0
    # another part is in the value's own words: a measure word beside it says in what
    measured = any(any(covered(t, value.quantity) for t in word_terms(part)) and not
                   frozenset(word_terms(part)) <= _MEASURES for part in quantity_parts(a.name))
    for part in _name_parts(a.name, claim):
        words = frozenset(word_terms(part))
        if not words and part in _LINKS:
            continue  # `queries_per_prompt`
        if not words and (part == value.symbol or part in claim.labels or any(
                (part, key) in claim.letters for key in value.keys)):
            continue  # `K_timesteps` for "discretization timesteps K=40", `D_LAYERS` for
            # "3 layers (D=3)", `hidden_size_B` for "512 (B) / 768 (H)"
        if not words:  # a digit or a letter the quantity's words cannot vouch for
            return False
        if words <= (GENERIC | _CONTAINERS | _SIZE_UNITS) - _QUALIFIERS:
            continue
        if words <= _MEASURES and measured and not any(covered(t, quantity) for t in words):
            continue  # `pad_len` for "pad tokens = 212": how it is measured, not of what
        words = _alike(words)
        of_quantity = any(covered(t, quantity) for t in words) or _shortens(part, quantity) \
            or value.every and part in _PERIODS
        if not of_quantity and words <= _QUALIFIERS and not claim.terms & _QUALIFIERS:
            qualified = True  # `max_seq_length` for "sequence length", if nothing is bounded
            continue
        # Another word of the claim may say whose quantity it is (`downstream_epochs` for
        # "Downstream task: 500 epochs"); a qualifier must be the quantity's own.
        if not of_quantity and (words <= _QUALIFIERS or not any(
                covered(t, claim.terms - taken) for t in words)):
            return False
        named = named or (of_quantity and bool(words - _QUALIFIERS))
        of_quantity_parts += of_quantity
    # a qualified name must say the rest of the quantity in two words at least: `max_steps`
    # may be any bound on steps, `max_seq_length` is the sequence length
    return named and (not qualified or of_quantity_parts >= 2)


def _class_qualified(a: Assignment) -> str | None:
    """A constructor's parameter or a field named with its class (`Attention_heads` for the
    default `heads` of `Attention.__init__`)."""
    sections = _sections(a)
    if not sections or not sections[-1][:1].isupper() or _SETTINGS.search(sections[-1]):
        return None  # a settings class names what it sets by its fields
    return f"{sections[-1]}_{a.name}"


def _stems(parts: frozenset[str]) -> frozenset[str]:
    """Parts without their indices: `beta2` shares `beta` with `beta1`."""
    return frozenset(stem for p in parts if (stem := re.sub(r"\d+", "", p)))


def _shortens(part: str, terms: frozenset[str]) -> bool:
    """A name's part of three letters or more that starts a longer word (`res` of
    "resolution", `freq` of "frequency"), not a qualifier or a generic word."""
    return len(part) >= 3 and part not in _QUALIFIERS | GENERIC and any(
        len(t) > len(part) and t.startswith(part) for t in terms)


#: Words that name one quantity in two fields' usage: a diffusion model's sampling steps are
#: its inference steps, an iteration of a loop is its step, and a language model's context is
#: the sequence it reads.
_ALIKE = {"sampl": "inference", "inference": "sampl", "iter": "step", "step": "iter",
          "context": "sequence", "sequence": "context"}


def _alike(words: frozenset[str]) -> frozenset[str]:
    return words | {_ALIKE[w] for w in words if w in _ALIKE}


#: Parts of a name that make it a period (`eval_every`, `log_interval`, `save_freq`).
_PERIODS = frozenset({"every", "interval", "freq", "frequency", "period"})

#: Parts of a name that say how its quantity is measured (`chunk_len`, `kernel_size`).
_MEASURES = frozenset({"len", "length", "size", "dim", "dims"})


def _math_symbol(symbol: str) -> bool:
    """`n_r`, `d_k`, `gamma`: a letter with letter subscripts, or a Greek letter spelt out, the
    paper's notation rather than an identifier the code would spell the same way."""
    return all(len(part) <= 1 for part in symbol.split("_")) or symbol in _GREEK_NAMES


def taken_by_others(value: StatedValue, values: list[StatedValue], text: str
                    ) -> frozenset[str]:
    """The words naming the claim's other values: their clause before them, their identifier,
    and the noun each other number counts ("(200 warmup)"), not this value's quantity. The
    words that only qualify another value's noun are not taken ("identity" of "5
    identity-probing prompts" may still name "1,000 queries")."""
    others: set[str] = set()
    for other in values:
        if other is not value:
            others |= claim_terms(_CLAUSE.split(text[:other.start])[-1]) | \
                quantity_parts(other.symbol)
    for number in extract_numbers(text):
        if number.start != value.start and not _IN_NAME.search(text[:number.start]):
            others.add(head_noun(text[number.start + len(number.raw):]))
    return frozenset(others) - value.quantity - {""}


#: What comes before a number that is part of a name (`VTAB-1K`, `KL-16`): it counts nothing.
_IN_NAME = re.compile(r"[A-Za-z]-?$")


def _noun_phrase(tail: str) -> list[str]:
    """The (up to three) words right after a value, up to a linking word or a stop."""
    if not re.match(r"\s+[A-Za-z]", tail):
        return []
    phrase = []
    words = re.split(r"[,;:()\[\].]", tail, maxsplit=1)[0].split()
    for i, word in enumerate(words[:3]):
        if word.lower() in _LINKS or _participle(word, words[i + 1:i + 2]):
            break
        phrase.append(word)
    return phrase


def _participle(word: str, following: list[str]) -> bool:
    """A past participle that ends the phrase or precedes a linking word begins a clause
    about the value ("0.1 applied to all parameters", "5 seeds used for ..."); before a
    noun it is an adjective ("1,000 labeled samples")."""
    return len(word) > 4 and word.lower().endswith("ed") and (
        not following or following[0].lower() in _LINKS | {"by", "from", "as", "into"})


def counts_noun(name: str, noun: str, owned: bool = False) -> bool:
    """The name counts `noun`: it has a count word beside the noun (`n_gpus`, `num_layer`),
    or the noun in the plural after a word that says which (`train_samples`,
    `convlstm_layers`), or in its section (`owned`: `hardware.nodes` for "the same hardware
    ... 8 compute nodes"); a bare `epochs` may count any epochs of the system."""
    parts = [p.lower() for p in split_identifier(name)]
    has_noun = [p for p in parts if covered(noun, frozenset(word_terms(p)))]
    return bool(has_noun) and (bool(_COUNTS & set(parts)) or (len(parts) > 1 or owned) and
                               any(p.endswith("s") for p in has_noun))


def identifier_parts(symbol: str, name: str, claim: ClaimContext
                     ) -> tuple[frozenset[str], frozenset[str]]:
    """The parts of the claim's identifier `symbol` as `name` writes them (`beta1` whole, as
    the claim writes it; `learning` and `rate` for `lr`, its initials; `initial` for `init`,
    which shortens it), and the name's."""
    own, parts = _name_parts(symbol, claim), _name_parts(name, claim)
    if not own <= parts:
        own = _abbreviated(symbol, name) or _shortened(own, parts) or _alike_parts(
            own, parts) or own
    return own, parts


def _alike_parts(own: frozenset[str], parts: frozenset[str]) -> frozenset[str]:
    """The identifier's parts with each one the name lacks replaced by a part of the name
    that says the same (`iterations` for `steps`, `seq` and `len` for `context_length`), or
    nothing if one has no such part."""
    found = set()
    for part in own:
        if part in parts:
            found.add(part)
            continue
        words = frozenset(word_terms(part))
        # or a part the name cuts short (`len` of `length`; `head` is one of the `heads`)
        alike = [p for p in parts if words & {_ALIKE[w] for w in word_terms(p) if w in _ALIKE}
                 or len(p) >= 3 and part.startswith(p) and len(part) - len(p) >= 2]
        if not alike:
            return frozenset()
        found.add(alike[0])
    return frozenset(found)


def _shortened(own: frozenset[str], parts: frozenset[str]) -> frozenset[str]:
    """The name's parts that the identifier's parts shorten, each to three letters or more
    (`dim_multiplier` of `dimension_multipliers`, `init_dim` of `initial_dim`)."""
    found = set()
    for part in own:
        longer = [p for p in parts if p.startswith(part) and len(part) >= 3]
        if not longer:
            return frozenset()
        found.add(min(longer, key=len))
    return frozenset(found)


def _abbreviated(symbol: str, name: str) -> frozenset[str]:
    """The parts of `name` that `symbol` abbreviates, each by letters of its own that start
    with its first (`learning`, `rate` for `lr`; `batch`, `size` for `bsz`)."""
    parts = [p.lower() for p in split_identifier(name)]
    short = symbol.replace("_", "").lower()
    for i in range(len(parts)):
        for j in range(i + 2, min(len(parts), i + 3) + 1):
            if _spells(short, parts[i:j]):
                return frozenset(parts[i:j]) - _NO_QUANTITY
    return frozenset()


def _spells(short: str, parts: list[str]) -> bool:
    """`short` is, part by part, a start of each part's letters in order (`b` + `sz`)."""
    if not parts:
        return not short
    head, rest = parts[0], parts[1:]
    for cut in range(1, len(short) - len(rest) + 1):
        piece = short[:cut]
        letters = iter(head)
        if piece[0] == head[0] and all(ch in letters for ch in piece) and \
                _spells(short[cut:], rest):
            return True
    return False


def quantity_parts(name: str) -> frozenset[str]:
    """The lower-case parts of a name that can say what quantity it holds (not `num`, `cfg`)."""
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


def holds_elsewhere(index: RepoIndex, near: Assignment, value: StatedValue,
                    claim: frozenset[str]) -> bool:
    """Another assignment of exactly this name in the same file holds the stated value, in
    sections named by as many of the claim's words: `fmt.optimizer.lr = 1e-4` does not
    excuse `p2vae.optimizer.lr = 1e-3` for "P2VAE training: learning rate 1e-4"."""
    own = claim_sections(near, claim)
    return any(a.name == near.name and a.file == near.file and a.numbers & value.keys and
               own <= claim_sections(a, claim) for a, _ in _name_terms(index))


def claim_sections(a: Assignment, claim: frozenset[str]) -> frozenset[str]:
    """The claim's words that name the sections above the name (`vae` of `p2vae.lr`)."""
    return frozenset(t for part in a.path.split(".")[:-1] for t in name_terms(part) - GENERIC
                     if covered(t, claim))


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


def fraction(value: StatedValue) -> bool:
    """A value between 0 and 1 (`0.1`, `20%`): 1 is another value of its quantity."""
    return any(0 < float(key) < 1 for key in value.keys)


def _is_one(a: Assignment) -> bool:
    """The number 1, in code or as a configuration file's text (`weight_decay: 1`)."""
    value = a.value
    if a.source == "config" and isinstance(value, str) and len(a.numbers) == 1:
        value = _float(value)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) == 1


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def scalar(a: Assignment) -> bool:
    """A number that is neither a flag nor a 0/1 initialisation, alone or as the only item
    of a tuple or list (`n_modes = (12,)`)."""
    value = a.value[0] if isinstance(a.value, (list, tuple)) and len(a.value) == 1 else a.value
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        abs(value) not in (0, 1)


def held_number(a: Assignment) -> float | None:
    """The number a scalar setting holds, in code or in a config file (None: no scalar)."""
    return a.value if scalar(a) else _float(a.value) if config_scalar(a) else None


def config_scalar(a: Assignment) -> bool:
    """A configuration file's number (`timesteps: 40` is read as the text `40`)."""
    if a.source != "config" or not isinstance(a.value, str) or len(a.numbers) != 1:
        return False
    value = _float(a.value)
    return value is not None and abs(value) not in (0.0, 1.0)


#: The last word of a class that holds settings (`DiffusionConfig`, `TrainArgs`).
_SETTINGS = re.compile(r"(?:config|configuration|args|arguments|params|parameters|settings|"
                       r"hparams|hyperparameters|options|cfg)$", re.IGNORECASE)


def numbered_elsewhere(a: Assignment, text: str) -> bool:
    """The name's namespace or the name is numbered (`stage1`, `phase_2`, `stage1_betas`) and
    the claim gives that word another number ("Stage 2 training"): another stage's setting."""
    path = a.path.lower().split(".")
    # the namespace's parts, and the numbered words of the name itself (`stage1_betas`)
    named = [m.group(1) for m in re.finditer(r"(?:^|_)([a-z]+_?\d+)(?=_|$)", path[-1])]
    for part in path[:-1] + named:
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
    parts = _sections(a)
    return a.source == "config" or (len(parts) == 1 and bool(_SETTINGS.search(parts[0])))


def _sections(a: Assignment) -> list[str]:
    """The sections above a name, its class's constructor left out (`Attention.__init__.heads`
    is in `Attention`)."""
    return [p for p in a.path.split(".")[:-1] if p not in ("__init__", "__post_init__")]


def in_namespace(a: Assignment, claim: frozenset[str]) -> bool:
    """The name's namespace (`TrainConfig`, `optimizer`, `scatter`; a constructor's is its
    class's) is generic or named by the claim: `scatter.s` is not the claim's `s`."""
    space = frozenset(t for part in _sections(a) for t in name_terms(part))
    return all(covered(t, claim) for t in space - GENERIC)


#: Words of a settings section's name that say it holds settings, not of what.
_HOLDERS = frozenset({"config", "cfg", "arg", "args", "kwarg", "param", "paramet", "hparam",
                      "hparams", "hyperparamet", "setting", "option"})


def settings_named(a: Assignment, claim: frozenset[str]) -> bool:
    """The settings section right above the name is named by the claim's words, generic ones
    too (`TrainingConfig.epochs` for "OOD training regime: 1000 epochs", not a `training`
    section for "PPO: 5 learning epochs per update")."""
    parts = a.path.split(".")
    if len(parts) < 2 or not in_settings(a):
        return False
    words = name_terms(parts[-2]) - _HOLDERS
    return bool(words) and all(covered(t, claim) for t in words)


def owner_named(a: Assignment, claim: frozenset[str]) -> bool:
    """The section right above the name is the claim's (`pfeif_adapter` of "Pfeiffer
    Adapter"), whatever collection holds it (`peft_methods`)."""
    parts = a.path.split(".")
    return len(parts) > 1 and any(covered(t, claim) for t in name_terms(parts[-2]) - GENERIC)


@dataclass(frozen=True)
class ClaimContext:
    """The terms of a whole claim, and of its head (`Label smoothing coefficient: ...`)."""

    terms: frozenset[str]
    head: frozenset[str]
    joined: frozenset[str] = frozenset()  # words with digits, as names write them: `stage3`
    # a letter the claim sets to a number (`d`, "3" of "3 ConvLSTM layers (D=3)"): notation
    # a name may carry beside words (`D_CONVLSTM_LAYERS`)
    letters: frozenset[tuple[str, str]] = frozenset()
    # the labels the claim writes in parentheses (`b` of "512 (B) / 768 (H)"), which say
    # which variant a name sets (`hidden_size_B`)
    labels: frozenset[str] = frozenset()


def claim_context(text: str) -> ClaimContext:
    head = text.split(":", 1)[0] if ":" in text[:100] else ""
    joined = {m.group(0).lower() for m in re.finditer(r"\b[A-Za-z]+\d\w*", text)} | {
        (m.group(1) + m.group(2)).lower()
        for m in re.finditer(r"\b([A-Za-z]+)[\s_-]?(\d+)\b", text)}
    # "fine-tuning" is `finetune` in code as often as `fine_tuning`
    hyphenated = {t for m in re.finditer(r"\b([A-Za-z]+)-([A-Za-z]+)\b", text)
                  for t in word_terms((m.group(1) + m.group(2)).lower())}
    letters = {(m.group(1).lower(), key) for m in _LETTER_SET.finditer(text)
               for key in number_keys(m.group(2))}
    labels = {m.group(1).lower() for m in _LABEL_IN_PARENS.finditer(text)}
    return ClaimContext(claim_terms(text) | hyphenated, claim_terms(head),
                        frozenset(joined), frozenset(letters), frozenset(labels))


#: A single letter set to a number (`D=3`, `N = 20`).
_LETTER_SET = re.compile(r"(?<![\w.'])([A-Za-z])\s*=\s*(\d+(?:\.\d+)?(?:[eE]-?\d+)?)(?![\w.])")
#: A label of one or two capitals alone in parentheses (`(B)`, `(XL)`).
_LABEL_IN_PARENS = re.compile(r"\(([A-Z]{1,2})\)")


def conflict(claim: Claim, a: Assignment, detail: str) -> Finding:
    """A value conflict at `a`: it fails numerical claims and is a reason for the others."""
    return Finding("value_conflict", f"{a.path} = {shown(a)} at {a.file}:{a.line}{detail}",
                   f"{a.file}:{a.line}", fails=claim.dimension == Dimension.D1)


def shown(a: Assignment) -> str:
    return str(a.value)[:60]


def related_assignments(index: RepoIndex, terms: frozenset[str]) -> list[Assignment]:
    """Assignments outside tests whose name (its last part) shares a specific term with
    `terms`, or a stem (`clip_norm` for "clipping")."""
    specific = terms - GENERIC or terms
    return [a for a, names in _name_terms(index) if any(covered(t, specific) for t in names)]


def _name_terms(index: RepoIndex) -> list[tuple[Assignment, frozenset[str]]]:
    found = index.cache.get("alignment_name_terms")
    if found is None:
        found = index.cache["alignment_name_terms"] = [
            (a, name_terms(a.name) - GENERIC) for a in map(_greek_spelt, index.assignments)
            if index.files[a.file].kind != EvidenceKind.TEST]
    return found


def _greek_spelt(a: Assignment) -> Assignment:
    """`a` with each Greek letter of its name spelt out as a part of its own: the code's
    `wωz` is the claim's `w_omega_z`."""
    if not any(letter in a.name for letter in GREEK):
        return a
    return replace(a, name=re.sub(r"_+", "_", spelt_out(a.name, apart=True)).strip("_"))


def strongly_related(a: Assignment, quantity: frozenset[str], claim: frozenset[str]) -> bool:
    """A name made of the quantity's own words (`epochs` for "40 training epochs",
    `label_smoothing` for "Label smoothing coefficient: epsilon = 0.1"): every part named by
    the claim, one at least by the quantity."""
    specific = name_terms(a.name) - GENERIC
    return bool(specific) and max(map(len, specific)) >= 3 and \
        any(covered(t, quantity) for t in specific) and \
        all(covered(t, quantity | claim) for t in specific)


def counts_items(related: list[Assignment], value: StatedValue) -> bool:
    """`5 seeds` is satisfied by `seeds = (0, 1, 2, 3, 4)`: the count of a listed quantity."""
    for a in related:
        if isinstance(a.value, (list, tuple)) and normalise(float(len(a.value))) in value.keys:
            return True
    return False


def default_conflicts(index: RepoIndex, claim: Claim, context: ClaimContext,
                      paper: PaperValues | None = None) -> list[Finding]:
    """A parameter default of the quantity a claim's small number counts or names
    (`num_boxes=40` for "4 boxes") that holds another number, in a function that is called
    and never passed that parameter: every call runs with that default, whatever a setting
    of the same quantity holds (the config's `NUM_BOXES = 4` does not place the boxes that
    `SokobanEnv(config)` places)."""
    out = []
    mentioned = mentioned_numbers(claim.text)
    counted = stated_values(claim.text, small=True)
    for value in counted:
        wrong = [a for a, _ in _name_terms(index) if a.source == "default" and scalar(a) and
                 not a.numbers & mentioned and
                 _configures(a, value, counted, claim, context) and
                 not numbered_elsewhere(a, claim.text) and not stated_for(a, paper or {})
                 and always_default(index, a)]
        if wrong:
            a = wrong[0]
            out.append(conflict(claim, a, " is the default, which every call keeps, of what "
                                          f"the claim states as {value.text}"))
    return out


def always_default(index: RepoIndex, a: Assignment) -> bool:
    """The function whose parameter default `a` is is called, and no call can pass that
    parameter: no keyword of its name anywhere, no key of its name in a configuration file
    or on the command line (a config system may pass it: `instantiate(cfg.env)`), no call
    of the function with as many positional arguments, none that unpacks its arguments."""
    if any(b.name == a.name and b.source in ("kwarg", "config", "argparse")
           for b in index.assignments):
        return False
    parts = a.path.split(".")
    function = parts[-2]
    if function == "__init__" and len(parts) > 2:
        function = parts[-3]  # the class is called
    calls = _calls_by_name(index).get(function, [])
    position = _parameter_position(index, a)
    return bool(calls) and position is not None and not any(
        unpacked or count > position for count, unpacked in calls)


def _calls_by_name(index: RepoIndex) -> dict[str, list[tuple[int, bool]]]:
    """Every call outside tests by the last part of its callee's name: how many positional
    arguments it passes, and whether it unpacks some (`*args`, `**kwargs`) (cached)."""
    found = index.cache.get("alignment_calls")
    if found is None:
        found = index.cache["alignment_calls"] = {}
        for file in index.files:
            module = python_module(index, file, tests=False)
            for node in ast.walk(module) if module is not None else ():
                if isinstance(node, ast.Call):
                    unpacked = any(isinstance(arg, ast.Starred) for arg in node.args) or \
                        any(kw.arg is None for kw in node.keywords)
                    found.setdefault(call_name(node), []).append((len(node.args), unpacked))
    return found


#: The position of a keyword-only parameter: beyond any call's positional arguments.
_NEVER = 1 << 30


def _parameter_position(index: RepoIndex, a: Assignment) -> int | None:
    """Where the parameter `a` is the default of stands among those a call passes by position
    (`self` left out); None where its function is not found."""
    module = python_module(index, a.file, tests=False)
    function = a.path.split(".")[-2]
    for node in ast.walk(module) if module is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == function and node.lineno <= a.line <= (node.end_lineno or 0):
            names = [arg.arg for arg in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            if a.name in names:
                return names.index(a.name)
            # a keyword-only parameter: no call passes it by position
            return _NEVER if a.name in [arg.arg for arg in node.args.kwonlyargs] else None
    return None
