"""The alignment check's structural formula rule: code one change away from the paper's formula.

The term rule of `alignment_formulas` pairs a formula's terms by their names, so it sees a
flipped sign only where the code spells the paper's names. Reproductions rarely do: the paper's
`1 / (1 + exp(-(Q_i - Q_j) / s))` is `1.0 / (1.0 + np.exp(-(q_i - q_j) / self.scale))`, its
`e_k * Down(x_1, 2^k) + (1 - e_k) * n` is `e_k * x1_down + (1.0 - e_k) * n`. This rule compares
the shape of the formula instead: sums and products (in any order of their terms), powers and
named operations, down to leaves. A leaf of the paper's formula matches any leaf of the code,
but only leaves that the code spells as the paper does (the same constant, the same name or an
abbreviation of it, or a name in the words the claim defines the symbol with) *anchor* the
match. Where a function that carries the claim holds an expression of the formula's shape
with enough anchors and one operator or one constant other than the paper's (`-` for `+`,
`/` for `*`, `sqrt(30)` for `√3`), and no expression of that shape with the paper's
operators and constants, the claim fails (a D2 formula's, or a D1 value's): that function
computes something else, whatever another function computes with the same terms (the loss's
`1 - alpha_t` is no excuse for the masking's `1 + alpha_t`). Where no expression of the
whole repository has the formula's operators and one anywhere has one other, the claim fails
too, whether or not the check's evidence reaches that code: it is the repository's only
computation of the formula. An index the paper computes in a subscript (`T - kN/2 - n` of
`alpha_{T - kN/2 - n}`) is such a formula too.

An anchoring name of two letters or more weighs 2, a constant, an operation or a one-letter
name 1 (the same letter, or the first part of the code's name: `q` and `q_pos`); enough
anchors means at least 3 and at least three quarters of the formula's leaves. A
shape as small as `a - b` is in every function, and only the names tell which one is the
paper's.

The same comparison holds the code to its own comments: reproductions write the formula they
implement beside it (`# x_t = sqrt_alpha_bar * x_0 + sqrt_one_minus_alpha_bar * epsilon`),
in the code's names, and an expression of the carrying code one operator away from such a
comment, with no expression of the comment's operators in the same function, computes
something other than what its author transcribed from the paper. As a comment uses the code's
names, each of its names must pair with the same name (or a call or indexing of it), and half
of what its leaves could anchor suffices.

The same carrying code, the constructors of its classes, and the functions it calls must not
hold arithmetic no paper can mean (`senseless_findings`; a claim whose code runs code that
cannot run, or computes nothing, is not implemented as the paper describes it): a size computed
by true division for a call that takes sizes (`nn.Linear(d, n_heads / d_head)`, `x.view(b, t,
heads / d_head)` refuse the float at run time) or for an attribute the repository takes as a
size, an index or a slice bound by true division (`alpha_bar[t - k / n // 2]`: indexing refuses
the float), an expression minus itself, a computed number times one (`1.0 * math.sqrt(d)`: a
reciprocal that lost its operator), a Python list divided or subtracted (`[0.0] / n`, which
raises), a divergence summed from two log-probabilities, or layers stacked or applied one after
another whose sizes do not chain (`alignment_layers`).
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sabench.scaffolds.alignment_formulas import (
    GREEK,
    expression_text,
    flatten_product,
    flatten_sum,
    functions_of,
    name_key,
    normalise_formula,
    paper_notation,
    python_module,
    right_hand_sides,
    set_once,
)
from sabench.scaffolds.alignment_idioms import callees
from sabench.scaffolds.alignment_layers import unchained_applications, unchained_layers
from sabench.scaffolds.alignment_rules import GENERIC, carriers, covered, name_terms
from sabench.scaffolds.alignment_values import mentioned_numbers
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import Definition, RepoIndex, parse_python
from sabench.verifiers.numbers import extract_numbers, normalise
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.terms import term_set

#: Operations written as calls that compute one thing of one operand, whatever their keyword
#: arguments (`dim=-1`) and whichever library holds them (`np.exp`, `torch.exp`, `x.exp()`).
OPERATIONS = frozenset({"sqrt", "norm", "exp", "log", "sum", "mean", "softmax", "sigmoid",
                        "tanh", "abs", "relu", "silu", "gelu", "cos", "sin", "square"})
#: Operations that reduce over components, which papers often leave implicit.
REDUCTIONS = frozenset({"sum", "mean"})
#: Methods that lay a tensor out, or move or cast it, without changing its values: the code's
#: `alpha1.unsqueeze(1)` is the paper's `alpha_1`.
LAYOUT_METHODS = frozenset({"unsqueeze", "squeeze", "view", "view_as", "reshape", "expand",
                            "expand_as", "to", "type_as", "float", "double", "half",
                            "contiguous", "detach", "clone", "flatten"})
#: What a leaf spelled as the paper spells it weighs towards telling the paper's expression
#: from any other of its shape: a constant or an operation (`1`, `exp`) some, a name more.
ANCHOR, NAME_ANCHOR = 1, 2
#: More terms than this are not permuted (a sum of seven terms is not a formula one flips).
MAX_TERMS = 6


@dataclass(frozen=True)
class Node:
    """A formula or code expression: `sum` and `product` hold (sign or exponent, node)
    children in any order; `power` holds base and exponent; `call` an operation's operands;
    `name`, `number` and `other` are leaves (`other`: what neither side can spell alike, such
    as an indexing or a call with keywords)."""

    kind: str
    label: str = ""
    children: tuple[tuple[int, Node], ...] = ()
    #: For a name of the paper's formula, the words the paper defines it with (`s : scaling
    #: factor`): a code name in those words (`scale_factor`) is that symbol.
    words: frozenset[str] = frozenset()

    def leaves(self) -> int:
        if not self.children:
            return 1
        return sum(child.leaves() for _, child in self.children)


def tree(node: ast.AST) -> Node:
    """The `Node` of a Python expression."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) or \
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        terms = flatten_sum(node)
        if len(terms) == 1 and terms[0][1] > 0:
            return tree(terms[0][0])
        return Node("sum", children=tuple((sign, tree(t)) for t, sign in terms))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.FloorDiv,
                                                             ast.MatMult)):
        factors = [(e, tree(f)) for f, e in flatten_product(node)]
        factors = [(e, f) for e, f in factors if not _one(f)]  # `1 / x` is `x^-1`
        if len(factors) == 1 and factors[0][0] > 0:
            return factors[0][1]
        return Node("product", children=tuple(factors))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return Node("power", children=((0, tree(node.left)), (0, tree(node.right))))
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
            not isinstance(node.value, bool):
        return Node("number", f"{float(node.value):g}")
    if isinstance(node, (ast.Name, ast.Attribute)):
        return Node("name", label(node.id if isinstance(node, ast.Name) else node.attr))
    if isinstance(node, ast.Subscript):  # weights['w_q_d'] is w_q_d, alpha[i] is alpha
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return Node("name", label(key.value))
        if isinstance(node.value, (ast.Name, ast.Attribute)):
            return tree(node.value)
    if isinstance(node, ast.Call):
        return _call(node)
    return Node("other")


