"""The alignment check's twin rule: one quantity computed in several places, one copy different.

Reproductions compute the same quantity more than once: each sampler repeats the update step
`x = x + h * drift + sqrt(h) * sigma * noise`, each adapter scales by `scale * alpha`, each
reward function sums the same terms. Where the repository writes an expression of one shape
in several places and all but one agree, the one that differs by a single operator (`-` for
`+`, `/` for `*`) computes something its own repository computes otherwise: it has drifted
from the copies around it, whichever the paper wrote.

Two copies are one quantity when they assign the same name (`x_t`, `self.scale`; every
`return` counts as one name), or, for an expression of three operators or more, whatever they
assign: so long an expression is not written twice by chance.

A pair that disagrees one to one says nothing about which copy is right (an encoder
multiplies latents by a scale factor, its decoder divides by it; a forward integration adds a
step, the backward one subtracts it), so only a copy outvoted by the others fails: it must be
rarer than the variant it differs from.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass

from sabench.scaffolds.alignment_formulas import expression_text, python_module
from sabench.scaffolds.alignment_idioms import carrying_nodes, statement_of
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex
from sabench.verifiers.spec import Claim, Dimension

#: The operators a drift swaps, by the pair each belongs to.
SWAPPED = {ast.Add: ast.BitXor, ast.Sub: ast.BitXor, ast.Mult: ast.BitOr, ast.Div: ast.BitOr}
#: Operators from which an expression is too long to be written twice by chance.
LONG = 3


@dataclass(frozen=True)
class Copy:
    """A statement that assigns or returns an arithmetic expression: what it assigns (None
    for a return), its operators in order, and where it is."""

    target: str | None
    operators: tuple[str, ...]
    file: str
    line: int
    text: str


def twin_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[tuple[str, str]]:
    """(reason, where) for the first statement of the code carrying a formula or algorithm
    claim that its repository's other copies outvote by one operator."""
    if claim.dimension != Dimension.D2:
        return []
    shapes = _copies_by_shape(index)
    seen = set()
    for file, node in carrying_nodes(index, check):
        statement = statement_of(node)
        if not isinstance(node, ast.BinOp) or (file, statement.lineno) in seen:
            continue
        seen.add((file, statement.lineno))
        found = _read(statement, file)
        if found is None:
            continue
        shape, this = found
        same = [c for c in shapes.get(shape, ()) if (c.file, c.line) != (file, this.line) and
                (c.target == this.target or len(this.operators) >= LONG)]
        agree = 1 + sum(c.operators == this.operators for c in same)
        for other in same:
            votes = sum(c.operators == other.operators for c in same)
            if _one_apart(this, other) and votes > agree:
                where = f"{file}:{this.line}"
                return [(f"{this.text} at {where} differs by one operator from the same "
                         f"expression at {other.file}:{other.line} ({other.text}), which the "
                         f"repository writes that way in {votes} places", where)]
    return []


def _one_apart(a: Copy, b: Copy) -> bool:
    return sum(x != y for x, y in zip(a.operators, b.operators, strict=True)) == 1


def _copies_by_shape(index: RepoIndex) -> dict[str, list[Copy]]:
    """Every statement of the repository's code (tests aside) that assigns or returns an
    expression with a swappable operator, by its shape (cached)."""
    found = index.cache.get("alignment_twins")
    if found is None:
        found = defaultdict(list)
        for file in index.files:
            module = python_module(index, file, tests=False)
            for statement in ast.walk(module) if module is not None else ():
                read = _read(statement, file)
                if read is not None:
                    found[read[0]].append(read[1])
        index.cache["alignment_twins"] = found = dict(found)
    return found


def _read(statement: ast.AST, file: str) -> tuple[str, Copy] | None:
    """The statement's shape (its expression with each operator replaced by its pair's) and
    its copy; None for a statement that is no single assignment or return of arithmetic."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = expression_text(statement.targets[0]), statement.value
    elif isinstance(statement, ast.AugAssign) and type(statement.op) in SWAPPED:
        target = expression_text(statement.target) + SWAPPED[type(statement.op)].__name__
        value = statement.value
    elif isinstance(statement, ast.Return) and statement.value is not None:
        target, value = None, statement.value
    else:
        return None
    operators: list[str] = []
    shape = _shape(value, operators)
    if not operators:
        return None
    return shape, Copy(target, tuple(operators), file, statement.lineno, expression_text(value))


def _shape(node: object, operators: list[str]) -> str:
    """The expression written out with each swappable operator replaced by its pair's (its
    own appended to `operators`, left to right): what copies one operator apart share."""
    if isinstance(node, ast.BinOp):
        left = _shape(node.left, operators)
        pair = SWAPPED.get(type(node.op))
        if pair is not None:
            operators.append(type(node.op).__name__)
        op = (pair or type(node.op)).__name__
        return f"({left} {op} {_shape(node.right, operators)})"
    if isinstance(node, ast.AST):
        fields = [_shape(value, operators) for name, value in ast.iter_fields(node)
                  if name != "ctx"]
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return f"[{', '.join(_shape(item, operators) for item in node)}]"
    return repr(node)
