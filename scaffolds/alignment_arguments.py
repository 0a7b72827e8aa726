"""The alignment check's argument rule: a call named by the claim takes the claim's numbers.

A value need not be bound to a name. "Diagonal entries sampled uniformly from [0, 10]" is
`rng.uniform(0.0, 10.0, size=k)`; "images resized to 512×512" is `img.resize((512, 512))`.
Where the check finds a numerical claim implemented (its two best evidence windows), a call
whose name is a word of the claim (`uniform`, `resize`) and whose literal numbers include
numbers the claim states, but also one the claim never mentions, sets the claim's values
otherwise: `uniform(0.0, 100)` draws from another range than [0, 10]. Classes are left out:
a layer's constructor takes its sizes (`_DownsampleBlock(256, 512)` channels), which
coincide with the sizes a claim states (256×256 images) without setting them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from sabench.scaffolds.alignment_formulas import python_module
from sabench.scaffolds.alignment_rules import GENERIC, Finding, covered
from sabench.scaffolds.alignment_values import mentioned_numbers
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex, const_value
from sabench.verifiers.numbers import normalise
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.stubs import call_name
from sabench.verifiers.terms import term_set, word_terms


def argument_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[Finding]:
    """A call named by a word of a numerical claim, in its best evidence windows, whose literal
    numbers are the claim's but for one the claim never mentions."""
    if claim.dimension != Dimension.D1:
        return []
    words = term_set(claim.text) - GENERIC
    mentioned = mentioned_numbers(claim.text)
    for file, call in _calls_in_windows(index, check):
        name = call_name(call)
        if len(name) < 4 or name.lstrip("_")[:1].isupper() or \
                not any(covered(t, words) for t in word_terms(name)):
            continue  # a class builds a part, whose sizes (channels, widths) are not values
            # the claim sets through it
        numbers = [n for n in map(_literal, _arguments(call)) if n is not None]
        unstated = [n for n in numbers if normalise(n) not in mentioned]
        stated = [n for n in numbers if normalise(n) in mentioned]
        # 0 and 1 start and step too many calls to be a value the claim left out
        if stated and len(unstated) == 1 and abs(unstated[0]) not in (0, 1):
            where = f"{file}:{call.lineno}"
            return [Finding("value_conflict", f"{name}(...) at {where} takes {unstated[0]:g}, "
                                              "which the claim does not state, beside its "
                                              f"{', '.join(f'{n:g}' for n in stated)}", where)]
    return []


def _calls_in_windows(index: RepoIndex, check: ClaimCheck) -> Iterator[tuple[str, ast.Call]]:
    for e in check.evidence[:2]:
        for call in _calls(index, e.file):
            if e.start_line <= call.lineno <= e.end_line:
                yield e.file, call


def _calls(index: RepoIndex, file: str) -> list[ast.Call]:
    """The calls of a Python file outside tests (cached per file: every numerical claim of
    the paper looks at the same few files)."""
    cache = index.cache.setdefault("alignment_calls", {})
    if file not in cache:
        module = python_module(index, file, tests=False)
        cache[file] = [n for n in ast.walk(module) if isinstance(n, ast.Call)] \
            if module is not None else []
    return cache[file]


def _arguments(call: ast.Call) -> Iterator[ast.AST]:
    """The positional arguments, and the items of a tuple or list given as one."""
    for arg in call.args:
        if isinstance(arg, (ast.Tuple, ast.List)):
            yield from arg.elts
        else:
            yield arg


def _literal(node: ast.AST) -> float | None:
    """A number written as such (`100`, `-0.5`), not one computed (`1 / 40`)."""
    signed = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
        isinstance(node.operand, ast.Constant)
    if not (isinstance(node, ast.Constant) or signed):
        return None
    value = const_value(node)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