def label(name: str) -> str:
    """A name as both sides are compared: lower case, its parts kept (`lambda_` is `lambda`)."""
    return name.lower().strip("_")


def _one(node: Node) -> bool:
    return node.kind == "number" and node.label == "1"


def _call(node: ast.Call) -> Node:
    """`sqrt(d)` is `d^0.5`; `x.norm(dim=-1)` and `torch.norm(x)` are the operation `norm` of
    their one operand; a function of one one-letter variable other than an operation is a
    name (the paper's `sigma(t)` is the code's `sigma_t`, its `sigmoid(x)` stays a sigmoid); a
    method called without arguments, or one that only lays its object out (`LAYOUT_METHODS`),
    is its object (`self.alpha.get_value()` is `alpha`); a getter is what it gets
    (`self.get_hat_alpha(i)` is `hat_alpha`); any other call is a leaf."""
    func = node.func
    if isinstance(func, ast.Name) and len(node.args) == 1 and not node.keywords and \
            isinstance(node.args[0], ast.Name) and len(node.args[0].id) == 1 and \
            label(func.id) not in OPERATIONS:
        return Node("name", label(f"{func.id}_{node.args[0].id}"))  # the paper's sigma(t)
    if isinstance(func, ast.Name) and len(func.id) == 1 and label(func.id) not in OPERATIONS:
        return Node("name", label(func.id))  # the paper's h(s'): what h gives, named as h is
    name = label(func.id if isinstance(func, ast.Name) else
                func.attr if isinstance(func, ast.Attribute) else "")
    if name in OPERATIONS:
        operands = node.args or ([func.value] if isinstance(func, ast.Attribute) else [])
        if len(operands) == 1:
            operand = tree(operands[0])
            if name == "sqrt":
                return Node("power", children=((0, operand), (0, Node("number", "0.5"))))
            return Node("call", name, ((0, operand),))
    if isinstance(func, ast.Attribute) and (name in LAYOUT_METHODS or
                                            not node.args and not node.keywords):
        return tree(func.value)
    if name.startswith("get_") and len(name) > 5:  # `_get_hat_alpha(t)` is hat_alpha at t
        return Node("name", name[4:])
    return Node("other")


# ------------------------------------------------------------------------------- matching


def match(paper: Node, code: Node, names_agree: bool = False, constants: bool = False
          ) -> dict[int, int]:
    """How the code expression can be the paper's formula: for 0 and 1 operators other than
    the paper's, the most anchors of such a match (absent: no match). With `names_agree` (a
    comment written in the code's names), a name of the formula pairs only with its own, or
    with a call or an indexing of it (`alpha_M.view(1, 1, -1)`), not with another name nor
    with arithmetic."""
    if code.kind == "call" and code.label in REDUCTIONS and code.label != paper.label:
        # `(g_xy ** 2).sum(dim=-1)` for the paper's `g_xy^2`: a reduction over components
        # the paper leaves implicit
        return match(paper, code.children[0][1], names_agree, constants)
    if paper.kind in ("sum", "product"):
        if code.kind == paper.kind and len(code.children) == len(paper.children):
            return _match_terms(paper, code, names_agree, constants)
        return {0: 0} if _leaf(code) else {}
    if paper.kind == "power":
        if code.kind == "power":
            base, code_base = paper.children[0][1], code.children[0][1]
            if _squared_norm(paper) and not (code_base.kind == "call" and
                                             code_base.label == "norm"):
                base = base.children[0][1]  # the paper's ||x||^2 is the code's sum of x**2
            return _combine([match(base, code_base, names_agree, constants),
                             match(paper.children[1][1], code.children[1][1], names_agree,
                                   constants)])
        return {0: 0} if _leaf(code) else {}
    if paper.kind == "call":
        if code.kind == "call" and code.label == paper.label:
            return _combine([{0: ANCHOR}, match(paper.children[0][1], code.children[0][1],
                                                names_agree, constants)])
        if code.kind == "name" and _names_the_call(paper, code.label):
            return {0: NAME_ANCHOR}  # `log_T` holds the paper's `log(T)`, computed before
        return {0: 0} if _leaf(code) else {}
    if paper.kind == "number":
        if code.kind != "number":
            return {}
        if _same_number(paper.label, code.label):
            return {0: ANCHOR}
        return {1: 0} if constants else {}  # `sqrt(30)` for the paper's √3: one change
    if paper.kind == "name" and code.kind == "name" and same_name(paper.label, code.label):
        # a name of more letters says which quantity this is; `x` could be many
        return {0: NAME_ANCHOR if len(paper.label.replace("_", "")) > 1 else ANCHOR}
    if paper.kind == "name" and code.kind == "name" and len(paper.label) == 1 and \
            code.label.lower().split("_")[0] == paper.label.lower():
        return {0: ANCHOR}  # `q` of the paper, `q_pos` of the code: a letter says little
    if paper.kind == "name" and code.kind == "name" and paper.words and \
            any(covered(t, paper.words) for t in name_terms(code.label) if len(t) > 2):
        return {0: ANCHOR}  # `rating_a` for the paper's `Q_i`, "Q_i: Bradley-Terry ratings"
    if names_agree and paper.kind == "name" and code.kind != "other":
        return {}  # another name, or arithmetic in its place (`d_ff` solved for, not used)
    return {0: 0}  # a name of the paper may be computed in place in the code


def _names_the_call(paper: Node, name: str) -> bool:
    """The code's name spells the paper's operation of a name (`log_T`, `sqrt_d` for log(T),
    sqrt(d)): the value computed before, under a name that says so."""
    operand = paper.children[0][1]
    return operand.kind == "name" and label(name) == label(f"{paper.label}_{operand.label}")


def _leaf(node: Node) -> bool:
    return node.kind in ("name", "other")


def _same_number(a: str, b: str) -> bool:
    return math.isclose(float(a), float(b))


