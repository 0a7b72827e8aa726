"""Stub and placeholder detection on Python function bodies (AST) and on source lines.

A function is a stub when its body does nothing real: only `pass` / `...`, only
`raise NotImplementedError`, a bare constant return (`return 0`, `return None`, `return {}`),
or a zero-filled tensor return (`return torch.zeros(...)`). Placeholder markers (TODO, FIXME,
"placeholder", "dummy", "simplified", "in practice ...") are found in comments and strings.
"""

from __future__ import annotations

import ast
import re

PLACEHOLDER = re.compile(
    r"\b(?:TODO|FIXME|XXX|placeholder|dummy|stub|not\s+implemented|simplif(?:y|ied)|"
    r"mock(?:ed)?|in\s+practice|would\s+(?:be|need)|for\s+simplicity|fake|synthetic)\b",
    re.IGNORECASE,
)
# Calls that build data out of nothing: a "dataset" or "output" made of these is a placeholder.
_FILLERS = {"zeros", "zeros_like", "ones", "ones_like", "randn", "rand", "randint", "empty",
            "full", "randn_like", "rand_like", "FakeData"}


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _is_constant(node: ast.AST | None) -> bool:
    """A literal, a container of literals, or a name like None/True."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_constant(elt) for elt in node.elts)
    if isinstance(node, ast.Dict):
        return all(_is_constant(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    return False


def call_name(node: ast.AST) -> str:
    """The last name of a called function: `torch.nn.functional.mse_loss` → `mse_loss`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _is_filler(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and call_name(node) in _FILLERS


def stub_reason(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """Why a function is a stub, or None when its body does real work.

    Args:
        func: a parsed function definition.

    Returns:
        A short reason ("empty body", "raises NotImplementedError", "returns a constant",
        "returns zero-filled data"), or None.
    """
    body = [stmt for stmt in func.body if not _is_docstring(stmt)]
    if not body:
        return "empty body"
    if all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and
                                       isinstance(s.value, ast.Constant)) for s in body):
        return "empty body"
    last = body[-1]
    if len(body) == 1 and isinstance(last, ast.Raise) and "NotImplemented" in ast.unparse(last):
        return "raises NotImplementedError"
    if len(body) == 1 and isinstance(last, ast.Return):
        if _is_constant(last.value):
            return "returns a constant"
        if _is_filler(last.value):
            return "returns zero-filled or random data"
    return None


def is_abstract(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Abstract methods and protocol members are declarations, not stubs."""
    return any(call_name(dec) in ("abstractmethod", "overload") or
               (isinstance(dec, ast.Name) and dec.id in ("abstractmethod", "overload"))
               for dec in func.decorator_list)


def placeholder_lines(lines: list[str]) -> list[int]:
    """1-based numbers of the lines carrying a placeholder marker."""
    return [no for no, line in enumerate(lines, 1) if PLACEHOLDER.search(line)]
