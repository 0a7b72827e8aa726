"""The alignment check's wording rules: what a claim's own words fix about the arithmetic.

- **Divisors one apart.** A claim that divides a named quantity by a count (`epsilon / C`)
  and code that carries the claim dividing that quantity only by the count minus or plus one
  (`epsilon / (n_classes - 1)`) compute different things, and the other way round (`1 / (n -
  1)` written `/ n`). The count itself may be named otherwise in the code (`C` is
  `n_classes`); the quantity it divides is what ties the two together, so the rule needs a
  numerator of more than one letter that the code names alike, and it fails only when no
  division of that quantity in the carrying code has the claim's form.
- **Decoupled weight decay.** A claim that keeps the weight decay out of the gradient or the
  loss (decoupled decay, "never enters the gradient", "not part of the loss") is contradicted
  by carrying code that adds a decay or L2 coefficient times a parameter to a gradient or a
  loss, or that hands the decay to an optimizer that couples it (`Adam(..., weight_decay=)`,
  `SGD(..., weight_decay=)`: PyTorch adds it to the gradient).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from sabench.scaffolds.alignment_formulas import atom, flatten_product, formula_pieces
from sabench.scaffolds.alignment_idioms import (
    call_name,
    carrying_nodes,
    enclosing_function,
    is_one,
    parts,
    statement_of,
    target_words,
)
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import RepoIndex, parse_python
from sabench.verifiers.spec import Claim, Dimension

BARE, ONE_APART = "bare", "one apart"


def wording_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                     ) -> list[tuple[str, str]]:
    """(reason, where) for each wording rule the carrying code of a D2 claim breaks."""
    if claim.dimension != Dimension.D2:
        return []
    nodes = carrying_nodes(index, check)
    return [*divisor_findings(claim.text, nodes), *decoupling_findings(claim.text, nodes)]


# ------------------------------------------------------------------------------- divisors


def claim_divisions(text: str) -> dict[str, str]:
    """The named quantities (more than one letter, normalised) the claim's formulas divide,
    and the form of their divisor: a bare name, or a name one apart (`(n - 1)`)."""
    out: dict[str, str] = {}
    for piece in formula_pieces(text):
        try:
            tree = parse_python(piece, mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            continue
        for numerator, form in divisions(tree):
            out.setdefault(numerator, form)
    return out


def divisions(tree: ast.AST) -> Iterator[tuple[str, str]]:
    """(numerator name, divisor form) of every division under `tree` whose divisor is a
    bare name or one apart from one, and whose numerator holds named factors."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        form = divisor_form(node.right)
        if form is None:
            continue
        for factor, exponent in flatten_product(node.left):
            name = _name(factor)
            if exponent > 0 and name and len(name) > 1:
                yield name, form


def divisor_form(node: ast.AST) -> str | None:
    if _name(node):
        return BARE
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        sides = (node.left, node.right)
        if any(is_one(s) for s in sides) and any(_name(s) for s in sides):
            return ONE_APART
    return None


def _name(node: ast.AST) -> str | None:
    """A plain name's normalised spelling (`len(x)` counts as one); None for anything else."""
    if isinstance(node, ast.Name):
        return atom(node.id)
    if isinstance(node, ast.Attribute):
        return atom(node.attr)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "len" and len(node.args) == 1:
        return "len"
    return None


def divisor_findings(text: str, nodes: list[tuple[str, ast.AST]]) -> list[tuple[str, str]]:
    """A quantity the claim divides that the carrying code divides only in the other form."""
    wanted = claim_divisions(text)
    if not wanted:
        return []
    seen: dict[str, dict[str, str]] = {}  # numerator -> form -> where
    for file, node in nodes:
        if isinstance(node, ast.BinOp):
            for numerator, form in divisions(node):
                if numerator in wanted:
                    seen.setdefault(numerator, {}).setdefault(form, f"{file}:{node.lineno}")
    out = []
    for numerator, forms in seen.items():
        if wanted[numerator] not in forms:
            form, where = next(iter(forms.items()))
            out.append((f"the claim divides {numerator} by {form_text(wanted[numerator])}; "
                        f"the code at {where} divides it by {form_text(form)}", where))
    return out


def form_text(form: str) -> str:
    return "a count one apart (n - 1 or n + 1)" if form == ONE_APART else "a count"


# ------------------------------------------------------------------------------- decoupling

#: A claim that keeps the weight decay out of the gradient or the loss.
DECOUPLED = re.compile(r"decoupled\s+weight[\s-]+decay|weight[\s-]+decay\b[^.;]*?\b(?:never|not)"
                       r"\b[^.;]*?\b(?:gradient|loss)", re.I)
DECAY_WORDS = frozenset({"decay", "wd", "l2", "weightdecay"})
GRADIENT_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "loss", "losses"})
#: PyTorch optimizers whose `weight_decay` adds the decay to the gradient.
COUPLING_OPTIMIZERS = frozenset({"Adam", "SGD", "RMSprop", "Adagrad", "NAdam", "RAdam"})


def decoupling_findings(text: str, nodes: list[tuple[str, ast.AST]]
                        ) -> list[tuple[str, str]]:
    if not DECOUPLED.search(text):
        return []
    for file, node in nodes:
        reason = coupled_decay(node)
        if reason:
            where = f"{file}:{node.lineno}"
            return [("the claim keeps the weight decay out of the gradient and the loss; "
                     f"the code at {where} {reason}", where)]
    return []


def coupled_decay(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and call_name(node) in COUPLING_OPTIMIZERS and any(
            k.arg == "weight_decay" and not _is_zero(k.value) for k in node.keywords):
        return f"gives the decay to {call_name(node)}, which adds it to the gradient"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and \
            any(_decay_term(side) for side in (node.left, node.right)) and \
            _in_gradient(node):
        return "adds a decay term to a gradient or a loss"
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and \
            _decay_term(node.value) and parts(node.target) & GRADIENT_WORDS:
        return "adds a decay term to a gradient or a loss"  # `p.grad += wd * p`
    return None


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, 0.0)


def _decay_term(node: ast.AST) -> bool:
    """`l2 * w`, `self.weight_decay * param`: a decay coefficient times something else."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return False
    factors = [f for f, _ in flatten_product(node)]
    return len(factors) > 1 and any(_decay_named(f) for f in factors)


def _decay_named(node: ast.AST) -> bool:
    """`weight_decay`, `wd`, `l2`, `l2_reg`: the name's lower-case pieces (`l2` stays one)."""
    name = node.id if isinstance(node, ast.Name) else node.attr \
        if isinstance(node, ast.Attribute) else ""
    return bool(set(re.split(r"_+", name.lower())) & DECAY_WORDS)


def _in_gradient(node: ast.AST) -> bool:
    """The sum is assigned to, or returned by a function named for, a gradient or a loss."""
    if target_words(node) & GRADIENT_WORDS:
        return True
    statement = statement_of(node)
    function = enclosing_function(statement)
    return isinstance(statement, ast.Return) and function is not None and \
        bool(parts(ast.Name(function.name)) & GRADIENT_WORDS)