def _match_terms(paper: Node, code: Node, names_agree: bool = False,
                 constants: bool = False) -> dict[int, int]:
    """The best pairing of the terms (or factors) of two sums (or products) of as many: each
    pair's own match, plus one operator for each sign (or exponent side) that differs. A sum
    negated as a whole (`b - a` for `a - b`) is the same sum: it is squared, or subtracted
    where the paper adds it."""
    n = len(paper.children)
    if n > MAX_TERMS:
        return {}
    pairs = [[match(p, c, names_agree, constants) for _, c in code.children]
             for _, p in paper.children]
    signs = [[_side(ps) == _side(cs) for cs, _ in code.children] for ps, _ in paper.children]
    if paper.kind == "product":  # the paper's `/ 2` is the code's `* 0.5`
        for i, (ps, p) in enumerate(paper.children):
            for j, (cs, c) in enumerate(code.children):
                if p.kind == c.kind == "number":
                    same = _same_factor(float(p.label) ** ps, float(c.label) ** cs)
                    pairs[i][j] = {0: ANCHOR} if same is not None else \
                        {1: 0} if constants else {}
                    signs[i][j] = same is not False
    best: dict[int, int] = {}
    negations = (1, -1) if paper.kind == "sum" else (1,)
    for order in itertools.permutations(range(n)):
        if any(not pairs[i][j] for i, j in enumerate(order)):
            continue
        for negated in negations:
            flips = sum((signs[i][j]) != (negated == 1) for i, j in enumerate(order))
            if flips > 1:
                continue
            found = _combine([pairs[i][j] for i, j in enumerate(order)], flips)
            for f, anchors in found.items():
                best[f] = max(best.get(f, -1), anchors)
    return best


def _squared_norm(node: Node) -> bool:
    base, exponent = node.children[0][1], node.children[1][1]
    return base.kind == "call" and base.label == "norm" and exponent.kind == "number" and \
        exponent.label == "2"


def _same_factor(paper: float, code: float) -> bool | None:
    """A constant factor of the code is the paper's (True), its inverse (False: one operator
    other than the paper's, `* 2` for `/ 2`), or another (None)."""
    if math.isclose(paper, code):
        return True
    return False if code and math.isclose(paper, 1 / code) else None


def _side(value: int) -> int:
    return 1 if value > 0 else -1


def _combine(parts: list[dict[int, int]], flips: int = 0) -> dict[int, int]:
    """The matches of a whole from those of its parts: operators other than the paper's add
    up (more than one is no longer one drift), and so do anchors."""
    totals = {flips: 0}
    for part in parts:
        merged: dict[int, int] = {}
        for f, a in totals.items():
            for g, b in part.items():
                if f + g <= 1:
                    merged[f + g] = max(merged.get(f + g, -1), a + b)
        totals = merged
        if not totals:
            return {}
    return totals


def same_name(paper: str, code: str) -> bool:
    """The code's name spells the paper's: the same; each of the paper's parts begins the
    code's part in its place (`c_z` and `cmd_z`, `h_a_norm` and `h_a_normalized`); the paper's
    parts begin the code's (`sigma_t` and `sigma_t_batch`, `x1` and `x1_down`); the paper's
    name is the code's last part (`pred` and `x_pred`); or the code's parts are the paper's
    without its one-letter indices (`alpha_bar_t` and `bar_alpha`: the code holds every t)."""
    paper, code = paper.lower(), code.lower()
    if paper.replace("_", "") == code.replace("_", ""):
        return True
    ps, cs = [p for p in paper.split("_") if p], [c for c in code.split("_") if c]
    if not ps or not cs:
        return False
    if len(ps) == len(cs) > 1 and all(c.startswith(p) for p, c in zip(ps, cs, strict=True)):
        return True
    if len(cs) > len(ps) and cs[:len(ps)] == ps and len("".join(ps)) > 1:
        return True
    if len(cs) > 1 and len(ps) == 1 and len(ps[0]) > 1 and ps[0] == cs[-1]:
        return True
    named = {p for p in ps if len(p) > 1}
    return bool(named) and len(named) < len(ps) and set(cs) == named


# ------------------------------------------------------------------------------- the rule


#: A sum over an index written before its summand (`Σ_{t}`, `sum_{i=1}^{N}`): the code
#: computes the summand.
_SUM_OVER = re.compile(r"^(?:Σ|sum|E)_(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|\w)(?:\^\{?\w+\}?)?\s*")


def claim_formulas(text: str, readings: bool = False) -> list[tuple[str, Node]]:
    """The sums and products (of two leaves or more) of the claim's formulas that Python's
    parser reads, outermost first, each once; with `readings`, the other readings of its
    formulas that the paper's notation leaves open instead (`_divided_by_the_product`)."""
    return list(_formulas_of(text)[1 if readings else 0])


@functools.lru_cache(maxsize=4096)
def _formulas_of(text: str) -> tuple[tuple[tuple[str, Node], ...], tuple[tuple[str, Node], ...]]:
    """The claim's formulas and their other readings, parsed once (a claim is checked again
    after every repair, and the formulas' parse tries many cuts of each piece)."""
    found: dict[Node, str] = {}
    others: dict[Node, str] = {}
    text = normalise_formula(paper_notation(text))
    defined = glossary(text)
    pieces = [_SUM_OVER.sub("", p) for p in right_hand_sides(text)] + groups(text) + \
        index_expressions(text)
    for piece in dict.fromkeys(map(implicit_products, pieces)):
        if (parsed := longest_formula(piece)) is None:
            continue
        compounds = _compounds(with_words(tree(parsed[1]), defined))
        for node in compounds:
            found.setdefault(node, parsed[0])
        if (other := _divided_by_the_product(parsed[1])) is not None:
            # the outermost compound that the other reading changes
            for node in [n for n in _compounds(with_words(tree(other), defined))
                         if n not in compounds][:1]:
                others.setdefault(node, parsed[0])
    return tuple((piece, node) for node, piece in found.items()), \
        tuple((piece, node) for node, piece in others.items())


