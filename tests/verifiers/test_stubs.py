"""The stub detector on parsed functions, and placeholder markers on lines."""

from __future__ import annotations

import ast

import pytest

from sabench.verifiers.stubs import is_abstract, placeholder_lines, stub_reason


def function(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(("source", "reason"), [
    ("def f(x):\n    pass\n", "empty body"),
    ("def f(x):\n    ...\n", "empty body"),
    ('def f(x):\n    """Only a docstring."""\n', "empty body"),
    ("def f(x):\n    raise NotImplementedError('later')\n", "raises NotImplementedError"),
    ("def f(x):\n    return 0.0\n", "returns a constant"),
    ("def f(x):\n    return {'loss': 0, 'acc': None}\n", "returns a constant"),
    ("def f(x):\n    return torch.zeros(x.shape[0], 10)\n", "returns zero-filled or random data"),
    ("def f(n):\n    return np.random.randn(n, 3)\n", "returns zero-filled or random data"),
])
def test_stubs(source: str, reason: str) -> None:
    assert stub_reason(function(source)) == reason


@pytest.mark.parametrize("source", [
    "def f(x):\n    return x * 2\n",
    "def f(x):\n    y = x + 1\n    return 0\n",
    "def f(x):\n    if x:\n        raise NotImplementedError\n    return x\n",
    "def f(x):\n    return torch.zeros_like(x) + x\n",
])
def test_real_functions(source: str) -> None:
    assert stub_reason(function(source)) is None


def test_abstract_methods_are_declarations() -> None:
    source = "@abstractmethod\ndef f(self):\n    raise NotImplementedError\n"
    assert is_abstract(function(source))
    assert not is_abstract(function("def g():\n    pass\n"))


def test_placeholder_markers() -> None:
    lines = ["x = 1", "# TODO: real loader", "data = FakeData()  # placeholder",
             "y = f(x)  # simplified version of the loss", "z = 2"]
    assert placeholder_lines(lines) == [2, 3, 4]
