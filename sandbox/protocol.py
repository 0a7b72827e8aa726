"""The Sandbox protocol, the backend registry and `open_sandbox`.

Usage::

    with open_sandbox(SandboxSpec(backend="docker")) as box:
        box.write_file("main.py", "print(1 + 1)")
        result = box.exec(["python3", "main.py"], timeout=30)

A backend is one module exposing a class that satisfies `Backend`; registering it is one line in
`BACKENDS` (done lazily so importing this module never needs docker or bubblewrap).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from sabench.sandbox.copyout import CopyReport
from sabench.sandbox.types import BackendUnavailable, ExecResult, SandboxSpec

Command = str | Sequence[str]


@runtime_checkable
class Sandbox(Protocol):
    """One isolated place to run commands, with a writable workspace at /workspace."""

    spec: SandboxSpec

    def exec(self, cmd: Command, *, cwd: str | None = None, env: Mapping[str, str] | None = None,
             timeout: float | None = None, stdin: str | bytes | None = None,
             raise_on_timeout: bool = False) -> ExecResult:
        """Run a command (a string goes through /bin/sh -c) and wait for it.

        Args:
            cmd: argv list, or a shell string.
            cwd: working directory inside the sandbox (relative = under /workspace).
            env: variables added to the fixed base environment; nothing comes from the host.
            timeout: seconds before the command and all its children are killed.
            stdin: data fed to the command's standard input (empty when None).
            raise_on_timeout: raise CommandTimeout instead of returning a timed-out result.
        """
        ...

    def write_file(self, path: str, data: str | bytes) -> None:
        """Write a file in the workspace (parents created)."""
        ...

    def read_file(self, path: str) -> bytes:
        """Read a workspace file; FileNotFoundError when it does not exist."""
        ...

    def copy_in(self, src: Path, dest: str = ".") -> None:
        """Copy a host directory's contents into the workspace."""
        ...

    def copy_out(self, dest: Path, src: str = ".") -> CopyReport:
        """Rebuild a workspace directory on the host from regular files and folders; links
        that stay inside it come back as relative links, anything else is skipped and listed
        (see `copyout.py`)."""
        ...

    def close(self) -> None:
        """Kill everything in the sandbox and remove it; safe to call twice."""
        ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(self, *exc: object) -> None: ...


class Backend(Protocol):
    """A way of making sandboxes."""

    name: str

    def available(self, spec: SandboxSpec | None = None) -> tuple[bool, str]:
        """Whether this backend can open `spec` here, and a one-line reason."""
        ...

    def open(self, spec: SandboxSpec) -> Sandbox:
        """Create and start a sandbox (raises BackendUnavailable when it cannot)."""
        ...


#: name -> "module:attribute" of the backend class (imported on first use).
BACKENDS: dict[str, str] = {
    "docker": "sabench.sandbox.docker_backend:DockerBackend",
    "local": "sabench.sandbox.local_backend:LocalBackend",
}


def get_backend(name: str) -> Backend:
    """The backend registered under `name`."""
    if name not in BACKENDS:
        raise BackendUnavailable(f"unknown sandbox backend {name!r} (known: {', '.join(BACKENDS)})")
    module_name, attr = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module_name), attr)()


def open_sandbox(spec: SandboxSpec | None = None) -> Sandbox:
    """Open a sandbox as described by `spec`; use it as a context manager so it is removed."""
    spec = spec or SandboxSpec()
    return get_backend(spec.backend).open(spec)