class _WholeDenominator(ast.NodeTransformer):
    """Rewrites each `a / b * c` as `a / (b * c)`."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult) and isinstance(node.left, ast.BinOp) and \
                isinstance(node.left.op, ast.Div):
            return ast.BinOp(node.left.left, ast.Div(),
                             ast.BinOp(node.left.right, ast.Mult(), node.right))
        return node


def _divided_by_the_product(formula: ast.expr) -> ast.expr | None:
    """The other reading of a slash that a product follows: papers write `1/sqrt(d) *
    sqrt(2n)` inline for 1 / (sqrt(d) sqrt(2n)) as often as for sqrt(2n) / sqrt(d), so code
    of either reading is the formula (None when the formula has no such slash)."""
    if not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and
               isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Div)
               for n in ast.walk(formula)):
        return None
    return _WholeDenominator().visit(copy.deepcopy(formula))


def index_expressions(text: str) -> list[str]:
    """The indices a (normalised) claim computes (`T - kN/2 - n` of `alpha_{T - kN/2 - n}`,
    `k+1` of `tau_{k+1,0}`): the code computes them as indices, letters side by side
    multiplying (`kN` is `k * N`)."""
    out = []
    for m in _INDEX.finditer(text):
        for part in m.group(1).split(","):
            if re.search(r"[-+*/]", part):
                out.append(_ADJACENT_LETTERS.sub(r"\1 * \2", part.strip()))
    return out


#: A subscript in braces (simple ones, `x_{1}`, are `x_1` once normalised).
_INDEX = re.compile(r"_\{([^{}]+)\}")
_ADJACENT_LETTERS = re.compile(r"(?<![\w.])([A-Za-z])([A-Za-z])(?![\w.])")


#: A symbol the paper defines in words: one letter, a name with an index (`Q_i`, `f_theta`)
#: or a Greek letter spelt out, possibly primed; several may share one definition.
_DEFINED = r"(?:[A-Za-z]'?|[A-Za-z]\w*_\w+'?|(?:" + "|".join(sorted(set(GREEK.values()))) + r"))"
_DEFINITION = re.compile(
    rf"(?<![\w.])({_DEFINED}(?:\s*,\s*{_DEFINED})*)\s*(?::|=|\bis\b|\bare\b|\bdenotes\b|"
    r"\brepresents\b)\s*(?:the\s+|a\s+|an\s+)?([A-Za-z][A-Za-z-]*(?:\s+[A-Za-z][A-Za-z-]*)*)")
#: Words that end the words a symbol is defined with ("the distribution of the output").
_DEFINITION_END = frozenset({"that", "which", "with", "where", "when", "for", "of", "to", "in",
                             "on", "and", "or", "from", "by", "over", "at", "as", "is", "are",
                             "if", "the", "a", "an"})
#: Words that say what a symbol is like, not what it is ("X_1 is independent", "sigma is
#: small", "lambda = inf"): no name of the code is written in them.
_PREDICATES = frozenset(t for word in (
    "small", "large", "independent", "equivalent", "found", "provided", "fed", "given",
    "approximately", "infinity", "inf", "positive", "negative", "fixed", "used", "computed",
    "defined", "set", "zero", "one", "constant", "sufficiently", "updated", "learned",
    "trainable", "optional", "same", "different", "random", "shared")
    for t in term_set(word))
_GREEK_NAMES = frozenset(GREEK.values())


def glossary(text: str) -> dict[str, frozenset[str]]:
    """The symbols a (normalised) claim defines in words, with those words' terms: `Q_i, Q_j
    : Bradley-Terry coefficient ratings`, `h is a learned feature encoder`, `P_k =
    precision`. A word followed by a bracket is an operation, not a definition (`x_t =
    sqrt(...)`)."""
    out: dict[str, frozenset[str]] = {}
    for found in _DEFINITION.finditer(text):
        if text[found.end():found.end() + 1] == "(":
            continue
        words = []
        for word in found.group(2).split():
            if word.lower() in _DEFINITION_END | _GREEK_NAMES or len(words) == 4:
                break
            words.append(word)
        terms = frozenset(t for word in words for t in term_set(word))
        terms -= GENERIC | OPERATIONS | _PREDICATES
        if terms:
            for symbol in re.split(r"\s*,\s*", found.group(1)):
                out.setdefault(label(symbol.rstrip("'")), terms)
    return out


def with_words(node: Node, defined: dict[str, frozenset[str]]) -> Node:
    """`node` with each name the paper defines in words carrying those words."""
    if node.kind == "name" and node.label in defined:
        return replace(node, words=defined[node.label])
    if not node.children:
        return node
    return replace(node, children=tuple((side, with_words(child, defined))
                                        for side, child in node.children))


#: A symbol of a formula, as a paper writes it beside another to multiply them: a letter, a
#: name with an index (`w_g`, `g_xy`), a Greek letter spelt out, a bracketed group or an
#: operation of one (`norm(v)`); with a power after it (`g_xy**2`).
_SYMBOL = re.compile(r"(?:[A-Za-z](?:_\w+)?|[A-Za-z]\w*_\w+|"
                     f"(?:{'|'.join(sorted(set(GREEK.values())))})"
                     f"|(?:{'|'.join(sorted(OPERATIONS))})?"
                     r"\(.*\))(?:\*\*\S+)?")


_BRACKET_PRODUCT = re.compile(r"((?<![\w.])\d+(?:\.\d+)?|\))\(")  # no space: `2 (approx)` is prose
#: A number right before an operation of what follows multiplies it (`1/2||v||^2`, `2sqrt(x)`).
_NUMBER_OPERATION = re.compile(r"((?<![\w.])\d+(?:\.\d+)?)(?=(?:norm|sqrt|exp|log)\()")


def implicit_products(piece: str) -> str:
    """`w_g * g_xy**2` for the paper's `w_g g_xy**2`: symbols side by side are a product;
    words are not symbols, so prose after the formula stays out of it. A bracket after a
    number or a closing bracket multiplies too (`sqrt(3)(1-s_k)`, `2(1-t+h)`), as does a number
    before an operation (`1/2norm(v)**2`, the paper's `1/2||v||^2`)."""
    piece = _BRACKET_PRODUCT.sub(r"\1 * (", piece)
    piece = _NUMBER_OPERATION.sub(r"\1 * ", piece)
    words = piece.split(" ")
    out = [words[0]] if words else []
    for word in words[1:]:
        joined = word and not out[-1].endswith((",", ";")) and _SYMBOL.fullmatch(out[-1]) \
            and _SYMBOL.fullmatch(word.rstrip(",.;"))  # `f(a, b)`: a comma parts them
        out.append(f"* {word}" if joined else word)
    return " ".join(out)


def longest_formula(piece: str) -> tuple[str, ast.expr] | None:
    """The longest start of `piece`, cut between words, that Python's parser reads: the prose
    after a formula (`h + a * b after every block`) is not part of it."""
    words = piece.split(" ")
    # every cut, down to the shortest: a formula that opens a long piece of prose (`Y_k_0 /
    # sqrt(1 - tau_k_0) + [s_{T - kN/2}(Y_k_0) ...` of fifty words) is its first few words
    for end in range(len(words), 0, -1):
        text = " ".join(words[:end]).strip()
        try:
            return text, parse_python(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
    return None


def _named(node: Node) -> bool:
    return node.kind in ("name", "other", "call") or any(_named(c) for _, c in node.children)


def groups(text: str) -> list[str]:
    """The bracketed groups of a text that hold an operation: `(1 - alpha_t)` in prose is a
    formula too."""
    out, opened = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            inner = text[opened.pop() + 1:i]
            if re.search(r"[-+*/]", inner):
                out.append(inner.strip())
    return out


def _compounds(node: Node) -> list[Node]:
    """The sums and products under `node` that combine two leaves or more, one of them a
    name (arithmetic between constants says nothing)."""
    out = [node] if node.kind in ("sum", "product") and node.leaves() > 1 and \
        _named(node) else []
    for _, child in node.children:
        out += _compounds(child)
    return out


def code_expressions(index: RepoIndex, file: str) -> list[tuple[int, str, Node]]:
    """(line, text, node) of every sum, product and negation of a Python file outside tests
    (cached per file)."""
    cache = index.cache.setdefault("alignment_structures", {})
    if file in cache:
        return cache[file]
    found = []
    for node in ast.walk(module) if (module := python_module(index, file, tests=False)) else ():
        if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Pow, ast.Mod)) or \
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            found.append((node.lineno, expression_text(node), tree(node)))
    cache[file] = found
    return found


