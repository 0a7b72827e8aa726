"""The alignment check's argument rule: a call named by the claim takes the claim's numbers.

A value need not be bound to a name. "Diagonal entries sampled uniformly from [0, 10]" is
`rng.uniform(0.0, 10.0, size=k)`; "images resized to 512×512" is `img.resize((512, 512))`.
Where the check finds a numerical claim implemented (its two best evidence windows), a call
whose name is a word of the claim (`uniform`, `resize`) and whose literal numbers include
numbers the claim states, but also one the claim never mentions, sets the claim's values
otherwise: `uniform(0.0, 100)` draws from another range than [0, 10]. A range is compared
as a range: `uniform(0, 100)` is not [0, 10] even where the claim mentions 100 elsewhere
("d=100"), when it keeps one end of a range the claim states and moves the other, anywhere in
the functions the windows show (the draw may lie below the window). Classes are left out:
a layer's constructor takes its sizes (`_DownsampleBlock(256, 512)` channels), which
coincide with the sizes a claim states (256×256 images) without setting them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from sabench.scaffolds.alignment_formulas import python_module
from sabench.scaffolds.alignment_rules import GENERIC, Finding, covered
from sabench.scaffolds.alignment_values import (
    RANGE_END,
    function_spans,
    mentioned_numbers,
    range_end,
)
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
    ranges = stated_ranges(claim.text)
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
    # a draw from a range may lie further down the function a window shows
    for file, call in _calls_in_functions(index, check) if ranges else ():
        name = call_name(call)
        moved = _range_moved(call, ranges) if "uniform" in name.lower() else None
        if moved:
            where = f"{file}:{call.lineno}"
            return [Finding("value_conflict", f"{name}(...) at {where} draws from "
                                              f"[{moved[0]:g}, {moved[1]:g}], but the claim "
                                              f"states [{moved[2]:g}, {moved[3]:g}]", where)]
    return []


_RANGE = re.compile(rf"[\[(]\s*({RANGE_END})\s*,\s*({RANGE_END})\s*[\])]")


def stated_ranges(text: str) -> list[tuple[float, float]]:
    """The ranges `[a, b]` a claim states, ends written as numbers or fractions (`[0, 1/3]`)."""
    return [(range_end(m.group(1)), range_end(m.group(2))) for m in _RANGE.finditer(text)]


def _range_moved(call: ast.Call, ranges: list[tuple[float, float]]
                 ) -> tuple[float, float, float, float] | None:
    """The call's (low, high), and the stated range it keeps one end of and moves the other,
    when it is no range the claim states."""
    ends = [_literal(a) for a in call.args[:2]]
    if len(ends) < 2 or None in ends:
        return None
    low, high = ends
    if any(_close(low, a) and _close(high, b) for a, b in ranges):
        return None
    for a, b in ranges:
        moved = high if _close(low, a) else low
        # `uniform(0, 1)` draws noise in too many places to be the claim's range moved
        if _close(low, a) != _close(high, b) and abs(moved) not in (0, 1):
            return low, high, a, b
    return None


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= 1e-6 * max(1.0, abs(y))


def _calls_in_windows(index: RepoIndex, check: ClaimCheck) -> Iterator[tuple[str, ast.Call]]:
    for e in check.evidence[:2]:
        for call in _calls(index, e.file):
            if e.start_line <= call.lineno <= e.end_line:
                yield e.file, call


def _calls_in_functions(index: RepoIndex, check: ClaimCheck
                        ) -> Iterator[tuple[str, ast.Call]]:
    """The calls of the best evidence windows and of the functions they show lines of."""
    windows = [(e.file, e.start_line, e.end_line) for e in check.evidence[:2]]
    spans = set(windows) | function_spans(index, windows)
    for file in sorted({f for f, _, _ in spans}):
        for call in _calls(index, file):
            if any(f == file and start <= call.lineno <= end for f, start, end in spans):
                yield file, call


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
