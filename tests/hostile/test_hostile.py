"""The hostile-input corpus (tests/hostile/corpus.py) against every command that reads user input.

Every invocation must end in a result or in a one-line error naming the broken file: never a
traceback, a hang, a read outside the given folders, or an earlier output lost. The corpus is
written under pytest's temporary folder by a fixture (nothing hostile is committed).

The tests run the quick selection (every kind of case and every command at least once, 82
invocations, under 3 minutes on two cores; see `corpus.selection`); `SABENCH_HOSTILE_ALL=1`
runs every case with every command (255 invocations, about 12 minutes). One test per kind of
case and sandbox, so pytest-xdist spreads them and a missing sandbox skips only what needs it
(or fails, under the require flags).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.hostile import corpus as hostile
from tests.sandbox.conftest import require_backend

ALL = os.environ.get("SABENCH_HOSTILE_ALL") == "1"
CHOSEN = hostile.selection(quick=not ALL)


def _groups() -> list[tuple[str, str | None]]:
    """(kind, sandbox backend or None) of the chosen invocations, in a stable order."""
    found = {(kind, hostile.BACKEND.get(command)) for kind, _, command in CHOSEN}
    return sorted(found, key=lambda g: (list(hostile.CASE_MAKERS).index(g[0]), g[1] or ""))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> hostile.Corpus:
    """The good inputs; each test adds the cases it needs (a worker builds only those)."""
    return hostile.build_base(tmp_path_factory.mktemp("hostile") / "corpus")


def _marks(backend: str | None) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow] + ([pytest.mark.docker] if backend == "docker" else [])


@pytest.mark.parametrize(("kind", "backend"), [
    pytest.param(kind, backend, marks=_marks(backend), id=f"{kind}-{backend or 'no-sandbox'}")
    for kind, backend in _groups()])
def test_hostile_inputs(corpus: hostile.Corpus, tmp_path: Path, kind: str,
                        backend: str | None) -> None:
    if backend:
        require_backend(backend)
    chosen = {t for t in CHOSEN if t[0] == kind and hostile.BACKEND.get(t[2]) == backend}
    for case in dict.fromkeys(name for _, name, _ in sorted(chosen)):
        hostile.add_case(corpus, kind, case)
    todo = list(hostile.invocations(corpus, tmp_path / "out", (backend or "local",), chosen))
    assert {(i.case.kind, i.case.name, i.command) for i in todo} == chosen
    # Two at a time alone; one per xdist worker, whose neighbour runs tests of its own.
    jobs = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2
    with ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(hostile.run, todo))
    _judge(outcomes)


def _judge(outcomes: list[hostile.Outcome]) -> None:
    bad = [o for o in outcomes if not o.ok]
    lines = [f"{o.command} / {o.case}: {o.ended} (exit {o.exit_code}, {o.seconds:g}s): "
             f"{o.message}{' | ' + '; '.join(o.problems) if o.problems else ''}" for o in bad]
    assert not lines, (f"{len(lines)} of {len(outcomes)} hostile invocations went wrong:\n"
                       + "\n".join(lines))