def expressions_in(index: RepoIndex, d: Definition, inlined: bool = False
                   ) -> list[tuple[str, str, Node]]:
    """(file:line, text, node) of the sums, products and negations of one function; with
    `inlined`, also as read with the names it holds once (`inlined_expressions`)."""
    found = code_expressions(index, d.file) + (
        inlined_expressions(index, d.file) if inlined else [])
    return [(f"{d.file}:{line}", text, node) for line, text, node in found
            if d.start <= line <= d.end]


def inlined_expressions(index: RepoIndex, file: str) -> list[tuple[int, str, Node]]:
    """(line, text, node) of every sum, product and negation of a Python file's functions that
    reads a local name the function assigns once, to arithmetic, with that name read as what
    it holds: after `diff = q_i - q_j`, `1 / (1 + exp(-diff / s))` is the paper's whole
    formula, which the code wrote in two statements (cached per file)."""
    cache = index.cache.setdefault("alignment_inlined_structures", {})
    if file in cache:
        return cache[file]
    found = []
    attributes: dict[int, dict[str, ast.expr]] = {}  # per class, read once for its methods
    for function, owner in functions_of(python_module(index, file, tests=False)):
        held = set_once(function, holding=_computed)
        if owner is not None:  # `self.scale = 1 / math.sqrt(d)` in the constructor
            if id(owner) not in attributes:
                attributes[id(owner)] = set_once(owner, attributes=True, holding=_computed)
            held.update(attributes[id(owner)])
        for node in _own_nodes(function) if held else ():
            if _arithmetic(node) and _reads_any(node, held):
                inlined = _inline(node, held)
                found.append((node.lineno, expression_text(inlined), tree(inlined)))
    cache[file] = found
    return found


def _arithmetic(node: ast.AST) -> bool:
    """A sum, product or negation, as `code_expressions` collects them."""
    return isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Pow, ast.Mod)) or \
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function, not of the functions nested in it (they have names of their
    own)."""
    out, stack = [], list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out.append(node)
            stack.extend(ast.iter_child_nodes(node))
    return out


def _computed(value: ast.expr) -> bool:
    """Arithmetic or an operation (`q_i - q_j`, `torch.exp(x)`): what a constant or another
    name holds (`eps = 1e-8`) is better read by the name the code gives it."""
    return tree(value).kind in ("sum", "product", "power", "call")


def _reads_any(node: ast.AST, held: dict[str, ast.expr]) -> bool:
    return any(name_key(n, ast.Load, True) in held for n in ast.walk(node))


def _inline(node: ast.AST, held: dict[str, ast.expr], depth: int = 1) -> ast.AST:
    """`node` with each name of `held` it reads (to `depth` levels of names) read as the
    expression held. New nodes are built where something changed, and the function's own
    are never altered (other rules read them, with what they hang from)."""
    if (key := name_key(node, ast.Load, True)) in held and depth > 0:
        return _inline(held[key], held, depth - 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _inline(node.operand, held, depth)
        if isinstance(operand, ast.BinOp) and isinstance(operand.op, (ast.Mult, ast.Div)):
            # `-gap` after `gap = d / s` is `-d / s`, as the paper writes it: the sign goes
            # to the first factor, so that the product is one, not a negated term holding it
            return ast.BinOp(ast.UnaryOp(ast.USub(), operand.left), operand.op, operand.right)
    fields = {name: _inline_field(getattr(node, name, None), held, depth)
              for name in node._fields}
    if all(value is getattr(node, name, None) for name, value in fields.items()):
        return node
    return ast.copy_location(type(node)(**fields), node)


def _inline_field(value: object, held: dict[str, ast.expr], depth: int) -> object:
    if isinstance(value, ast.AST):
        return _inline(value, held, depth)
    if isinstance(value, list):
        items = [_inline_field(item, held, depth) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def structure_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                       ) -> list[tuple[str, str]]:
    """(reason, where) for a formula of the claim that the carrying code holds, anchored by
    enough of the paper's names and constants, only with one operator other than the
    paper's; or that no code of the repository computes as the paper writes it while some
    code, wherever it is, computes it one operator apart (code the check's evidence does
    not reach is still the repository's only computation of the formula)."""
    if claim.dimension not in (Dimension.D1, Dimension.D2):
        return []  # a value of a formula (D1) drifts as its operators (D2) do
    formulas = claim_formulas(claim.text)
    if not formulas:
        return []
    wanted = [(piece, formula, NAME_ANCHOR if coefficient_of_a_name(formula) else
               _needed(formula)) for piece, formula in formulas]
    # code of another reading of the paper's notation computes the paper's formula, but
    # code one operator from that reading is no drift of what the paper wrote
    readings = [(piece, node, _needed(node))
                for piece, node in claim_formulas(claim.text, readings=True)]
    stated = mentioned_numbers(claim.text) | mentioned_numbers(paper_notation(claim.text))  # `²`
    for d in carriers(index, check):
        code = expressions_in(index, d, inlined=True)
        drifted = one_operator_apart(wanted, code, readings=readings) or one_operator_apart(
            wanted, [c for c in code if _numbers(c[1]) - stated], constants=True,
            readings=readings)
        if drifted:
            piece, where, text = drifted
            return [(f"the claim computes {piece}; the code computes {text} at {where}, "
                     f"one operator or constant apart", where)]
    drifted = one_operator_apart(wanted, repository_expressions(index), readings=readings)
    if drifted:
        piece, where, text = drifted
        return [(f"the claim computes {piece}; the code computes {text} at {where}, one "
                 "operator apart, and no code computes it as the paper writes it", where)]
    return []


def repository_expressions(index: RepoIndex) -> list[tuple[str, str, Node]]:
    """(file:line, text, node) of every sum, product and negation of the repository's Python
    files outside tests, also as read with the names their functions hold once (cached)."""
    found = index.cache.get("alignment_repository_expressions")
    if found is None:
        found = index.cache["alignment_repository_expressions"] = [
            (f"{file}:{line}", text, node) for file, entry in index.files.items()
            if entry.lang == "python" for line, text, node in
            code_expressions(index, file) + inlined_expressions(index, file)]
    return found


def _needed(formula: Node) -> int:
    """The anchors a code expression needs to be the formula: at least 3, and at least three
    quarters of its leaves."""
    return max(3, math.ceil(0.75 * formula.leaves()))


def coefficient_of_a_name(formula: Node) -> bool:
    """The formula is a constant times a name of more than one letter (`2*n_layers`,
    `4*d_model`): the name says which quantity it scales, so the code's product of that very
    name with another constant (`20 * cfg.n_layers`) is the paper's formula drifted."""
    if formula.kind != "product" or len(formula.children) != 2 or \
            any(exponent <= 0 for exponent, _ in formula.children):
        return False
    (_, first), (_, second) = formula.children
    number, name = (first, second) if first.kind == "number" else (second, first)
    return number.kind == "number" and name.kind == "name" and \
        len(name.label.replace("_", "")) > 1


def _numbers(text: str) -> frozenset[str]:
    """The constants a code expression writes, normalised as a claim's are."""
    return frozenset(normalise(n.value) for n in extract_numbers(text))


#: Calls that take sizes or counts: a true division there gives a float, which they refuse
#: (`nn.Linear(d, n_heads / d_head)`, `torch.zeros(n / 2)`, `range(n / k)`).
SIZED = frozenset({"Linear", "Embedding", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                   "ConvTranspose2d", "LSTM", "GRU", "RNN", "zeros", "ones", "empty", "randn",
                   "rand", "randint", "range"})
#: A tensor's own methods whose every argument is a size (`x.view(b, t, heads / d_head)`);
#: called on a module (`np.reshape(x / 255, shape)`) the first argument is data instead.
SIZED_METHODS = frozenset({"view", "reshape", "repeat", "expand", "new_zeros", "new_ones",
                           "new_empty"})
_MODULES = frozenset({"np", "numpy", "torch", "jnp", "jax", "tf", "F", "nn", "math"})
#: The methods that build what the others of a class use (its layers and their sizes).
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "setup", "build"})


