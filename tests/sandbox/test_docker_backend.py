"""Docker-specific guarantees, read back from the engine: the container is set up as promised."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from sabench.sandbox import docker_backend
from sabench.sandbox.docker_backend import DockerBackend, DockerSandbox, owner_tag
from sabench.sandbox.protocol import open_sandbox
from sabench.sandbox.reaper import sandbox_containers
from sabench.sandbox.types import (
    LABEL,
    SANDBOX_UID,
    BackendUnavailable,
    Limits,
    SandboxBroken,
    SandboxSpec,
)

from .conftest import require_backend

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def docker_box() -> DockerSandbox:
    require_backend("docker")
    limits = Limits(memory_mb=200, cpus=0.5, pids=77, tmp_mb=16)
    with DockerSandbox(SandboxSpec(limits=limits)) as box:
        yield box


def test_container_is_locked_down(docker_box: DockerSandbox) -> None:
    docker_box.container.reload()
    host = docker_box.container.attrs["HostConfig"]
    config = docker_box.container.attrs["Config"]
    assert host["NetworkMode"] == "none"
    assert host["Memory"] == 200 << 20 and host["MemorySwap"] == 200 << 20  # swap off
    assert host["NanoCpus"] == 500_000_000 and host["PidsLimit"] == 77
    assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["ReadonlyRootfs"] is True and not host["Privileged"]
    assert host["Tmpfs"]["/tmp"].startswith("size=16m")
    assert config["User"] == f"{SANDBOX_UID}:{SANDBOX_UID}"
    assert config["Labels"][LABEL] == "1" and config["Labels"][f"{LABEL}.owner"] == owner_tag()
    assert not config.get("Env") or all(not key.endswith("_KEY") for key in config["Env"])


def test_only_the_workspace_is_bound_writable(docker_box: DockerSandbox) -> None:
    docker_box.container.reload()
    mounts = {m["Destination"]: m for m in docker_box.container.attrs["Mounts"]}
    writable = sorted(dest for dest, mount in mounts.items() if mount["RW"])
    assert writable == ["/workspace"]
    assert mounts["/workspace"]["Source"] == str(docker_box.workspace.path)


def test_prewarmed_sandboxes_are_handed_out_once_and_drained() -> None:
    require_backend("docker")
    spec = SandboxSpec(limits=Limits(pids=99))
    backend = DockerBackend()
    backend.prewarm(spec, 3)
    names = {c.name for c in sandbox_containers(owner_tag())
             if c.attrs["HostConfig"]["PidsLimit"] == 99}
    assert len(names) == 3
    with backend.open(spec) as first, backend.open(spec) as second:
        assert {first.container.name, second.container.name} <= names
        assert first.container.name != second.container.name
        assert first.exec("echo warm").stdout == "warm\n"
    backend.drain()
    left = {c.name for c in sandbox_containers(owner_tag())}
    assert not names & left


def test_dead_container_is_a_broken_sandbox() -> None:
    require_backend("docker")
    box = DockerSandbox(SandboxSpec())
    try:
        box.container.kill()
        with pytest.raises(SandboxBroken):
            box.exec("true")
    finally:
        box.close()
    assert box.container.name not in {c.name for c in sandbox_containers(owner_tag())}


def test_missing_image_is_unavailable_and_leaves_nothing(tmp_path) -> None:
    require_backend("docker")
    before = set(Path(tempfile.gettempdir()).glob(f"{LABEL}-docker-*"))
    with pytest.raises(BackendUnavailable, match="sabench-no-such-image:0"):
        DockerSandbox(SandboxSpec(image="sabench-no-such-image:0"))
    assert set(Path(tempfile.gettempdir()).glob(f"{LABEL}-docker-*")) <= before


def test_unreachable_engine_is_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/sabench-docker.sock")
    monkeypatch.setattr(docker_backend, "_client", None)  # forget the cached live client
    ok, why = DockerBackend().available()
    assert not ok and "docker engine unavailable" in why
    with pytest.raises(BackendUnavailable):
        open_sandbox(SandboxSpec(backend="docker"))
