"""The import direction of DESIGN.md: sandbox <- verifiers <- agent <- scaffolds <- benchmark."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

ORDER = ["sandbox", "verifiers", "agent", "scaffolds", "benchmark"]


def imported_packages(source: Path, own: str) -> set[str]:
    """Top-level sabench packages that a file of package `own` imports (absolute or relative)."""
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names = [node.module]
            elif node.level >= 2 and node.module:  # from ..agent import x
                names = [f"sabench.{node.module}"]
        for name in names:
            parts = name.split(".")
            if parts[0] == "sabench" and len(parts) > 1 and parts[1] in ORDER:
                found.add(parts[1])
            elif parts[0] in ORDER and parts[0] != own:
                found.add(parts[0])
    return found


def python_files(package: str) -> list[Path]:
    return sorted((REPO_ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", ORDER)
def test_imports_go_one_way(package: str) -> None:
    allowed = set(ORDER[: ORDER.index(package) + 1])
    violations = []
    for path in python_files(package):
        extra = imported_packages(path, package) - allowed
        if extra and "demo" not in path.relative_to(REPO_ROOT).parts:
            violations.append(f"{path.relative_to(REPO_ROOT)} imports {sorted(extra)}")
    assert not violations, "layering broken:\n" + "\n".join(violations)


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself must catch an upward import, or the test above proves nothing."""
    fake = tmp_path / "probe.py"
    probe = "from sabench.benchmark import cli\nimport agent.tools\nfrom ..scaffolds import x\n"
    fake.write_text(probe, encoding="utf-8")
    assert imported_packages(fake, "sandbox") == {"benchmark", "agent", "scaffolds"}