def senseless_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                       ) -> list[tuple[str, str]]:
    """(reason, where) for arithmetic of the code around a claim's formula or values (its
    carrying functions, the constructors of their classes, and then the functions they
    call) which cannot be what any paper means: a size computed by true division (in a
    call that takes sizes, or bound to a name that such a call then takes in the same
    function, or to an attribute that the repository declares `int` or passes to such a
    call anywhere; or taken by such a call as an attribute that the repository sets only
    by true division, in whatever file), which fails at run time; an index or a slice
    bound by true division (or by a name bound only to one), which fails too; an
    expression minus (or over) itself, always 0 (or 1); a computed number times or over
    one; a Python list or tuple divided or subtracted; a divergence of two distributions
    computed as the sum of their log-probabilities; two layers, one fed what the other
    gives, whose sizes differ."""
    if claim.dimension not in (Dimension.D1, Dimension.D2):
        return []
    for d in examined_functions(index, check):
        found = senseless_in(index, d)
        if found is not None:
            return [found]
    return []


def senseless_in(index: RepoIndex, d: Definition) -> tuple[str, str] | None:
    """(reason, where) for the first arithmetic of `d` that no paper can mean (see
    `senseless_findings`); cached per function, as it reads nothing of the claim."""
    cache = index.cache.setdefault("alignment_senseless", {})
    key = (d.file, d.qualname, d.start)
    if key not in cache:
        cache[key] = _first_senseless(index, d)
    return cache[key]


def _first_senseless(index: RepoIndex, d: Definition) -> tuple[str, str] | None:
    module = python_module(index, d.file, tests=False)
    nodes = [node for node in (ast.walk(module) if module is not None else ())
             if d.start <= getattr(node, "lineno", 0) <= d.end]
    # names the function binds to a true division (`hidden = dim_head / heads`)
    divided = {ast.unparse(target): node for node in nodes if isinstance(node, ast.Assign)
               and _true_division(node.value) for target in node.targets}
    # ... and only to one: a name bound otherwise too may hold an integer when it indexes
    only_divided = set(divided) - {ast.unparse(target) for node in nodes
                                   if isinstance(node, (ast.Assign, ast.AugAssign))
                                   and not (isinstance(node, ast.Assign) and
                                            _true_division(node.value))
                                   for target in _targets(node)}
    # `1.0 * hits / total` casts to float before dividing: the product is no identity
    cast = {id(node.left) for node in nodes if isinstance(node, ast.BinOp) and
            isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod))}
    for node in nodes:
        where = f"{d.file}:{node.lineno}"
        if _takes_sizes(node):
            if any(_true_division(arg) or ast.unparse(arg) in divided
                   for arg in _size_arguments(node)):
                return (f"the code computes a size by true division at {where} "
                        f"({expression_text(node)}): the call refuses a float", where)
            if (set_apart := _set_by_division(index, node)) is not None:
                at, text = set_apart
                return (f"the code takes a size set by true division at {at} ({text}) "
                        f"in {expression_text(node)} at {where}: the call refuses a "
                        "float", at)
        if isinstance(node, ast.Subscript) and any(
                _true_division(i) or ast.unparse(i) in only_divided
                for i in _indices(node.slice)):
            return (f"the code indexes {expression_text(node)} at {where} by a true "
                    "division, a float: an index or a slice bound must be an integer",
                    where)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div)) and \
                not isinstance(node.left, ast.Constant) and \
                ast.dump(node.left) == ast.dump(node.right):
            return (f"the code computes {expression_text(node)} at {where}, which is "
                    f"always {0 if isinstance(node.op, ast.Sub) else 1}", where)
        if (unchained := unchained_layers(node)) is not None:
            before, gives, after, takes = unchained
            return (f"the code stacks {expression_text(before)}, which gives {gives}, "
                    f"before {expression_text(after)}, which takes {takes}, at {where}: "
                    "the layers do not chain", where)
        if _by_one(node, cast):
            return (f"the code computes {expression_text(node)} at {where}, a number "
                    "times (or over) one, which changes nothing: an operator is lost",
                    where)
        if _sequence_arithmetic(node):
            return (f"the code computes {expression_text(node)} at {where}: a list or "
                    "tuple cannot be divided or subtracted", where)
        if _summed_log_ratio(node):
            return (f"the code adds log-probabilities for a divergence or log-ratio at "
                    f"{where} ({expression_text(node)}): it is their difference", where)
    if (unchained := _unchained_in(index, module, d)) is not None:
        before, gives, after, takes = unchained
        where = f"{d.file}:{after.lineno}"
        return (f"the code applies {expression_text(after)}, which takes {takes}, to what "
                f"{expression_text(before)} gives ({gives}) in {d.qualname}: the layers "
                "do not chain", where)
    for target, node in divided.items():
        attribute = target.rsplit(".", 1)[-1]
        if "." in target and attribute in _size_attributes(index):
            where = f"{d.file}:{node.lineno}"
            return (f"the code binds {target} to a true division at {where}, a float, "
                    f"where the repository takes {attribute} as a size", where)
    return None


