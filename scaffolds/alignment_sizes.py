"""The alignment check's repeated-size rule: a size the claim writes as one number repeated
(`512×512`, `8×8×8`) held by a sequence of as many numbers of which one is another.

`resize((5120, 512))` for "image resolution: 512×512", or `compression_rate=[8, 80, 8]` for "a
compression ratio of 8×8×8": the code writes the claim's size with every entry but one, so it
means that size, and the odd entry is no number the claim mentions. The sequence must sit on a
line that names a word of the claim, so that an unrelated `(512, 3)` elsewhere is left alone.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass

from sabench.scaffolds.alignment_formulas import python_module
from sabench.scaffolds.alignment_rules import GENERIC, Finding
from sabench.scaffolds.alignment_values import mentioned_numbers, number_list
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.numbers import normalise
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import term_set

#: One whole number written two or more times with `×` or `x` between (`256×256`, `8x8x8`).
REPEATED = re.compile(r"(?<![\d.])(\d+)((?:\s*[×x]\s*\1(?![\d.]))+)")


@dataclass(frozen=True)
class Sequence:
    """A literal tuple or list of numbers in the code, and the line it is on."""

    file: str
    line: int
    numbers: tuple[str, ...]


def size_findings(index: RepoIndex, claim: Claim) -> list[Finding]:
    """A sequence of the claim's repeated size with one entry the claim does not mention."""
    if claim.dimension != Dimension.D1:
        return []
    sizes = {(normalise(float(m.group(1))), m.group(0).count(m.group(1)))
             for m in REPEATED.finditer(claim.text)}
    if not sizes:
        return []
    mentioned = mentioned_numbers(claim.text)
    words = term_set(claim.text) - GENERIC
    for sequence in sequences(index):
        counts = Counter(sequence.numbers)
        for size, length in sizes:
            odd = [n for n in counts if n != size]
            if len(sequence.numbers) == length and counts[size] == length - 1 and \
                    odd[0] not in mentioned and _line_terms(index, sequence) & words:
                where = f"{sequence.file}:{sequence.line}"
                return [Finding("values", f"({', '.join(sequence.numbers)}) at {where} writes "
                                          f"the claim's size {'×'.join([size] * length)} "
                                          f"with one entry {odd[0]}", where)]
    return []


def sequences(index: RepoIndex) -> list[Sequence]:
    """Every literal tuple or list of two or more numbers in the Python code and the
    configuration files (cached)."""
    found = index.cache.get("alignment_sequences")
    if found is None:
        found = index.cache["alignment_sequences"] = [
            s for file in index.files for s in _sequences_in(index, file)] + [
            Sequence(a.file, a.line, tuple(normalise(n) for n in numbers))
            for a in index.assignments if a.source == "config" and (numbers := number_list(a))]
    return found


def _sequences_in(index: RepoIndex, file: str) -> list[Sequence]:
    module = python_module(index, file, tests=False)
    out = []
    for node in ast.walk(module) if module is not None else ():
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Constant) and type(e.value) in (int, float)
                for e in node.elts):
            out.append(Sequence(file, node.lineno,
                                tuple(normalise(float(e.value)) for e in node.elts)))
    return out


def _line_terms(index: RepoIndex, sequence: Sequence) -> frozenset[str]:
    lines = index.files[sequence.file].lines
    return term_set(lines[sequence.line - 1]) if sequence.line <= len(lines) else frozenset()
