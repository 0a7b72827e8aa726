"""The alignment check's variant rule: a value per model size, set in the size's own section.

Papers give a quantity once per variant of their model: "n_layers=24 (B) / 32 (L) / 40 (H)",
"num_heads=4 (Tiny) / 8 (Small) / 8 (Medium)", "for 0.5B/1B models: n_layers=24/36". Code
keeps one setting per variant, each under a header that names the variant: a config section
(`large:`, `gpt_500m:`, `Hi-MAR-B:`), a dictionary key (`"tiny": {`), a branch (`if
model_size == "0.5B":`). Which of the claim's values such a setting must hold is then known,
so a variant's setting holding another number contradicts the claim even though the number
the claim states is set, under another variant's header, elsewhere in the repository.

A label is read in the header as written (`tiny`), as a size (`0.5B` is `500m`), or, for a
one-letter label, as the size word it abbreviates (`B` is `base`, `L` is `large`). A setting
counts only when its header names exactly one of the claim's variants, its name is the claim's
identifier (its parts, a part cut short: `diff_head1_layers` is `diffusion_head_1.num_layers`)
with no word of another quantity, and another variant's setting of the same identifier holds
its stated value (the repository follows the claim's scheme of variants).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sabench.scaffolds.alignment_rules import GENERIC, Finding, covered
from sabench.scaffolds.alignment_values import (
    ClaimContext,
    claim_context,
    config_scalar,
    conflict,
    quantity_parts,
    scalar,
)
from sabench.verifiers.index import Assignment, RepoIndex
from sabench.verifiers.numbers import number_keys
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import word_terms
from sabench.verifiers.types import EvidenceKind

_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
#: "n_layers=24 (B) / 32 (L) / 40 (H)": an identifier, then values each with its label.
_LABELLED = re.compile(rf"\b([A-Za-z][\w']*)\s*[=:]\s*((?:{_NUMBER}\s*\(\s*[\w.]+\s*\)\s*/\s*)+"
                       rf"{_NUMBER}\s*\(\s*[\w.]+\s*\))")
_VALUE_LABEL = re.compile(rf"({_NUMBER})\s*\(\s*([\w.]+)\s*\)")
#: "for 0.5B/1B models" or "Tiny/Small/Medium": the variants, in order; then "n_layers=24/36".
_LABEL_LIST = re.compile(r"(?<![\w./])((?:[\w.]+\s*/\s*)+[\w.]+)(?![\w/])")
_VALUE_LIST = re.compile(rf"\b([A-Za-z][\w']*)\s*[=:]\s*((?:{_NUMBER}\s*/\s*)+{_NUMBER})(?![\w./])")
#: Size words a one-letter label abbreviates.
SIZE_WORDS = frozenset({"tiny", "small", "base", "medium", "large", "huge", "giant", "mini",
                        "nano", "micro", "xl"})
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([kmbt])", re.I)
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
#: Words a config path puts around a setting without saying what it sets.
_PLACES = frozenset({"model", "models", "variant", "variants", "size", "sizes", "details",
                     "arch", "architecture", "configs", "settings", "presets", "preset"})


@dataclass(frozen=True)
class Variants:
    """An identifier the claim gives a value per variant: label -> the value's keys."""

    symbol: str
    values: dict[str, frozenset[str]]


def claim_variants(text: str) -> list[Variants]:
    """The identifiers the claim sets per variant, labelled in parentheses after each value,
    or by a list of variants as long as the list of values."""
    out = []
    for m in _LABELLED.finditer(text):
        pairs = _VALUE_LABEL.findall(m.group(2))
        out.append(Variants(m.group(1), {label.lower(): frozenset(number_keys(value))
                                         for value, label in pairs}))
    lists = [[p.strip().lower() for p in m.group(1).split("/")]
             for m in _LABEL_LIST.finditer(text)]
    lists = [labels for labels in lists if all(_is_label(p) for p in labels)]
    for m in _VALUE_LIST.finditer(text):
        numbers = [n.strip() for n in m.group(2).split("/")]
        labels = next((ls for ls in lists if len(ls) == len(numbers)), None)
        if labels and len(set(labels)) == len(labels):
            out.append(Variants(m.group(1), {label: frozenset(number_keys(n))
                                             for label, n in zip(labels, numbers, strict=True)}))
    return [v for v in out if len(v.values) >= 2]


