"""The alignment check's formula rule: the claim's sums and products, term by term.

A formula claim such as `mu_t = t*x_1 + k*(1-t)*x_0` is a sum of signed terms (`+ t*x_1`,
`+ k*(1-t)*x_0`), each a product of factors with exponents (`a / b` is `a * b^-1`). Where the
code that carries the claim (its best function and the functions around its evidence) holds an
expression with exactly the same terms, it should hold them with the same signs and exponents;
`t*x1 - k*(1-t)*x0` where the paper adds, with no expression of the same terms and signs in
that code, is a sign or operator error that term-based evidence cannot see.

Scale factors the same way: an operation or power the paper multiplies by (`* sqrt(d_k)`,
`x / ||x||_2`) that the carrying code only divides by, or the other way round, fails too.

Formulas are read with Python's own expression parser after light normalisation (`^` is a
power, `x_{1}` is `x_1`, Greek letters are spelled out); a claim written in notation it cannot
read, or whose terms the code names differently, simply finds nothing to compare. Names are
matched without case, underscores, braces and backslashes (`x_1` is `x1`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sabench.scaffolds.alignment_rules import carriers
from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import (
    Definition,
    RepoIndex,
    parse_python,
    parse_recovering,
    parse_tolerant,
)
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.types import EvidenceKind

GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
         "η": "eta", "θ": "theta", "λ": "lambda_", "μ": "mu", "σ": "sigma", "τ": "tau",
         "φ": "phi", "ω": "omega", "ρ": "rho", "κ": "kappa", "π": "pi", "ϵ": "epsilon"}
SYMBOLS = {"·": "*", "×": "*", "−": "-", "∗": "*", "⋅": "*", "⊙": "*"}
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}

#: A term: its factors (canonical strings) with exponents; the sign is kept beside it.
Term = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Shape:
    """A sum of at least two signed terms, or a product with a division, in canonical form."""

    kind: str  # "sum" or "product"
    parts: frozenset[tuple[Term, int]]  # (term, sign or exponent)
    text: str
    where: str = ""

    def key(self) -> frozenset[Term]:
        """What the shape combines, whatever the signs."""
        return frozenset(term for term, _ in self.parts)

    def flipped(self) -> frozenset[tuple[Term, int]]:
        return frozenset((term, -sign) for term, sign in self.parts)


def normalise_formula(text: str) -> str:
    for symbol, op in SYMBOLS.items():
        text = text.replace(symbol, op)
    for letter, name in GREEK.items():
        text = text.replace(letter, name)
    text = re.sub(r"\|\|([^|]+)\|\|(?:_\{?2\}?)?", r"norm(\1)", text)  # ||x||_2 -> norm(x)
    text = re.sub(r"√\s*([A-Za-z_][\w{}]*|\d+(?:\.\d+)?)", r"sqrt(\1)", text)  # √d_k
    text = text.replace("√", "sqrt")
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)  # \alpha -> alpha
    text = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", text)  # x_{1} -> x_1
    text = re.sub(r"\^\{([^{}]+)\}", r"**(\1)", text)
    text = re.sub(r"\b([A-Za-z])\*(?=[\s,)|])", r"\1star", text)  # `y*`, the optimum: `ystar`
    text = _NUMBER_SYMBOL.sub(r"\1*", text)  # `2η_t` is twice eta_t
    text = _braced_calls(text.replace("^", "**"))
    # `log**2 T` is the square of log T, not log squared times T; `log T` is log of T
    return _BARE_CALL.sub(r"\1(\2)", _POWERED_CALL.sub(r"\1(\3)**\2", text))


#: An operation raised to a power before its operand: `log**2 T`, `log**(5/3) T`.
_POWERED_CALL = re.compile(r"\b(log|ln|exp|sin|cos|tan)\*\*(\d+|\([^()]+\))\s*"
                           r"([A-Za-z_]\w*|\d+)")


#: An operation applied to a symbol without brackets: `log T`, `exp x_t` (a letter, maybe
#: with an index: a word after `log` is prose, `log probabilities`).
_BARE_CALL = re.compile(r"\b(log|ln|exp)\s+([A-Za-z](?:_\w+)?)(?![\w(])")


def _braced_calls(text: str) -> str:
    """`min{a, b}` as `min(a, b)`: braces around an operation's operands, as papers write
    them, are its call's brackets."""
    while (m := re.search(r"\b(min|max|exp|log|sqrt|abs)\{", text)) is not None:
        depth, close = 0, -1
        for i in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                close = i
                break
        if close < 0:
            break
        text = f"{text[:m.end() - 1]}({text[m.end():close]}){text[close + 1:]}"
    return text


