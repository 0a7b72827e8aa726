"""Fixtures of the agent suites: a laid-out agent workspace on every sandbox backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sabench.agent.workspace import AgentWorkspace
from sabench.sandbox.types import SandboxSpec
from tests.sandbox.conftest import BACKENDS, TEST_LIMITS, require_backend

DEMO_PAPER = Path(__file__).resolve().parents[2] / "benchmark" / "demo" / "papers" / "smoothlr"


@pytest.fixture(scope="module", params=BACKENDS)
def agent_backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return request.param


@pytest.fixture
def workspace(agent_backend: str, tmp_path: Path) -> Iterator[AgentWorkspace]:
    """The demo paper at /home/paper, an empty /home/submission, mirrored to tmp_path."""
    spec = SandboxSpec(backend=agent_backend, limits=TEST_LIMITS)
    ws = AgentWorkspace(spec, DEMO_PAPER, tmp_path / "mirror", links={"repo": "submission"})
    yield ws
    ws.close()
