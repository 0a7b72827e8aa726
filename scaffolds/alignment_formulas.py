"""The alignment check's formula rule: the claim's elementary operations, operand by operand.

A formula claim such as `mu_t = t*x_1 + k*(1-t)*x_0` holds elementary operations between two
atoms (names or numbers): `t * x_1`, `1 - t`. Where the code that carries the claim (its best
function and the functions around its evidence) combines the same two operands, it should do
so with the same operation; `1 + t` where the paper says `1 - t`, with no `1 - t` anywhere in
that code, is a sign or operator error that term-based evidence cannot see. Only operations
that are whole subexpressions are compared (`b + c` is not one in `a * b + c`), and names are
matched after dropping case, underscores, braces and backslashes (`x_{1}` is `x1`, `\\alpha_t`
is `alpha_t`), so a claim written in another notation than the code simply finds no pair.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from sabench.verifiers.checks import ClaimCheck
from sabench.verifiers.index import Definition, RepoIndex
from sabench.verifiers.spec import Claim, Dimension
from sabench.verifiers.types import EvidenceKind

#: The operation a swapped one would be mistaken for: the drift a reader cannot see.
COUNTERPART = {"+": "-", "-": "+", "*": "/", "/": "*"}
COMMUTATIVE = {"+", "*"}
SYMBOLS = {"·": "*", "×": "*", "−": "-", "∗": "*", "⋅": "*"}
GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
         "η": "eta", "θ": "theta", "λ": "lambda", "μ": "mu", "σ": "sigma", "τ": "tau",
         "φ": "phi", "ω": "omega", "ρ": "rho", "κ": "kappa", "π": "pi", "ϵ": "epsilon"}
_ATOM = r"\\?[A-Za-z][A-Za-z]*(?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?[A-Za-z0-9]+\}?)?|\d+(?:\.\d+)?"
_PAIR = re.compile(rf"(?<![\w\\^.])({_ATOM})\s*([-+*/])\s*({_ATOM})(?![\w.])")
#: What may stand before a pair's first atom and after its second for the pair to be a whole
#: subexpression (for + and -, no tighter operator may touch it from either side).
_OPENS = set("([{=,:|;") | {""}
_CLOSES_SUM = set(")]},=;|+-") | {""}
_CLOSES_PRODUCT = _CLOSES_SUM | set("*/")
#: Words that are prose, not operands, when a claim's text is matched as a formula.
_PROSE = frozenset({"and", "or", "the", "of", "for", "to", "in", "is", "with", "per", "a", "an",
                    "from", "at", "by", "on", "as", "vs", "each", "all", "no", "not", "e", "eq"})


@dataclass(frozen=True)
class Operation:
    """An operation between two atoms: normalised operands, the operator, where it is."""

    left: str
    op: str
    right: str
    text: str
    where: str = ""

    def operands(self) -> tuple[str, str] | frozenset[str]:
        return frozenset((self.left, self.right)) if self.op in COMMUTATIVE else (
            self.left, self.right)


def atom(text: str) -> str:
    """A name or number in one spelling: `x_{1}` -> `x1`, `\\alpha_t` -> `alphat`, `1.0` -> `1`."""
    try:
        return f"{float(text):g}"
    except ValueError:
        pass
    for letter, name in GREEK.items():
        text = text.replace(letter, name)
    return re.sub(r"[\\{}_^\s]", "", text).lower()


def claim_operations(text: str) -> list[Operation]:
    """The claim's operations between two atoms that are whole subexpressions."""
    for symbol, op in SYMBOLS.items():
        text = text.replace(symbol, op)
    for letter, name in GREEK.items():
        text = text.replace(letter, name)
    found = []
    for match in _PAIR.finditer(text):
        left, op, right = match.groups()
        before = text[:match.start()].rstrip()[-1:]
        after = text[match.end():].lstrip()[:1]
        sum_ = op in "+-"
        opens, closes = (_OPENS, _CLOSES_SUM) if sum_ else (_OPENS | set("+-"), _CLOSES_PRODUCT)
        if before not in opens or after not in closes:
            continue
        a, b = atom(left), atom(right)
        if a in _PROSE or b in _PROSE or (_number(a) and _number(b)):
            continue  # prose ("and/or") or arithmetic between constants
        found.append(Operation(a, op, b, match.group(0)))
    return found


def _number(text: str) -> bool:
    return bool(re.fullmatch(r"-?[\d.]+(?:e[-+]?\d+)?", text))


def code_operations(index: RepoIndex, file: str) -> list[Operation]:
    """Every binary operation between two atoms in a Python file (cached per file)."""
    cache = index.cache.setdefault("alignment_operations", {})
    if file not in cache:
        cache[file] = list(_parse_operations(index, file))
    return cache[file]


def _parse_operations(index: RepoIndex, file: str):  # noqa: ANN202 - generator of Operation
    entry = index.files.get(file)
    if entry is None or entry.lang != "python" or entry.kind == EvidenceKind.TEST:
        return
    try:
        tree = ast.parse("\n".join(entry.lines))
    except (SyntaxError, ValueError, RecursionError):
        return
    ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            left, right = _code_atom(node.left), _code_atom(node.right)
            if left and right and not (_number(left) and _number(right)):
                yield Operation(left, ops[type(node.op)], right, ast.unparse(node)[:80],
                                f"{file}:{node.lineno}")


def _code_atom(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return atom(node.id)
    if isinstance(node, ast.Attribute):
        return atom(node.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
            not isinstance(node.value, bool):
        return atom(str(node.value))
    return ""


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


def operator_findings(index: RepoIndex, claim: Claim, check: ClaimCheck) -> list[tuple[str, str]]:
    """(reason, where) for each operation of the claim that the carrying code performs on the
    same operands only with the counterpart operator (`1 + t` for the claim's `1 - t`)."""
    if claim.dimension != Dimension.D2:
        return []
    wanted = claim_operations(claim.text)
    if not wanted:
        return []
    scope = carriers(index, check)
    code = [o for d in scope for o in code_operations(index, d.file)
            if d.start <= int(o.where.rsplit(":", 1)[1]) <= d.end]
    out = []
    for op in wanted:
        same = [c for c in code if c.operands() == op.operands() and c.op == op.op]
        swapped = [c for c in code if c.op == COUNTERPART[op.op] and
                   c.operands() == Operation(op.left, c.op, op.right, "").operands()]
        if swapped and not same:
            c = swapped[0]
            out.append((f"the claim computes {op.text}; the code computes {c.text} at "
                        f"{c.where}", c.where))
    return out
