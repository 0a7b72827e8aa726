"""Fixtures for the sandbox suites: every backend, fresh or shared sandboxes, and a final reap."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sabench.sandbox.protocol import Sandbox, get_backend, open_sandbox
from sabench.sandbox.types import Limits, SandboxSpec
from tests.conftest import require_or_skip

BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "local"]
#: Small limits keep the limit tests quick; the default timeout guards against a hung test.
TEST_LIMITS = Limits(memory_mb=256, pids=128, timeout_s=60, tmp_mb=32)


def require_backend(name: str) -> None:
    ok, why = get_backend(name).available(SandboxSpec(backend=name))
    flag = "SABENCH_REQUIRE_DOCKER" if name == "docker" else "SABENCH_REQUIRE_SANDBOX"
    require_or_skip(ok, flag, f"{name} sandbox backend unavailable: {why}")


@pytest.fixture(scope="session", autouse=True)
def _no_leftovers() -> Iterator[None]:
    """After the session nothing this process started may remain (reaped, then reported)."""
    yield
    from sabench.sandbox.docker_backend import docker_client, owner_tag
    from sabench.sandbox.reaper import reap_containers

    try:
        docker_client()
    except Exception:
        return  # no engine: no containers could have been made
    leftovers = reap_containers(owner=owner_tag())
    assert not leftovers, f"sandbox containers left behind (now reaped): {leftovers}"


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    require_backend(request.param)
    return request.param


@pytest.fixture(scope="module")
def box(backend: str) -> Iterator[Sandbox]:
    """One sandbox shared by a module's tests (commands clean up after themselves)."""
    with open_sandbox(SandboxSpec(backend=backend, limits=TEST_LIMITS)) as sandbox:
        yield sandbox


@pytest.fixture
def make_box(backend: str) -> Iterator[Callable[..., Sandbox]]:
    """Factory of fresh sandboxes (closed at teardown) for tests that need their own limits."""
    opened: list[Sandbox] = []

    def make(**limits: float) -> Sandbox:
        spec = SandboxSpec(backend=backend, limits=TEST_LIMITS.model_copy(update=limits))
        opened.append(open_sandbox(spec))
        return opened[-1]

    yield make
    for sandbox in opened:
        sandbox.close()