#: Calls that give a float whatever they take: one times their result is that result.
_FLOAT_CALLS = frozenset({"sqrt", "rsqrt", "exp", "log", "log2", "log10", "log1p", "pow", "sin",
                          "cos", "tan", "tanh", "sigmoid", "softplus", "erf"})


def _by_one(node: ast.AST, cast: set[int]) -> bool:
    """`1.0 * math.sqrt(d_model)`, `2 ** k / 1`: a number the code computes (a float call,
    or arithmetic holding one or a true division) times or over one, not as the float cast
    of a division (`1.0 * hits / total`, `cast`). No formula multiplies by one; code that
    does so has lost an operator (`1.0 / math.sqrt(d_model)`)."""
    if not isinstance(node, ast.BinOp) or id(node) in cast:
        return False
    pairs = [(node.left, node.right), (node.right, node.left)] if isinstance(
        node.op, ast.Mult) else [(node.right, node.left)] if isinstance(node.op, ast.Div) else []
    return any(isinstance(one, ast.Constant) and type(one.value) in (int, float) and
               one.value == 1 and _computes_a_float(other) for one, other in pairs)


def _computes_a_float(node: ast.AST) -> bool:
    """A float call, or arithmetic that holds one or a true division."""
    if isinstance(node, ast.Call):
        return _callee(node) in _FLOAT_CALLS
    return isinstance(node, ast.BinOp) and (isinstance(node.op, ast.Div) or any(
        _computes_a_float(side) for side in (node.left, node.right)))


def _sequence(node: ast.AST) -> bool:
    """One of Python's own sequences: a literal list or tuple, or one built by `list(...)` or
    `tuple(...)` (not an array or a tensor, which do arithmetic)."""
    return isinstance(node, (ast.List, ast.ListComp, ast.Tuple)) or isinstance(
        node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple")


def _sequence_arithmetic(node: ast.AST) -> bool:
    """`[0.0] / n_joints`, `list(a) - list(b)`: a Python list or tuple divided, subtracted,
    taken modulo or raised to a power, which raises at run time (a list is repeated with `*`
    and joined with `+`; a tuple after `%` formats a string)."""
    return isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.Div, ast.FloorDiv, ast.Sub, ast.Mod, ast.Pow)) and (
        _sequence(node.left) or isinstance(node.op, ast.Sub) and _sequence(node.right))


#: Names of a divergence or log-ratio of two distributions (`kl_penalty`, `log_ratio`).
_LOG_RATIO = re.compile(r"(?:^|_)(?:kl|log_?ratio|log_?rho)(?:_|$)")


def _summed_log_ratio(node: ast.AST) -> bool:
    """`kl = logp_actor + logp_ref`: a divergence (or log-ratio) of two distributions
    estimated from their log-probabilities is their difference, never their sum."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)):
        return False
    target = node.targets[0]
    name = target.attr if isinstance(target, ast.Attribute) else \
        target.id if isinstance(target, ast.Name) else ""
    terms = flatten_sum(node.value)
    return bool(_LOG_RATIO.search(name.lower())) and len(terms) == 2 and \
        all(sign > 0 and "log" in ast.unparse(term).lower() for term, sign in terms)


def _unchained_in(index: RepoIndex, module: ast.Module | None, d: Definition
                  ) -> tuple[ast.Call, int, ast.Call, int] | None:
    """Two layers of a method's class that the method applies one to what the other gave,
    with sizes that do not chain (`alignment_layers.unchained_applications`; cached)."""
    if module is None or d.kind != "method":
        return None
    cache = index.cache.setdefault("alignment_unchained", {})
    if (d.file, d.qualname) not in cache:
        cache[d.file, d.qualname] = _unchained_method(module, d)
    return cache[d.file, d.qualname]


def _unchained_method(module: ast.Module, d: Definition
                      ) -> tuple[ast.Call, int, ast.Call, int] | None:
    """`unchained_applications` of the method `d` in its class."""
    for cls in ast.walk(module):
        if isinstance(cls, ast.ClassDef) and cls.lineno <= d.start <= (cls.end_lineno or 0):
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        method.name == d.name and method.lineno <= d.end and \
                        d.start <= (method.end_lineno or 0):
                    return unchained_applications(cls, method)
    return None


def examined_functions(index: RepoIndex, check: ClaimCheck) -> list[Definition]:
    """The code `senseless_findings` reads: the carrying functions with the constructors of
    their classes, then the functions they call. Arithmetic no paper can mean is no
    implementation of anything, so code that runs the claim's code through such arithmetic
    does not implement the claim as written, whichever of its functions the check's evidence
    ranks first (a rotary embedding's `1.0 * base ** e` that the attention a claim describes
    calls)."""
    carrying = carriers(index, check)
    examined = _with_constructors(index, carrying)
    known = {(d.file, d.qualname) for d in examined}
    return examined + [d for d in callees(index, carrying) if (d.file, d.qualname) not in known]


def _with_constructors(index: RepoIndex, functions: list[Definition]) -> list[Definition]:
    """The functions and the constructors of the classes their methods belong to."""
    classes = {(d.file, d.qualname.rsplit(".", 1)[0]) for d in functions if d.kind == "method"}
    known = {(d.file, d.qualname) for d in functions}
    return functions + [d for d in index.functions() if d.kind == "method" and
                        d.name in _CONSTRUCTORS and (d.file, d.qualname) not in known and
                        (d.file, d.qualname.rsplit(".", 1)[0]) in classes]


def _takes_sizes(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return _callee(node) in SIZED or isinstance(func, ast.Attribute) and \
        func.attr in SIZED_METHODS and not (isinstance(func.value, ast.Name) and
                                            func.value.id in _MODULES)


def _size_arguments(node: ast.Call) -> list[ast.AST]:
    return [*node.args, *(k.value for k in node.keywords)]


def _size_attributes(index: RepoIndex) -> frozenset[str]:
    """Attributes the repository takes as sizes: passed to a call that takes sizes
    (`nn.Linear(d, self.d_mlp)`), or declared `int` in a class (`d_mlp: int = field(...)`)
    (cached)."""
    found = index.cache.get("alignment_size_attributes")
    if found is None:
        names = set()
        for file in index.files:
            module = python_module(index, file, tests=False)
            for node in ast.walk(module) if module is not None else ():
                if _takes_sizes(node):
                    names |= {arg.attr for arg in _size_arguments(node)
                              if isinstance(arg, ast.Attribute)}
                elif isinstance(node, ast.ClassDef):
                    names |= {item.target.id for item in node.body
                              if isinstance(item, ast.AnnAssign) and
                              isinstance(item.target, ast.Name) and
                              isinstance(item.annotation, ast.Name) and
                              item.annotation.id == "int"}
        found = index.cache["alignment_size_attributes"] = frozenset(names)
    return found


def _set_by_division(index: RepoIndex, call: ast.Call) -> tuple[str, str] | None:
    """(where, assignment) of a size the call takes as an attribute (`config.d_mlp`) that the
    repository sets only where it sets it by true division (`self.d_mlp = 4 / d_model`,
    in a config's `__post_init__` far from the claim's code)."""
    divided = _divided_attributes(index)
    for arg in _size_arguments(call):
        if isinstance(arg, ast.Attribute) and arg.attr in divided:
            return divided[arg.attr]
    return None


def _divided_attributes(index: RepoIndex) -> dict[str, tuple[str, str]]:
    """Attributes every assignment of which, outside tests, is a true division, with the
    first such assignment's place and text (cached)."""
    found = index.cache.get("alignment_divided_attributes")
    if found is None:
        divided: dict[str, tuple[str, str]] = {}
        otherwise: set[str] = set()
        for file in index.files:
            module = python_module(index, file, tests=False)
            for node in ast.walk(module) if module is not None else ():
                if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                    continue
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if not isinstance(target, ast.Attribute):
                        continue
                    if _true_division(node.value):
                        divided.setdefault(target.attr, (f"{file}:{node.lineno}",
                                                         expression_text(node)))
                    else:
                        otherwise.add(target.attr)
        found = index.cache["alignment_divided_attributes"] = {
            name: place for name, place in divided.items() if name not in otherwise}
    return found


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""