#: A number written right before a symbol with an index or a Greek letter multiplies it
#: (`2eta_t`, `4pi`); `1e-4`, `3D` and `2nd` are no products.
_NUMBER_SYMBOL = re.compile(r"((?<![\w.])\d+(?:\.\d+)?)(?=[A-Za-z]_|(?:"
                            + "|".join(sorted(set(GREEK.values()) | {"pi"})) + r")(?![a-z]))")


#: A bracketed group with an operation in it: `(1-alpha_t)` in prose is a formula too.
_GROUP = re.compile(r"\(([^()]*[-+*/][^()]*)\)")


def claim_shapes(text: str) -> list[Shape]:
    """The sums and divisions of the claim's formulas (right-hand sides of `=`, and bracketed
    groups) that Python's parser can read."""
    found: list[Shape] = []
    for piece in formula_pieces(text):
        try:
            tree = parse_python(piece, mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            continue
        found += [s for s in shapes_of(tree.body) if _named(s) and s.parts not in
                  {f.parts for f in found}]
    return found


#: Norms with their order and power (`||x||^2_2`, `||x||_1`) and subscripts of several indices
#: or with arithmetic (`tau_{k,0}`, `X_{t-1}`: names, `X_t_1`), which the formula parser
#: cannot read as the paper writes them.
_NORM = re.compile(r"\|\|([^|]+)\|\|(?:_\{?\w+\}?)?(?:\^\{?(\d)\}?)?(?:_\{?\w+\}?)?")
_INDICES = re.compile(r"_\{(\w+(?:\s*[-+,]\s*\w+)+)\}")
_ONE_INDEX = re.compile(r"_\{(\w+)\}")
#: A divergence between two distributions (`KL(q(y|x) || p(y))`, `D_{KL}(pi_theta || pi_ref)`).
_DIVERGENCE = re.compile(r"\b(?:D_\{?KL\}?|KL)\s*\(")


def divergences_named(text: str) -> str:
    """Each divergence written as the one quantity `KL` it is in a formula: its conditional
    bars and `||` are no norms, and the code holds it as one value (`kl_loss`)."""
    while found := _DIVERGENCE.search(text):
        depth = 0
        for i in range(found.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
        rest = text[i + 1:] if depth == 0 else text[found.end():]  # unclosed: the opener
        text = text[:found.start()] + "KL " + rest
    return text


def paper_notation(text: str) -> str:
    """A claim's notation in names and calls the formula parser reads: `x²`, `h(s')`,
    `v^base`, `||x||^2_2`, `tau_{k,0}`, divergences."""
    text = divergences_named(text.replace("²", "^2").replace("‖", "||"))
    text = re.sub(r"(?<=[\w}])'", "_prime", text)  # `h(s')` reads as a name, not a string
    text = re.sub(r"\^([A-Za-z][A-Za-z_]{2,})", r"_\1", text)  # `v^base` names, not powers
    text = _NORM.sub(lambda m: f"norm({m.group(1)})" + (f"^{m.group(2)}" if m.group(2) else ""),
                     text)
    text = _INDICES.sub(lambda m: "_" + "_".join(re.split(r"\s*[-+,]\s*", m.group(1))), text)
    return _ONE_INDEX.sub(r"_\1", text)  # `w_{omega_xy}` is `w_omega_xy`


def formula_pieces(text: str) -> list[str]:
    """The claim's formulas: right-hand sides of `=`, and bracketed groups, normalised."""
    text = normalise_formula(paper_notation(text))
    pieces = right_hand_sides(text) + [m.group(1) for m in _GROUP.finditer(text)]
    return list(dict.fromkeys(p.strip() for p in pieces))


def right_hand_sides(text: str) -> list[str]:
    """What follows each `=` of a (normalised) claim up to the end of its formula: a comma,
    semicolon, colon, dash or line break outside brackets, an unmatched closing bracket, or a
    word that starts prose (`where`, `for`, `with`, `and`, `if`) or a sentence's end."""
    out = []
    for m in re.finditer(r"(?<![<>=!:*/+-])=(?!=)", text):
        depth, end = 0, len(text)
        for i in range(m.end(), len(text)):
            ch = text[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif depth == 0 and (ch in ",;:\n—–=" or _PROSE.match(text, i)):
                end = i
                break
        piece = text[m.end():end].strip()
        if piece:
            out.append(piece)
    return out


_PROSE = re.compile(r"\s+(?:where|for|with|and|if|in|is|which)\b|\.(?:\s|$)")


def _named(shape: Shape) -> bool:
    """A shape with at least one name in it (arithmetic between constants says nothing)."""
    return any(not _number(f) for term in shape.key() for f, _ in term)


def _number(text: str) -> bool:
    return bool(re.fullmatch(r"-?[\d.]+(?:e[-+]?\d+)?", text))


def shapes_of(node: ast.AST, where: str = "") -> list[Shape]:
    """Every sum (of two or more terms) and every product with a division under `node`."""
    out = []
    for sub in ast.walk(node):
        if not isinstance(sub, ast.BinOp) or type(sub.op) not in _OPS:
            continue
        parent_kind = "sum" if isinstance(sub.op, (ast.Add, ast.Sub)) else "product"
        here = f"{where}:{getattr(sub, 'lineno', 0)}" if where else ""
        if parent_kind == "sum":
            parts = [(product(t), s) for t, s in flatten_sum(sub)]
        else:
            if not _has_division(sub):
                continue
            parts = [(((canonical(f), 1),), e) for f, e in flatten_product(sub)]
        if any(term is None or None in (f for f, _ in term) for term, _ in parts):
            continue
        out.append(Shape(parent_kind, frozenset(parts), expression_text(sub), here))
    return _outermost(out)


def _outermost(shapes: list[Shape]) -> list[Shape]:
    """A chain `a + b - c` is one shape, not also its inner `a + b` (ast.walk visits the
    outer node first, and an inner chain's parts are a subset of the outer's)."""
    kept: list[Shape] = []
    for shape in shapes:
        if not any(k.kind == shape.kind and k.where == shape.where and shape.parts < k.parts
                   for k in kept):
            kept.append(shape)
    return kept


def _has_division(node: ast.BinOp) -> bool:
    return any(e < 0 for _, e in flatten_product(node))


def flatten_sum(node: ast.AST, sign: int = 1) -> list[tuple[ast.AST, int]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = -sign if isinstance(node.op, ast.Sub) else sign
        return flatten_sum(node.left, sign) + flatten_sum(node.right, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return flatten_sum(node.operand, -sign)
    return [(node, sign)]


def flatten_product(node: ast.AST, exponent: int = 1) -> list[tuple[ast.AST, int]]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.FloorDiv,
                                                             ast.MatMult)):
        # an index's floor division is the paper's division (`k * N // 2` for kN/2)
        right = -exponent if isinstance(node.op, (ast.Div, ast.FloorDiv)) else exponent
        return flatten_product(node.left, exponent) + flatten_product(node.right, right)
    return [(node, exponent)]


def product(node: ast.AST) -> Term | None:
    """A term of a sum as its factors with exponents, in a canonical order."""
    factors = Counter()
    for factor, exponent in flatten_product(node):
        text = canonical(factor)
        if text is None:
            return None
        factors[text] += exponent
    return tuple(sorted(factors.items()))


def canonical(node: ast.AST) -> str | None:
    """One spelling of a factor: names and numbers normalised, inner sums signed and sorted;
    None for what the two sides cannot be compared on (calls, subscripts, ...)."""
    if isinstance(node, ast.Name):
        return atom(node.id)
    if isinstance(node, ast.Attribute):
        return atom(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
            not isinstance(node.value, bool):
        return f"{float(node.value):g}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        terms = [(product(t), s) for t, s in flatten_sum(node)]
        if any(t is None for t, _ in terms):
            return None
        return "(" + " ".join(sorted(f"{'+' if s > 0 else '-'}{t}" for t, s in terms)) + ")"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        term = product(node)
        return None if term is None else str(term)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, power = canonical(node.left), canonical(node.right)
        return None if base is None or power is None else f"{base}^{power}"
    if isinstance(node, ast.Call):
        return _call(node)
    return None


#: Operations whose keyword arguments (`dim=-1`, `keepdim=True`) do not change what they
#: compute for a formula, and which a method call applies to its object (`x.norm()`).
_OPERATIONS = frozenset({"sqrt", "norm", "exp", "log", "sum", "mean", "softmax", "sigmoid",
                         "tanh", "abs"})


def _call(node: ast.Call) -> str | None:
    """`sqrt(d)` is `d^0.5`; `x.norm(p=2, dim=-1)` and `torch.norm(x)` are `norm(x)`."""
    name = canonical(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
    if name is None:
        return None  # `make_fn()(x)`: what it computes is not written here
    operation = name if isinstance(node.func, ast.Name) else atom(node.func.attr)
    if operation in _OPERATIONS:
        operands = node.args or ([node.func.value] if isinstance(node.func, ast.Attribute)
                                 else [])
        if len(operands) != 1:
            return None
        operand = canonical(operands[0])
        if operand is None:
            return None
        return f"{operand}^0.5" if operation == "sqrt" else f"{operation}({operand})"
    if node.keywords:
        return None
    args = [canonical(a) for a in node.args]
    return None if None in args else f"{name}({','.join(args)})"


def atom(name: str) -> str:
    """`x_1` -> `x1`, `alpha_t` -> `alphat`, `lambda_` -> `lambda`."""
    return re.sub(r"[_\s]", "", name).lower()


def expression_text(node: ast.AST) -> str:
    """The source of an expression, cut to 80 characters for a reason."""
    try:
        return ast.unparse(node)[:80]
    except (ValueError, RecursionError):
        return "?"


def code_shapes(index: RepoIndex, file: str) -> list[Shape]:
    """Every sum and division of a Python file, with its line (cached per file)."""
    cache = index.cache.setdefault("alignment_shapes", {})
    if file not in cache:
        cache[file] = _parse_shapes(index, file)
    return cache[file]


def _parse_shapes(index: RepoIndex, file: str) -> list[Shape]:
    return [shape for _, expression in _statement_expressions(index, file)
            for shape in shapes_of(expression, file)]


def _statement_expressions(index: RepoIndex, file: str) -> list[tuple[ast.stmt, ast.expr]]:
    """The expressions of every statement (not of definitions) of a Python file outside
    tests, parsed once per file."""
    cache = index.cache.setdefault("alignment_expressions", {})
    if file in cache:
        return cache[file]
    found: list[tuple[ast.stmt, ast.expr]] = []
    for node in ast.walk(module) if (module := python_module(index, file, tests=False)) else ():
        if isinstance(node, ast.stmt) and not isinstance(
                node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            found += [(node, c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
    cache[file] = found
    return found


def python_module(index: RepoIndex, file: str, tests: bool = True) -> ast.Module | None:
    """A Python file of the index, parsed once per index: markdown fences blanked, and each
    line that breaks the file mended, so that the code after a broken line is read too (else
    the part before the first error). None: not Python, nothing parseable, or a test file
    when `tests` is False."""
    cache = index.cache.setdefault("alignment_trees", {})
    entry = index.files.get(file)
    if file not in cache:
        cache[file] = _parsed("\n".join(entry.lines)) if entry and \
            entry.lang == "python" else None
    if not tests and entry is not None and entry.kind == EvidenceKind.TEST:
        return None
    return cache[file]


def _parsed(text: str) -> ast.Module | None:
    """The whole file's tree, mended line by line where it does not parse (`parse_recovering`),
    else the part before its first error."""
    tree, error = parse_tolerant(text)
    return (parse_recovering(text) or tree) if error else tree


def operator_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                      ) -> list[tuple[str, str]]:
    """(reason, where) for each sum or division of the claim that the carrying code holds
    with the same terms only under other signs or exponents."""
    if claim.dimension != Dimension.D2:
        return []
    wanted = claim_shapes(claim.text)
    if not wanted:
        return []
    code = [s for d in carriers(index, check) for s in code_shapes(index, d.file)
            if d.start <= int(s.where.rsplit(":", 1)[1]) <= d.end]
    out = []
    for shape in wanted:
        alike = [c for c in code if c.kind == shape.kind and c.key() == shape.key()]
        same = [c for c in alike if c.parts in (shape.parts, shape.flipped())]
        if not alike:  # the code names some factors otherwise: pair the terms it shares,
            # and every sum that pairs must keep the claim's signs (one instance that does
            # not, beside one that does, is still a drifted copy of the formula)
            signs = [(c, paired_signs(shape, c)) for c in code]
            alike = [c for c, pairs in signs if pairs and len({a * b for a, b in pairs}) > 1]
            same = []
        if not alike:  # the code abbreviates the paper's names (`cmd_xy` for `c_xy`): pair
            # the terms by abbreviation, and with that looser pairing fail only when no sum
            # of the code pairs with the claim's signs
            signs = [(c, paired_signs(shape, c, abbreviates)) for c in code]
            signs = [(c, {a * b for a, b in pairs}) for c, pairs in signs if pairs]
            alike = [c for c, products in signs if len(products) > 1]
            same = [c for c, products in signs if len(products) == 1]
        if alike and not same:
            c = alike[0]
            out.append((f"the claim computes {shape.text}; the code computes {c.text} at "
                        f"{c.where}, with other signs", c.where))
    return out


def paired_signs(shape: Shape, code: Shape, same_name: Callable[[str, str], bool] | None = None
                 ) -> list[tuple[int, int]] | None:
    """A claim's sum and a code sum of as many terms, each claim term paired with the one code
    term that shares a named factor of its own (one no other claim term has): `alpha *
    param_tuned + (1 - alpha) * param_pretrained` with `(1 - alpha) * w_pre + alpha * w_ft`.
    `same_name` (default: equality) says when a claim's name and a code's name are the same.
    The (claim, code) sign of each pair, or None when the terms do not pair one to one."""
    if shape.kind != "sum" or code.kind != "sum" or len(shape.parts) != len(code.parts):
        return None
    code_terms = list(code.parts)
    pairs, used = [], set()
    for term, sign in shape.parts:
        others = {f for t, _ in shape.parts if t != term for f in _names(t)}
        own = _names(term) - others
        if not _names(term):  # a constant (`1` of `1 - alpha_k`) pairs with the same constant
            matches = [i for i, (t, _) in enumerate(code_terms) if t == term]
        elif same_name is None:
            matches = [i for i, (t, _) in enumerate(code_terms) if own & _names(t)]
        else:
            matches = [i for i, (t, _) in enumerate(code_terms) if any(
                same_name(a, b) for a in own for b in _names(t))]
        if len(matches) != 1 or matches[0] in used:
            return None
        used.add(matches[0])
        pairs.append((sign, code_terms[matches[0]][1]))
    return pairs


def _names(term: Term) -> set[str]:
    return {factor for factor, _ in term if not _number(factor)}


def abbreviates(paper: str, code: str) -> bool:
    """The code's name is the paper's, or one of them abbreviates the other: the same name
    with a short prefix (`x_pred` and `pred`), or the same first letter and the same last
    two characters (`c_xy` and `cmd_xy`, `a_t` and `a_tilde_t`), or the paper's name with
    its one-letter index dropped (`alpha_k` and `alpha`: the code holds every k at once), or
    the paper's function of an indexed argument named by the function and the index
    (`r(y2, y*)` and `r2`)."""
    paper, code = paper.replace("^", ""), code.replace("^", "")  # `x_t^k` is `x_t_k`
    if paper == code:
        return True
    call = re.fullmatch(r"(\w+)\((\w+)(?:,[^()]*)?\)", paper)
    if call:  # `r(y2, y*)` is the code's `r2` or `ry2`: the function and its argument's index
        function, argument = call.groups()
        index = re.search(r"\d+$", argument)
        return code in {function + argument, function + (index.group() if index else "?")}
    short, long = sorted((paper, code), key=len)
    if len(short) < 3 or not short.isalnum() or not long.isalnum():
        return False
    return long.endswith(short) and len(long) - len(short) <= 2 or \
        short[0] == long[0] and short[-2:] == long[-2:] or \
        long == paper and long.startswith(short) and len(long) == len(short) + 1 and \
        long[-1].isalpha()


# ------------------------------------------------------------------------------- scale factors


def factor_sides(node: ast.AST) -> set[tuple[str, int]]:
    """The operations and powers (`dk^0.5`, `norm(x)`, `exp(s)`) that the products under
    `node` multiply (1) or divide (-1) by."""
    out = set()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.BinOp) or not isinstance(
                sub.op, (ast.Mult, ast.Div, ast.MatMult)):
            continue
        factors = [(canonical(f), e) for f, e in flatten_product(sub)]
        if sum(text is None or not _number(text) for text, _ in factors) < 2:
            continue  # `1.0 / sqrt(d)` makes a scale that something else multiplies by
        out |= {(text, e) for text, e in factors if text is not None and _operation(text)}
    return out


def _operation(text: str) -> bool:
    """A factor that is an operation on named things (`norm(x)`, `dk^0.5`), not a bracketed
    sum (`(1 - t)` is in too many formulas to say which one it belongs to)."""
    return not text.startswith("(") and bool(re.search(r"[a-z]", text)) and (
        "^" in text or bool(re.match(r"[a-z]+\(", text)))


def claim_factor_sides(text: str, named: bool = False) -> set[tuple[str, int]]:
    """`factor_sides` of the claim's formulas that Python's parser can read (`named`: those of
    `named_factor_sides`)."""
    sides = named_factor_sides if named else factor_sides
    out: set[tuple[str, int]] = set()
    for piece in formula_pieces(text):
        try:
            out |= sides(parse_python(piece, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            continue
    return out


def named_factor_sides(node: ast.AST) -> set[tuple[str, int]]:
    """The names of more than one letter (`s_z`, `w_q_tau`) that the products under `node`
    multiply (1) or divide (-1) by; a name on both sides of one product is left out."""
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.Mult, ast.Div, ast.MatMult)):
            factors = [(canonical(f), e) for f, e in flatten_product(sub)
                       if isinstance(f, (ast.Name, ast.Attribute))]
            out |= {(text, e) for text, e in factors if text and len(text) > 1}
    return out


def code_factor_sides(index: RepoIndex, file: str, named: bool = False
                      ) -> list[tuple[int, str, int]]:
    """(line, factor, side) of every product in a Python file: `factor_sides`, or
    `named_factor_sides` with `named` (cached per file)."""
    sides = named_factor_sides if named else factor_sides
    cache = index.cache.setdefault(f"alignment_factor_sides_{named}", {})
    if file not in cache:
        cache[file] = [(statement.lineno, factor, side)
                       for statement, expression in _statement_expressions(index, file)
                       for factor, side in sides(expression)]
    return cache[file]


def factor_findings(index: RepoIndex, claim: Claim, check: ClaimCheck
                    ) -> list[tuple[str, str]]:
    """(reason, where) for an operation or power the claim multiplies by and the carrying code
    only divides by, or the other way round (`scores * sqrt(d_k)` written `/ sqrt(d_k)`,
    `x / norm(x)` written `x * norm(x)`)."""
    if claim.dimension != Dimension.D2:
        return []
    out = []
    # operations compared as written; names the code may abbreviate (`s_z`, `w_q_tau`);
    # and an operation the code applies to its own name for the paper's operand (`silu(v)`
    # for SiLU(ν)), when the claim takes that operation on one side only
    for named, same in ((False, str.__eq__), (True, abbreviates), (False, same_operation)):
        # a factor the claim's formulas put on both sides (`s_init / s_scale` beside
        # `s_scale / s_init`) has no side to keep
        sides = claim_factor_sides(claim.text, named)
        wanted = {(f, side) for f, side in sides if (f, -side) not in sides}
        if same is same_operation:  # `exp(l_k) / sum(exp(l_j))` takes exp on both sides
            wanted = {(f, side) for f, side in wanted if _applied(f) and not any(
                _applied(g) == _applied(f) and s != side for g, s in wanted)}
        if wanted:
            code = [(f"{d.file}:{line}", factor, side) for d in carriers(index, check)
                    for source in (code_factor_sides, inlined_factor_sides)
                    for line, factor, side in source(index, d.file, named)
                    if d.start <= line <= d.end]
            out += [f for f in _opposite_sides(wanted, code, same)
                    if f[1] not in {g[1] for g in out}]
    return out


def inlined_factor_sides(index: RepoIndex, file: str, named: bool = False
                         ) -> list[tuple[int, str, int]]:
    """(line, factor, side) of the products of a Python file's functions that read a local
    name assigned once, to an operation, read as that operation (and an attribute of `self`
    that the class sets once so): after `scale = math.sqrt(d)`, `scores / scale` divides by
    sqrt(d). Names compared as written (`named`) gain nothing from it. Cached per file."""
    if named:
        return []
    cache = index.cache.setdefault("alignment_inlined_sides", {})
    if file not in cache:
        found: list[tuple[int, str, int]] = []
        for function, owner in functions_of(python_module(index, file, tests=False)):
            definitions = set_once(function)
            if owner is not None:  # `self.sqrt_d = math.sqrt(d_model)` in the constructor
                definitions.update(set_once(owner, attributes=True))
            if definitions:
                found += _inlined_products(function, definitions)
        cache[file] = found
    return cache[file]


def _inlined_products(function: ast.AST, definitions: dict[str, ast.expr]
                      ) -> list[tuple[int, str, int]]:
    """`factor_sides` of each product of the function that reads a name of `definitions`,
    with that name read as what it holds."""
    out = []
    for sub in ast.walk(function):
        if not isinstance(sub, ast.BinOp) or not isinstance(sub.op, (ast.Mult, ast.Div,
                                                                     ast.MatMult)):
            continue
        factors = flatten_product(sub)
        if not any(name_key(f, ast.Load, True) in definitions for f, _ in factors):
            continue
        texts = [(canonical(definitions.get(name_key(f, ast.Load, True) or "", f)), e)
                 for f, e in factors]
        if sum(text is None or not _number(text) for text, _ in texts) >= 2:
            out += [(sub.lineno, text, e) for text, e in texts
                    if text is not None and _operation(text)]
    return out


def functions_of(module: ast.Module | None
                 ) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]:
    """Every function of a module, with the class whose method it is (None otherwise)."""
    owners: dict[int, ast.ClassDef] = {}  # a class is walked before its methods
    out = []
    for node in ast.walk(module) if module is not None else ():
        if isinstance(node, ast.ClassDef):
            owners.update((id(item), node) for item in node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node, owners.get(id(node))))
    return out


def set_once(scope: ast.AST, attributes: bool = False,
             holding: Callable[[ast.expr], bool] | None = None) -> dict[str, ast.expr]:
    """The names `scope` binds exactly once, by a plain assignment of what `holding` accepts
    (default `_one_operation`: `scale = math.sqrt(d)`, `inv = d ** -0.5`), with what they
    hold: a function's local names, or with `attributes` the attributes of `self` a class's
    methods set (`self.scale`)."""
    bound: Counter = Counter(a.arg for a in ast.walk(scope) if isinstance(a, ast.arg))
    assigned: dict[str, ast.expr] = {}
    for sub in ast.walk(scope):
        if (key := name_key(sub, (ast.Store, ast.Del), attributes)) is not None:
            bound[key] += 1
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and \
                (target := name_key(sub.targets[0], ast.Store, attributes)) is not None:
            assigned[target] = sub.value
    return {name: value for name, value in assigned.items()
            if name.startswith("self.") == attributes and bound[name] == 1 and
            (holding or _one_operation)(value)}


def _one_operation(node: ast.expr) -> bool:
    """One of the formula operations (`math.sqrt(d)`, `x.norm()`) or a power (`d ** 0.5`) of
    a plain operand, not a quantity computed from several; nor `1.0 / math.sqrt(d)`, which
    `factor_sides` leaves out as a scale whatever it is later multiplied or divided by (an
    initialiser's `std / math.sqrt(2 * n)`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        operand = node.left
    elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and \
            atom(node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in \
            _OPERATIONS:
        operand = node.args[0] if node.args else node.func
    else:
        return False
    return sum(1 for _ in ast.walk(operand)) <= 8 and canonical(node) is not None


def _applied(factor: str) -> str | None:
    """The operation a factor applies (`silu` of `silu(nu)`, a square root of `dk^0.5`), None
    for a name or another power."""
    if factor.endswith("^0.5"):
        return "sqrt"
    found = re.match(r"([a-z]\w*)\(", factor)
    return found.group(1) if found else None


def same_operation(paper: str, code: str) -> bool:
    """The same operation, whatever its operand is named (`silu(nu)` and `silu(v)`)."""
    return _applied(paper) is not None and _applied(paper) == _applied(code)


def _opposite_sides(wanted: set[tuple[str, int]], code: list[tuple[str, str, int]],
                    same: Callable[[str, str], bool]) -> list[tuple[str, str]]:
    out = []
    for factor, side in sorted(wanted):
        sides = {s for _, f, s in code if same(factor, f)}
        if sides == {-side}:
            where, written = next((w, f) for w, f, _ in code if same(factor, f))
            verb, other = ("multiplies by", "divides by") if side > 0 else (
                "divides by", "multiplies by")
            it = "it" if written == factor else written
            out.append((f"the claim {verb} {factor}; the code {other} {it} at {where}", where))
    return out


# ------------------------------------------------------------------------------- order of steps


def used_before_computed(index: RepoIndex, function: Definition) -> list[tuple[str, int, int]]:
    """(name, line read, line computed) for each local name a straight run of statements reads
    before the statement that first computes it, with nothing binding it earlier in the
    function (parameters, imports, loop and `with` targets, earlier assignments): two steps
    of the pipeline run in the wrong order. In a constructor, the attributes it sets count
    too (`self.n_models = len(self.model_names)` before `self.model_names = ...`), unless the
    class body defines them or the class derives from one of the repository's own classes,
    which may set them first."""
    tree, owner = _function_node(index, function)
    if tree is None:
        return []
    attributes = tree.name == "__init__" and owner is not None and \
        not _derives_locally(index, owner)
    bound_anywhere = _bound_names(tree, attributes=attributes)
    seen = {a.arg for a in (*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs)}
    seen |= {a.arg for a in (tree.args.vararg, tree.args.kwarg) if a is not None}
    seen |= {f"self.{name}" for name in _class_body_names(owner)} if attributes else set()
    found: list[tuple[str, int, int]] = []
    _scan_block(tree.body, seen, bound_anywhere, found, attributes)
    return found


def _scan_block(body: list[ast.stmt], seen: set[str], local: set[str],
                found: list[tuple[str, int, int]], attributes: bool = False) -> None:
    for i, statement in enumerate(body):
        later = {n: s.lineno for s in body[i + 1:]
                 for n in _bound_names(s, attributes=attributes)}
        for name in _reads(statement, attributes) - seen:
            if name in local and name in later:
                found.append((name, statement.lineno, later[name]))
        for block in _blocks(statement):
            _scan_block(block, seen | _bound_names(statement, only_header=True), local, found,
                        attributes)
        seen |= _bound_names(statement, attributes=attributes)


def name_key(node: ast.AST, ctx: type, attributes: bool) -> str | None:
    """The name a node reads or binds (`ctx`): a variable, or with `attributes` `self.x`."""
    if not isinstance(getattr(node, "ctx", None), ctx):
        return None
    if isinstance(node, ast.Name):
        return node.id
    if attributes and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The nested statement lists of a compound statement (not of nested functions)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [getattr(statement, f) for f in ("body", "orelse", "finalbody")
            if isinstance(getattr(statement, f, None), list)] + \
        [h.body for h in getattr(statement, "handlers", [])]


def _reads(statement: ast.stmt, attributes: bool = False) -> set[str]:
    """Names the statement's own expressions read (its nested blocks are scanned apart)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return set()
    header = [c for c in ast.iter_child_nodes(statement) if isinstance(c, ast.expr)]
    comprehension = {n.id for h in header for n in ast.walk(h)
                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {key for h in header for n in ast.walk(h)
            if (key := name_key(n, ast.Load, attributes)) is not None} - comprehension


def _bound_names(node: ast.AST, only_header: bool = False, attributes: bool = False) -> set[str]:
    """Names a statement (or a whole function) binds; `only_header`: a compound statement's
    own targets (`for x in`, `with ... as f`, `except E as e`), not its body's."""
    if only_header:
        targets = [getattr(node, "target", None), *[i.optional_vars for i in
                                                    getattr(node, "items", [])]]
        names = {n.id for t in targets if t is not None for n in ast.walk(t)
                 if isinstance(n, ast.Name)}
        return names | {h.name for h in getattr(node, "handlers", []) if h.name}
    names = set()
    for sub in ast.walk(node):
        if (key := name_key(sub, ast.Store, attributes)) is not None:
            names.add(key)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                sub is not node:
            names.add(sub.name)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            names |= set(sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
    return names


def _function_node(index: RepoIndex, function: Definition
                   ) -> tuple[ast.FunctionDef | None, ast.ClassDef | None]:
    """The function's node, and the class whose method it is (None for a function)."""
    tree = python_module(index, function.file)
    for node in ast.walk(tree) if tree is not None else ():
        body = node.body if isinstance(node, (ast.Module, ast.ClassDef)) else []
        for item in body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    item.lineno == function.start and item.name == function.name:
                return item, node if isinstance(node, ast.ClassDef) else None
    for node in ast.walk(tree) if tree is not None else ():  # nested in a function
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno == function.start and node.name == function.name:
            return node, None
    return None, None


def _class_body_names(owner: ast.ClassDef) -> set[str]:
    """What a class body defines: attributes, methods, properties."""
    names = set()
    for item in owner.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        targets = [*getattr(item, "targets", []), getattr(item, "target", None)]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _derives_locally(index: RepoIndex, owner: ast.ClassDef) -> bool:
    """The class derives from a class the repository defines (which may set attributes)."""
    classes = {d.name for d in index.definitions if d.kind == "class"}
    return any(isinstance(b, ast.Name) and b.id in classes or
               isinstance(b, ast.Attribute) and b.attr in classes for b in owner.bases)


def order_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[tuple[str, str]]:
    """(reason, where) for a pipeline claim whose carrying code reads a step's result before
    the step that computes it runs."""
    if claim.dimension != Dimension.D4:
        return []
    out = []
    for function in carriers(index, check):
        for name, read, computed in used_before_computed(index, function):
            out.append((f"{function.qualname} reads {name} at {function.file}:{read} before "
                        f"the step that computes it at line {computed}",
                        f"{function.file}:{read}"))
    return out[:3]
