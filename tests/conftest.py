"""Shared fixtures and the skip-or-fail policy for tests that need real resources."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.agent.model_server import model_server  # noqa: F401 - fixtures for every suite
from tests.agent.postgres_server import postgres_url  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """The real SA-Bench data: $SABENCH_DATA_DIR, else ../shared/sabench beside the checkout."""
    configured = os.environ.get("SABENCH_DATA_DIR")
    return Path(configured) if configured else REPO_ROOT.parent / "shared" / "sabench"


def require_or_skip(available: bool, env_flag: str, why: str) -> None:
    """Skip when a resource is missing, unless CI demands it through `env_flag`=1."""
    if available:
        return
    if os.environ.get(env_flag) == "1":
        pytest.fail(f"{why} (and {env_flag}=1 requires it)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def sabench_data() -> Path:
    """Root of the real SA-Bench data (papers/, official_scores/, runs/, ...)."""
    root = shared_data_dir()
    require_or_skip((root / "papers").is_dir(), "SABENCH_REQUIRE_DATA",
                    f"no SA-Bench data at {root}")
    return root


@pytest.fixture(scope="session")
def papers_dir(sabench_data: Path) -> Path:
    return sabench_data / "papers"


@pytest.fixture(scope="session")
def official_scores_dir(sabench_data: Path) -> Path:
    return sabench_data / "official_scores"