def _indices(index: ast.AST) -> list[ast.AST]:
    """What a subscript indexes by: its index, the bounds of its slices, each element of a
    tuple of them (`x[:, : n / 2]`)."""
    if isinstance(index, ast.Tuple):
        return [i for element in index.elts for i in _indices(element)]
    if isinstance(index, ast.Slice):
        return [b for b in (index.lower, index.upper, index.step) if b is not None]
    return [index]


def _targets(node: ast.Assign | ast.AugAssign) -> list[ast.AST]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _true_division(node: ast.AST) -> bool:
    """Arithmetic with a true division in it, not inside a call (`int(n / 2)` is a size)."""
    return isinstance(node, ast.BinOp) and (isinstance(node.op, ast.Div) or _true_division(
        node.left) or _true_division(node.right))


def comment_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                     ) -> list[tuple[str, str]]:
    """(reason, where) for a formula written in a comment or docstring of a function that
    carries the claim, which that function computes only with one operator other than the
    comment's."""
    if claim.dimension != Dimension.D2:
        return []
    for d in carriers(index, check):
        comments = commented_formulas(index, d.file, d.start, d.end)
        if not comments:
            continue
        code = expressions_in(index, d)
        for line, formulas in comments.items():
            # A comment is written in the code's names: a name of it pairs with its own.
            drifted = one_operator_apart([(piece, node, max(3, math.ceil(
                anchor_weight(node) / 2))) for piece, node in formulas], code, names_agree=True)
            if drifted:
                piece, where, text = drifted
                return [(f"the code computes {text} at {where}, one operator apart from "
                         f"the formula its comment gives ({piece}, line {line})", where)]
    return []


def anchor_weight(node: Node) -> int:
    """The anchors of `node` matched by itself: what each of its leaves and operations
    weighs when the code spells it alike."""
    if node.kind == "name":
        return NAME_ANCHOR if len(node.label.replace("_", "")) > 1 else ANCHOR
    own = ANCHOR if node.kind in ("number", "call") else 0
    return own + sum(anchor_weight(child) for _, child in node.children)


def one_operator_apart(formulas: list[tuple[str, Node, int]], code: list[tuple[str, str, Node]],
                       names_agree: bool = False, constants: bool = False,
                       readings: Sequence[tuple[str, Node, int]] = ()
                       ) -> tuple[str, str, str] | None:
    """(piece, where, text) for the first formula (piece, node, anchors needed) that no code
    expression is with its own operators, but one is with one operator other than its own:
    an expression that is another of the formulas exactly (`(1 - s_k) / 2` beside `(1 + s_k)
    / 2`), or one of the other `readings` of the paper's notation, is not counted as this
    one's drift."""
    found = [[match(node, c, names_agree, constants) for _, _, c in code]
             for _, node, _ in [*formulas, *readings]]
    exact = [[m.get(0, -1) >= needed for m in row]
             for row, (_, _, needed) in zip(found, [*formulas, *readings], strict=True)]
    read_otherwise = {piece for (piece, _, _), row in zip(readings, exact[len(formulas):],
                                                           strict=True) if any(row)}
    for i, (piece, _, needed) in enumerate(formulas):
        if any(exact[i]) or piece in read_otherwise:
            continue
        for j, (where, text, _) in enumerate(code):
            if not any(row[j] for row in exact) and found[i][j].get(1, -1) >= needed:
                return piece, where, text
    return None


#: The comment of a line of code: a `#` outside any string (the quotes before it pair up).
_TRAILING = re.compile(r"""^((?:[^#'"]|'[^']*'|"[^"]*")*)#(.*)$""")


def commented_formulas(index: RepoIndex, file: str, start: int, end: int
                       ) -> dict[int, list[tuple[str, Node]]]:
    """The formulas that the comments and docstrings of lines `start`..`end` write, by line
    (each line read alone)."""
    entry = index.files.get(file)
    out: dict[int, list[tuple[str, Node]]] = {}
    for number in range(start, min(end, len(entry.lines) if entry else 0) + 1):
        line, role = entry.lines[number - 1], entry.roles[number - 1]
        if role == "code":
            found = _TRAILING.match(line)
            text = found.group(2) if found else ""
        else:
            text = line.strip().lstrip("#") if role in ("comment", "docstring") else ""
        if re.search(r"[-+*/]", text) and (formulas := claim_formulas(text)):
            out[number] = formulas
    return out
