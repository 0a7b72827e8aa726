"""Value types and errors shared by every sandbox backend.

A sandbox is described by a `SandboxSpec` (backend, image, limits, extra mounts, network) and
every command run in it yields an `ExecResult`. A command that exits non-zero is a normal result;
only problems with the sandbox itself (backend missing, sandbox broken) or an explicitly checked
timeout raise, each with its own error type.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Where the writable workspace appears inside every sandbox.
WORKSPACE = "/workspace"
#: The unprivileged uid/gid that sandboxed code runs as (docker image user and local backend).
SANDBOX_UID = 10001
SANDBOX_GID = 10001
#: Label put on every container (and prefix of every cgroup/temp dir) so the reaper finds them.
LABEL = "sabench.sandbox"
#: The fixed environment every command starts from; nothing is ever inherited from the host.
BASE_ENV: dict[str, str] = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}

BackendName = Literal["docker", "local"]


class SandboxError(Exception):
    """Base of every error the sandbox raises."""


class BackendUnavailable(SandboxError):
    """The backend cannot run here (no Docker engine, no image, no bubblewrap, ...)."""


class SandboxBroken(SandboxError):
    """The sandbox stopped working (container gone, process unkillable); it must be discarded."""


class CommandTimeout(SandboxError):
    """A command ran past its timeout (raised only when the caller asks for it).

    Attributes:
        result: what the command produced before it was killed (``timed_out`` is True).
    """

    def __init__(self, result: ExecResult) -> None:
        super().__init__(f"command timed out after {result.duration:.1f}s: {result.command}")
        self.result = result


class UnsafeExecutionRefused(BackendUnavailable):
    """Bubblewrap is missing and the caller did not explicitly allow unisolated execution."""


class Limits(BaseModel):
    """Resource limits of one sandbox (applied to everything running in it)."""

    model_config = ConfigDict(frozen=True)

    memory_mb: int = Field(default=1024, ge=16, description="RAM of the whole sandbox, no swap")
    cpus: float = Field(default=1.0, gt=0, description="CPU quota in cores")
    pids: int = Field(default=256, ge=8, description="maximum number of processes/threads")
    tmp_mb: int = Field(default=256, ge=1, description="size of the private tmpfs /tmp")
    timeout_s: float = Field(default=60.0, gt=0, description="default per-command timeout")
    output_bytes: int = Field(default=1 << 20, ge=1024, description="bytes kept per stream")
    flood_bytes: int = Field(
        default=64 << 20, ge=1024, description="total output after which the command is killed")
    copy_out_bytes: int = Field(default=1 << 30, ge=1,
                                description="total size a copy-out may bring back")
    copy_out_files: int = Field(default=100_000, ge=1,
                                description="number of files a copy-out may bring back")


class Mount(BaseModel):
    """An extra host directory bound into the sandbox (read-only unless said otherwise).

    The sandbox runs as uid `SANDBOX_UID`, so the directory must be readable (and, for a
    writable mount, writable) by that uid.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    target: str
    read_only: bool = True

    @field_validator("target")
    @classmethod
    def _absolute(cls, value: str) -> str:
        path = PurePosixPath(value)
        if not path.is_absolute() or ".." in path.parts:
            raise ValueError(f"mount target must be an absolute path without '..': {value!r}")
        return str(path)


class SandboxSpec(BaseModel):
    """Everything needed to open a sandbox.

    Attributes:
        backend: "docker" (container per sandbox) or "local" (bubblewrap).
        image: docker image; None means the offline image built by `sabench sandbox build`.
        limits: resource limits.
        mounts: extra host directories bound in (the workspace is always private).
        network: False (default) gives the sandbox nothing but its own loopback.
        allow_unsafe: local backend only; run without isolation when bubblewrap is missing.
        workspace_aliases: absolute paths where the workspace is mounted a second time, so
            agents can use fixed paths such as /home/paper and /home/submission (both name
            /workspace's folders; nothing else of the host appears there).
    """

    model_config = ConfigDict(frozen=True)

    backend: BackendName = "docker"
    image: str | None = None
    limits: Limits = Limits()
    mounts: tuple[Mount, ...] = ()
    network: bool = False
    allow_unsafe: bool = False
    workspace_aliases: tuple[str, ...] = ()

    @field_validator("workspace_aliases")
    @classmethod
    def _aliases_absolute(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            path = PurePosixPath(value)
            if not path.is_absolute() or ".." in path.parts or str(path) in ("/", WORKSPACE):
                raise ValueError(f"workspace alias must be an absolute path other than / and "
                                 f"{WORKSPACE}, without '..': {value!r}")
        return tuple(str(PurePosixPath(value)) for value in values)


class ExecResult(BaseModel):
    """The outcome of one command; a non-zero exit code is data, not an error."""

    model_config = ConfigDict(frozen=True)

    command: str
    exit_code: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    oom_killed: bool = False
    truncated: bool = False
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the command exited 0 on its own."""
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed
