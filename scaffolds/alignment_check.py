"""The alignment-first scaffold's check step: is each claim implemented as the paper says?

Checkers are registered by name in `CHECKERS`; each takes the paper (with the claims to check:
the scaffold's own ledger, or the gold claims in the oracle ablation), a repository folder and
the ids of the claims to check (a batch: the graph sends one batch per dimension), and returns a
`ClaimResult` per claim: pass or fail, reasons a repair can act on, evidence locations.

- `offline`: the verifiers' alignment check (`sabench.verifiers.alignment`): the offline judge's
  expected official score against a threshold, plus the D1 rule that a numerical claim none of
  whose values is in the code fails.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from sabench.verifiers.alignment import CHECKERS as VERIFIER_CHECKERS
from sabench.verifiers.alignment import ClaimResult
from sabench.verifiers.spec import PaperSpec

Checker = Callable[[PaperSpec, Path, Collection[str]], list[ClaimResult]]


def verifier_checker(name: str) -> Checker:
    """A checker of `sabench.verifiers.alignment`, restricted to a batch of claims."""

    def check(spec: PaperSpec, repo: Path, ids: Collection[str]) -> list[ClaimResult]:
        wanted = set(ids)
        return [r for r in VERIFIER_CHECKERS[name](spec, repo) if r.id in wanted]

    return check


#: Checkers by name: a new one is a function and one line here.
CHECKERS: dict[str, Checker] = {"offline": verifier_checker("offline"),
                                "alignment": verifier_checker("offline")}


class UnknownChecker(ValueError):
    """A checker name that is not registered (one line)."""


def get_checker(name: str) -> Checker:
    if name not in CHECKERS:
        raise UnknownChecker(f"unknown checker {name!r} (known: {', '.join(CHECKERS)})")
    return CHECKERS[name]


_SKIP = {".git", "__pycache__", ".venv", "node_modules"}
_TEXT = {".py", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh"}


def claim_locations(repo: Path, ids: Iterable[str], max_bytes: int = 1_000_000
                    ) -> dict[str, str]:
    """Where the code tags each claim (`# <claim id>` on the line that realises it), as
    `file:line` of the first tagged line that is not only a comment."""
    wanted = sorted(set(ids), key=len, reverse=True)
    if not wanted or not repo.is_dir():
        return {}
    pattern = re.compile("|".join(re.escape(i) + r"(?![\w-])" for i in wanted))
    found: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        if not path.is_file() or path.suffix not in _TEXT or _SKIP & set(path.parts) or \
                path.is_symlink() or path.stat().st_size > max_bytes:
            continue
        rel = path.relative_to(repo).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#"):
                continue
            for match in pattern.finditer(line):
                found.setdefault(match.group(0), f"{rel}:{number}")
    return found