def _is_label(text: str) -> bool:
    """A variant's name: a size (`0.5B`, `7b`) or a size word (`Tiny`, `large`)."""
    return bool(_SIZE.fullmatch(text)) or text in SIZE_WORDS


def variant_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """A value conflict for each identifier of a numerical claim that a variant's own setting
    sets to another variant's number (or any other), the first such setting."""
    if claim.dimension != Dimension.D1:
        return []
    context = claim_context(claim.text)
    out = []
    for variants in claim_variants(claim.text):
        placed = [(a, label) for a in _numeric_settings(index)
                  if names_identifier(a, variants.symbol, context) and
                  (label := variant_of(index, a, variants))]
        right = {label for a, label in placed if a.numbers & variants.values[label]}
        wrong = [(a, label) for a, label in placed if not a.numbers & variants.values[label]]
        for a, label in wrong:
            if right - {label}:
                stated = "/".join(sorted(variants.values[label]))
                out.append(conflict(claim, a, f", a setting of variant {label}, but the claim "
                                              f"states {variants.symbol}={stated} for it"))
                break
    return out


def _numeric_settings(index: RepoIndex) -> list[Assignment]:
    found = index.cache.get("alignment_numeric_settings")
    if found is None:
        found = index.cache["alignment_numeric_settings"] = [
            a for a in index.assignments if (scalar(a) or config_scalar(a)) and
            index.files[a.file].kind != EvidenceKind.TEST]
    return found


def variant_of(index: RepoIndex, a: Assignment, variants: Variants) -> str | None:
    """The one variant of the claim whose label the header above `a` names."""
    header = header_of(index, a)
    if header is None:
        return None
    tokens = {t.lower() for t in re.findall(r"\d+(?:\.\d+)?[A-Za-z]?|[A-Za-z]+", header)}
    named = [label for label in variants.values if any(names_label(t, label) for t in tokens)]
    return named[0] if len(named) == 1 else None


def header_of(index: RepoIndex, a: Assignment) -> str | None:
    """What names the block `a` is set in: its own line before its name (`"small":
    {"n_heads": 8}`) and the nearest line above indented less (its section, key or
    branch)."""
    entry = index.files.get(a.file)
    if entry is None or not 0 < a.line <= len(entry.lines):
        return None
    line = entry.lines[a.line - 1]
    before = line[:max(0, line.find(a.name))]
    indent = len(line) - len(line.lstrip())
    for number in range(a.line - 1, max(0, a.line - 40), -1):
        text = entry.lines[number - 1]
        if text.strip() and not text.lstrip().startswith("#") and \
                len(text) - len(text.lstrip()) < indent:
            return f"{text.split('#', 1)[0]} {before}"
    return before


def names_label(token: str, label: str) -> bool:
    if token == label:
        return True
    size, wanted = _SIZE.fullmatch(token), _SIZE.fullmatch(label)
    if size and wanted:
        return float(size.group(1)) * _SCALE[size.group(2).lower()] == \
            float(wanted.group(1)) * _SCALE[wanted.group(2).lower()]
    return len(label) == 1 and token in SIZE_WORDS and token[0] == label


def names_identifier(a: Assignment, symbol: str, context: ClaimContext) -> bool:
    """`a` (its key, and the config sections above the variant's own) is named as the
    identifier: every part of the identifier is a part of the name or cut short from one
    (a section's place word, `models`, is none), and every other part is generic, a place in
    a config, or a word of the claim."""
    sections = (a.path if a.source == "config" else a.name).split(".")
    key, above = quantity_parts(sections[-1]), quantity_parts("_".join(sections[:-2]))
    own, parts = quantity_parts(symbol), key | above
    if not own:
        return False
    matched = set()
    for part in own:
        longer = [p for p in key | above - _PLACES
                  if p == part or len(part) >= 3 and p.startswith(part)]
        if not longer:
            return False
        matched.add(longer[0])
    return all(p in _PLACES or p in GENERIC or any(covered(t, context.terms)
                                                   for t in word_terms(p))
               for p in parts - matched)

